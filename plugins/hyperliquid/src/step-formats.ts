import type { JsonSchema } from '@pontis/core/plugin'

/**
 * The step item format Hyperliquid core serves (the intents document's `HyperliquidActionData`): a user-signed action to sign and post to the exchange.
 */
export const HYPERLIQUID_STEP_FORMATS: Readonly<Record<string, JsonSchema>> = {
  'hyperliquid-action': {
    type: 'object',
    required: ['format', 'chainId', 'action', 'nonce'],
    properties: {
      format: {
        type: 'string',
        const: 'hyperliquid-action',
      },
      chainId: {
        type: 'integer',
        minimum: 1,
        maximum: 9007199254740991,
      },
      action: {
        type: 'object',
        required: ['type'],
        additionalProperties: true,
        properties: {
          type: {
            type: 'string',
          },
        },
      },
      nonce: {
        type: 'integer',
        minimum: 0,
      },
    },
  },
}
