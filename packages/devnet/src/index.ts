/**
 * @pontis/devnet: local anvil chains with the Pontis depository, the hub oracle contract and a
 * USDC-like stablecoin, Chainlink-interface price feeds and a Uniswap v3 deployment with seeded pools, for the `local` environment and for tests. The solc-based compiler lives in
 * `scripts/compile.ts` and is not exported (solc is a development dependency).
 */
export * from './accounts.js'
export * from './anvil.js'
export * from './artifacts.js'
export * from './bitcoin/index.js'
export * from './devnet.js'
export * from './dex.js'
export * from './faults.js'
export * from './hub.js'
export * from './hyperliquid/index.js'
export * from './lighter/index.js'
export * from './prices/hermes.js'
export * from './svm/accounts.js'
export {
  type SvmDevnet,
  type SvmDevnetOptions,
  startSvmDevnet,
  svmAssociatedTokenAddress,
} from './svm/devnet.js'
export { type SvmFaultPowers, svmFaultPowers } from './svm/faults.js'
export {
  connectionLedger,
  type RouteLedger,
  type RouteSimulator,
  SVM_CONSERVATIVE_LABEL,
  SVM_ROUTE_LABELS,
  startRouteSimulator,
} from './svm/routes/index.js'
export * from './tron/index.js'
export * from './zeroex.js'
