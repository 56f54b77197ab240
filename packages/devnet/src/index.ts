/**
 * @pontis/devnet: local anvil chains with the Pontis depository, the hub oracle contract and a
 * USDC-like stablecoin, for the `local` environment and for tests. The solc-based compiler lives in
 * `scripts/compile.ts` and is not exported (solc is a development dependency).
 */
export * from './accounts.js'
export * from './anvil.js'
export * from './artifacts.js'
export * from './devnet.js'
export * from './hub.js'
