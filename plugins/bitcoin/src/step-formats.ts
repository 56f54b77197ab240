import type { JsonSchema } from '@pontis/core/plugin'

/**
 * The step item format Bitcoin chains serve (the intents document's `BitcoinPsbtData`): an unsigned PSBT to sign, finalize and broadcast.
 */
export const BITCOIN_STEP_FORMATS: Readonly<Record<string, JsonSchema>> = {
  'bitcoin-psbt': {
    type: 'object',
    required: ['format', 'psbt', 'chainId'],
    properties: {
      format: {
        type: 'string',
        const: 'bitcoin-psbt',
      },
      psbt: {
        type: 'string',
        pattern: '^([0-9a-fA-F]{2})*$',
      },
      chainId: {
        type: 'integer',
        minimum: 1,
        maximum: 9007199254740991,
      },
    },
  },
}
