import { type JsonSchema, SIGNATURE_STEP_FORMAT } from '@pontis/core/plugin'

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
  signature: SIGNATURE_STEP_FORMAT,
}
