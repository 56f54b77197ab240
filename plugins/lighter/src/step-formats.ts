import type { JsonSchema } from '@pontis/core/plugin'

/**
 * The step item format the venue serves (the intents document's `LighterTransferData`): a transfer to sign with an API key and submit.
 */
export const LIGHTER_STEP_FORMATS: Readonly<Record<string, JsonSchema>> = {
  'lighter-transfer': {
    type: 'object',
    required: ['format', 'chainId', 'action'],
    properties: {
      format: {
        type: 'string',
        const: 'lighter-transfer',
      },
      chainId: {
        type: 'integer',
        minimum: 1,
        maximum: 9007199254740991,
      },
      action: {
        type: 'object',
        required: ['type', 'parameters'],
        properties: {
          type: {
            type: 'string',
            const: 'transfer',
          },
          parameters: {
            type: 'object',
            required: [
              'toAccountIndex',
              'assetIndex',
              'fromRouteType',
              'toRouteType',
              'amount',
              'usdcFee',
              'memo',
            ],
            properties: {
              toAccountIndex: {
                type: 'integer',
                minimum: 0,
              },
              assetIndex: {
                type: 'integer',
                minimum: 0,
              },
              fromRouteType: {
                type: 'integer',
                minimum: 0,
              },
              toRouteType: {
                type: 'integer',
                minimum: 0,
              },
              amount: {
                type: 'integer',
                minimum: 1,
              },
              usdcFee: {
                type: 'integer',
                minimum: 0,
              },
              memo: {
                type: 'string',
                pattern: '^0x[0-9a-fA-F]+$',
              },
            },
          },
        },
      },
    },
  },
}
