import type { JsonSchema } from '@pontis/core'

/**
 * The step item formats EVM chains serve (the intents document's `EvmTransactionData` and `SignatureData`): a transaction to send, and an EIP-3009 authorization to sign and post to the execute API.
 */
export const EVM_STEP_FORMATS: Readonly<Record<string, JsonSchema>> = {
  'evm-transaction': {
    type: 'object',
    required: ['format', 'to', 'data', 'value', 'chainId'],
    properties: {
      format: {
        type: 'string',
        const: 'evm-transaction',
      },
      from: {
        type: 'string',
        pattern: '^0x[a-fA-F0-9]{40}$',
      },
      to: {
        type: 'string',
        pattern: '^0x[a-fA-F0-9]{40}$',
      },
      data: {
        type: 'string',
        pattern: '^0x[0-9a-fA-F]*$',
      },
      value: {
        type: 'string',
        pattern: '^[0-9]+$',
        maxLength: 78,
        format: 'uint256',
      },
      chainId: {
        type: 'integer',
        minimum: 1,
        maximum: 9007199254740991,
      },
      gas: {
        type: 'string',
        pattern: '^[0-9]+$',
        maxLength: 78,
        format: 'uint256',
      },
      maxFeePerGas: {
        type: 'string',
        pattern: '^[0-9]+$',
        maxLength: 78,
        format: 'uint256',
      },
      maxPriorityFeePerGas: {
        type: 'string',
        pattern: '^[0-9]+$',
        maxLength: 78,
        format: 'uint256',
      },
    },
  },
  signature: {
    type: 'object',
    required: ['format', 'sign', 'post'],
    properties: {
      format: {
        type: 'string',
        const: 'signature',
      },
      sign: {
        oneOf: [
          {
            type: 'object',
            required: ['signatureKind', 'message'],
            properties: {
              signatureKind: {
                type: 'string',
                const: 'eip191',
              },
              message: {
                type: 'string',
              },
            },
          },
          {
            type: 'object',
            required: ['signatureKind', 'domain', 'types', 'primaryType', 'value'],
            properties: {
              signatureKind: {
                type: 'string',
                const: 'eip712',
              },
              domain: {
                type: 'object',
                properties: {
                  name: {
                    type: 'string',
                  },
                  version: {
                    type: 'string',
                  },
                  chainId: {
                    type: 'integer',
                    minimum: 1,
                    maximum: 9007199254740991,
                  },
                  verifyingContract: {
                    type: 'string',
                    pattern: '^0x[a-fA-F0-9]{40}$',
                  },
                  salt: {
                    type: 'string',
                    pattern: '^0x[0-9a-fA-F]{64}$',
                  },
                },
              },
              types: {
                type: 'object',
                additionalProperties: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['name', 'type'],
                    properties: {
                      name: {
                        type: 'string',
                      },
                      type: {
                        type: 'string',
                      },
                    },
                  },
                },
              },
              primaryType: {
                type: 'string',
              },
              value: {
                type: 'object',
                additionalProperties: true,
              },
            },
          },
        ],
      },
      post: {
        type: 'object',
        required: ['endpoint', 'method', 'body'],
        properties: {
          endpoint: {
            type: 'string',
            pattern: '^/',
            maxLength: 2048,
          },
          method: {
            type: 'string',
            enum: ['POST'],
          },
          body: {
            type: 'object',
            additionalProperties: false,
            required: ['kind', 'requestId'],
            properties: {
              kind: {
                type: 'string',
                minLength: 1,
                maxLength: 64,
              },
              requestId: {
                type: 'string',
                pattern: '^0x[0-9a-fA-F]{64}$',
              },
              api: {
                type: 'string',
                enum: ['bridge', 'swap', 'user-swap'],
              },
            },
          },
        },
      },
    },
  },
}
