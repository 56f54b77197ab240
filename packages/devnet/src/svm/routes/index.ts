/**
 * The SVM route simulator: a deterministic stand-in for the aggregator's v1 swap API (`/quote`,
 * `/swap-instructions`, `/program-id-to-label`) whose routes are plain SPL Token instructions that
 * really execute on the devnet. See README.md in this folder.
 */
export * from './api.js'
export {
  planSwap,
  poolInputVault,
  poolOutputVault,
  type SwapPlan,
  type SwapPlanOptions,
  swapInstructionsResponse,
  toApiInstruction,
  type VaultFunding,
} from './instructions.js'
export { type ConnectionLedgerOptions, connectionLedger, type RouteLedger, VaultFunder } from './ledger.js'
export * from './pools.js'
export * from './routing.js'
export * from './server.js'
