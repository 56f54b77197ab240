/**
 * Options of a __TITLE__ chain entry's `plugin` member, their JSON Schema (the registry applies its
 * defaults), and the family's constants.
 */

/** The prefix every __TITLE__ address and currency id starts with. */
export const __CONSTANT___PREFIX = '__NAME__:'

/** The native currency's id: the prefix and 40 zeros. */
export const __CONSTANT___NATIVE_CURRENCY_ID = `${__CONSTANT___PREFIX}${'0'.repeat(40)}`

/** Work units of a deposit and of a fill, in the family's own unit. */
export const __CONSTANT___UNITS = { deposit: 50_000n, fill: 30_000n } as const

/** Options of a __TITLE__ chain entry's `plugin` member. */
export interface __PASCAL__PluginConfig {
  /** Blocks (1 = included) before a fact counts for `fast` reads. Default 1. */
  readonly fastConfirmations: number
  /** Blocks before a fact counts as final (`slow` reads). Default 2. */
  readonly confirmations: number
  /** Price of one unit of work, smallest native unit. Default 1. */
  readonly unitPrice: number
}

/** JSON Schema of {@link __PASCAL__PluginConfig}. */
export const __CAMEL__ConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    fastConfirmations: { type: 'integer', minimum: 1, default: 1 },
    confirmations: { type: 'integer', minimum: 1, default: 2 },
    unitPrice: { type: 'integer', minimum: 0, default: 1 },
  },
} as const
