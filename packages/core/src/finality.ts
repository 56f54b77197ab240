/**
 * The confirmation depth the service waits for on a chain: the family's own rule
 * ({@link FinalityPolicy}) and the chain entry's `finality` (per chain, and per currency above an
 * amount), the deeper of them. Family-neutral: every family's chains take the same config.
 */
import type { RegisteredChain } from './registry.js'

/** Blocks (1 = included) a fill or refund sent on `chain` must reach before it counts as final. */
export function settlementConfirmations(chain: RegisteredChain): number {
  return Math.max(chain.adapter.finality.slowConfirmations, chain.entry.finality?.confirmations ?? 1)
}

/**
 * Blocks (1 = included) a deposit of `amount` in `currencyId` on `chain` must reach before it is
 * acted on: the family's rule for the amount, the chain's depth, and the deepest high-value rule of
 * the currency that the amount is above.
 */
export function depositConfirmations(chain: RegisteredChain, currencyId: string, amount: bigint): number {
  const { finality, identity } = chain.adapter
  let needed = Math.max(
    settlementConfirmations(chain),
    finality.confirmationsFor?.(currencyId, amount) ?? finality.slowConfirmations,
  )
  const rules = chain.entry.finality?.highValue ?? []
  if (rules.length === 0) return needed
  const currency = sameCurrency((value) => identity.normalizeCurrency(value), currencyId)
  for (const rule of rules) {
    if (amount > BigInt(rule.above) && currency(rule.currency)) needed = Math.max(needed, rule.confirmations)
  }
  return needed
}

/** Compares currency ids in the family's normal form; an id the family refuses matches nothing. */
function sameCurrency(normalize: (value: string) => string, currencyId: string) {
  const normal = (value: string): string | undefined => {
    try {
      return normalize(value)
    } catch {
      return undefined
    }
  }
  const wanted = normal(currencyId)
  return (other: string): boolean => wanted !== undefined && normal(other) === wanted
}
