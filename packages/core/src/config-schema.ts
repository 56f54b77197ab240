/**
 * JSON Schemas (draft 2020-12) of the two config files. Core checks the family-neutral shape
 * only; addresses are checked by the family's adapter and `plugin` options by the plugin's schema.
 */

import type { JsonSchema } from './validation.js'

const nonEmptyString = { type: 'string', minLength: 1 } as const
const httpUrl = { type: 'string', pattern: '^https?://\\S+$' } as const
const anyRpcUrl = { type: 'string', pattern: '^(https?|wss?)://\\S+$' } as const
const wsUrl = { type: 'string', pattern: '^wss?://\\S+$' } as const
/** An image: an absolute http(s) URL, or a path on the deployment itself (`/icons/currencies/eth.svg`). */
const imageUrl = { type: 'string', pattern: '^(https?://\\S+|/[^/\\s]\\S*)$' } as const
const chainId = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const
const fee = { type: 'number', minimum: 0 } as const
/** A smallest-unit amount or a block height: decimal digits, no sign. */
const decimalAmount = { type: 'string', pattern: '^(0|[1-9][0-9]{0,77})$' } as const
const confirmations = { type: 'integer', minimum: 1, maximum: 10_000 } as const

/** Chain names are lower-case slugs: they are ids in protocol messages. */
export const CHAIN_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]*$'
/** vmType values are lower-case words such as `evm`, `svm`, `hypevm`. */
export const VM_TYPE_PATTERN = '^[a-z][a-z0-9-]*$'

const currencyEntry = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'symbol', 'name', 'address', 'decimals'],
  properties: {
    id: nonEmptyString,
    symbol: nonEmptyString,
    name: nonEmptyString,
    address: nonEmptyString,
    decimals: { type: 'integer', minimum: 0, maximum: 255 },
    supportsBridging: { type: 'boolean' },
    metadata: {
      type: 'object',
      additionalProperties: false,
      properties: {
        logoURI: imageUrl,
        verified: { type: 'boolean' },
        isNative: { type: 'boolean' },
      },
    },
    withdrawalFee: fee,
    depositFee: fee,
    surgeEnabled: { type: 'boolean' },
  },
} as const

const contracts = {
  type: 'object',
  properties: {
    v3: {
      type: 'object',
      additionalProperties: false,
      properties: { erc20Router: nonEmptyString, approvalProxy: nonEmptyString },
    },
  },
  // Families name their own helper contracts; every one is an address string.
  additionalProperties: nonEmptyString,
} as const

/** One item of `chains` in `chains.<ENVIRONMENT>.json`. */
export const chainEntrySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'displayName', 'vmType', 'currency', 'rpc'],
  properties: {
    id: chainId,
    name: { type: 'string', pattern: CHAIN_NAME_PATTERN },
    displayName: nonEmptyString,
    vmType: { type: 'string', pattern: VM_TYPE_PATTERN },
    httpRpcUrl: httpUrl,
    wsRpcUrl: wsUrl,
    explorerUrl: httpUrl,
    explorerName: nonEmptyString,
    depositEnabled: { type: 'boolean', default: true },
    tokenSupport: nonEmptyString,
    disabled: { type: 'boolean', default: false },
    partialDisableLimit: { type: 'number', minimum: 0 },
    blockProductionLagging: { type: 'boolean' },
    currency: currencyEntry,
    withdrawalFee: fee,
    depositFee: fee,
    surgeEnabled: { type: 'boolean' },
    featuredTokens: { type: 'array', items: currencyEntry },
    currencies: { type: 'array', items: currencyEntry },
    solverCurrencies: { type: 'array', items: currencyEntry },
    iconUrl: imageUrl,
    contracts,
    baseChainId: chainId,
    solverAddresses: { type: 'array', items: nonEmptyString },
    tags: { type: 'array', items: nonEmptyString },
    protocol: {
      type: 'object',
      additionalProperties: false,
      properties: {
        v2: {
          type: 'object',
          additionalProperties: false,
          required: ['chainId', 'depository'],
          properties: { chainId: nonEmptyString, depository: nonEmptyString },
        },
      },
    },
    rpc: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: anyRpcUrl,
        wsUrl,
        fallbackUrls: { type: 'array', items: anyRpcUrl },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        timeoutMs: { type: 'integer', minimum: 1 },
      },
    },
    // Checked by the family's plugin schema.
    plugin: { type: 'object' },
    finality: {
      type: 'object',
      additionalProperties: false,
      properties: {
        confirmations,
        highValue: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['currency', 'above', 'confirmations'],
            properties: { currency: nonEmptyString, above: decimalAmount, confirmations },
          },
        },
      },
    },
    indexer: {
      type: 'object',
      additionalProperties: false,
      properties: { startBlock: decimalAmount },
    },
  },
} as const satisfies JsonSchema

/** `chains.<ENVIRONMENT>.json`. */
export const chainsFileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['plugins', 'chains'],
  properties: {
    $schema: { type: 'string' },
    $comment: { type: 'string' },
    plugins: {
      type: 'object',
      propertyNames: { pattern: VM_TYPE_PATTERN },
      additionalProperties: nonEmptyString,
    },
    chains: { type: 'array', items: chainEntrySchema },
  },
} as const satisfies JsonSchema

/** `chains.hub.<ENVIRONMENT>.json`: every member of the oracle's EIP-712 signing domain. */
export const hubFileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['hub'],
  properties: {
    $schema: { type: 'string' },
    $comment: { type: 'string' },
    hub: {
      type: 'object',
      additionalProperties: false,
      required: ['chainId', 'name', 'oracleContract', 'domain'],
      properties: {
        chainId,
        name: { type: 'string', pattern: CHAIN_NAME_PATTERN },
        // The EIP-712 verifyingContract is a 20-byte address whatever the family of the chains.
        oracleContract: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' },
        domain: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'version'],
          properties: { name: nonEmptyString, version: nonEmptyString },
        },
      },
    },
  },
} as const satisfies JsonSchema
