import type { JsonSchema } from './validation.js'

/**
 * The `signature` step format (the intents document's `SignatureData`): a message the user signs and
 * posts to the execute API, which the service redeems. It belongs to the service's execute API, not
 * to one family: any family whose deposits can be authorized by a signed message serves it, and
 * declares it with the permit kinds it accepts.
 */
export const SIGNATURE_STEP_FORMAT: JsonSchema = {
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
}
