import type { JsonSchema } from '@pontis/core/plugin'

/**
 * The step item format Tron chains serve (the intents document's `TronTransactionData`): a node-built transaction to sign and broadcast.
 */
export const TRON_STEP_FORMATS: Readonly<Record<string, JsonSchema>> = {
  'tron-transaction': {
    type: 'object',
    required: ['format', 'chainId', 'transaction'],
    properties: {
      format: {
        type: 'string',
        const: 'tron-transaction',
      },
      chainId: {
        type: 'integer',
        minimum: 1,
        maximum: 9007199254740991,
      },
      transaction: {
        type: 'object',
        required: ['txID', 'raw_data_hex'],
        properties: {
          txID: {
            type: 'string',
            pattern: '^[0-9a-fA-F]{64}$',
          },
          raw_data: {
            type: 'object',
            additionalProperties: true,
          },
          raw_data_hex: {
            type: 'string',
            pattern: '^[0-9a-fA-F]+$',
          },
          visible: {
            type: 'boolean',
          },
        },
      },
    },
  },
}
