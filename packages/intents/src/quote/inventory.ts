import type { Registry } from '@pontis/core'
import type { InventoryTarget } from './settings.js'

/** Finds the solver's inventory target for a currency on a chain. */
export type InventoryLookup = (chainId: number, currencyId: string) => InventoryTarget | undefined

/**
 * The inventory targets by chain and canonical currency id: each target's currency is normalized by
 * its chain's identity, so ids compare the way the family compares them (case-sensitive on SVM,
 * checksummed on EVM) rather than by lower-casing. Targets on chains not served are left out.
 * @throws PontisError the identity's error for a currency id the chain does not accept.
 */
export function inventoryLookup(registry: Registry, inventory: readonly InventoryTarget[]): InventoryLookup {
  const targets = new Map<string, InventoryTarget>()
  const key = (chainId: number, currencyId: string) => `${chainId}:${currencyId}`
  for (const target of inventory) {
    const chain = registry.tryChain(target.chainId)
    if (!chain) continue
    targets.set(key(chain.id, chain.adapter.identity.normalizeCurrency(target.currency, 'currency')), target)
  }
  return (chainId, currencyId) => targets.get(key(chainId, currencyId))
}
