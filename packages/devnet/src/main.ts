/**
 * Starts the devnet on the default ports (31337 on 8545, 31338 on 8546) and keeps it running until
 * SIGINT/SIGTERM. Run: `npm start -w @pontis/devnet`.
 */
import { DEVNET_ACCOUNTS } from './accounts.js'
import { startDevnet } from './devnet.js'

const log = (message: string): void => console.log(`[devnet] ${message}`)
try {
  const devnet = await startDevnet({ log })
  for (const chain of devnet.chains) {
    log(
      `chain ${chain.chainId} ${chain.rpcUrl} stablecoin ${chain.contracts.stablecoin} depository ${chain.contracts.depository} multicaller ${chain.contracts.multicaller} oracle hub ${chain.contracts.oracleHub} deposit receiver ${chain.contracts.depositReceiver}`,
    )
  }
  log(
    `solver ${DEVNET_ACCOUNTS.solver.address}, allocator ${DEVNET_ACCOUNTS.allocator.address}, oracle signer ${DEVNET_ACCOUNTS.oracleSigner.address}`,
  )
  log('ready (Ctrl-C to stop)')
  const shutdown = async (): Promise<void> => {
    await devnet.stop()
    process.exit(0)
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
} catch (error) {
  console.error(`[devnet] start-up failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
}
