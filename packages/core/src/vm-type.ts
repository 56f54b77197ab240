/**
 * Family ids. Their own module because both the chain records (`chains.ts`) and the plugin
 * contract (`plugin.ts`) name them, and neither may import the other.
 */

/** The families this interface knows: EVM, Solana VM, Bitcoin, Lighter, Hyperliquid, Tron, TON. */
export type KnownVmType = 'evm' | 'svm' | 'bvm' | 'lvm' | 'hypevm' | 'tvm' | 'tonvm'

/** The known families, in the order above. */
export const KNOWN_VM_TYPES: readonly KnownVmType[] = Object.freeze([
  'evm',
  'svm',
  'bvm',
  'lvm',
  'hypevm',
  'tvm',
  'tonvm',
])

/** A family id: a known one, or any lower-case word a plugin author picks for a new family. */
export type VmType = KnownVmType | (string & {})
