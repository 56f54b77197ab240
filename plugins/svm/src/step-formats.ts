import type { JsonSchema } from '@pontis/core/plugin'

/**
 * The step item format SVM chains serve (the intents document's `SvmTransactionData`): a compiled versioned transaction, measured against the wire-size limit.
 */
export const SVM_STEP_FORMATS: Readonly<Record<string, JsonSchema>> = {
  'svm-transaction': {
    type: 'object',
    required: ['format', 'transaction', 'chainId', 'size', 'sizeLimit', 'headroom'],
    properties: {
      format: {
        type: 'string',
        const: 'svm-transaction',
      },
      transaction: {
        type: 'string',
        pattern: '^[A-Za-z0-9+/]*={0,2}$',
        maxLength: 1644,
      },
      chainId: {
        type: 'integer',
        minimum: 1,
        maximum: 9007199254740991,
      },
      instructions: {
        type: 'array',
        items: {
          type: 'object',
          required: ['programId', 'keys', 'data'],
          properties: {
            programId: {
              type: 'string',
              minLength: 1,
              maxLength: 128,
              pattern: '^\\S+$',
            },
            keys: {
              type: 'array',
              items: {
                type: 'object',
                required: ['pubkey', 'isSigner', 'isWritable'],
                properties: {
                  pubkey: {
                    type: 'string',
                    minLength: 1,
                    maxLength: 128,
                    pattern: '^\\S+$',
                  },
                  isSigner: {
                    type: 'boolean',
                  },
                  isWritable: {
                    type: 'boolean',
                  },
                },
              },
            },
            data: {
              type: 'string',
              pattern: '^([0-9a-fA-F]{2})*$',
            },
          },
        },
      },
      addressLookupTableAddresses: {
        type: 'array',
        items: {
          type: 'string',
          minLength: 1,
          maxLength: 128,
          pattern: '^\\S+$',
        },
      },
      size: {
        type: 'integer',
        minimum: 1,
        maximum: 1232,
      },
      sizeLimit: {
        type: 'integer',
        const: 1232,
      },
      headroom: {
        type: 'integer',
        minimum: 0,
        maximum: 1231,
      },
    },
  },
}
