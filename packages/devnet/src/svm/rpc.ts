/**
 * A Solana JSON-RPC server backed by LiteSVM: the chain of the SVM devnet. It speaks the RPC methods
 * @solana/web3.js `Connection` and the SVM chain plugin use, in the documented shapes, executes
 * every transaction in a slot of its own and reports commitments by slot depth (see
 * `rpc/ledger.ts`). The implementation lives in `rpc/`; this module is its public face.
 */
import { SvmLedger, type SvmLedgerOptions } from './rpc/ledger.js'
import { type RpcServerOptions, type SvmRpcServer, startRpcServer } from './rpc/server.js'

export { RPC_ERROR, RpcError, type TransactionErrorJson } from './rpc/errors.js'
export { disableAllocationSitePretenuring, releaseX87Stack } from './rpc/fpu.js'
export {
  type Commitment,
  type CompiledInnerInstruction,
  DEFAULT_FAUCET_LAMPORTS,
  type InnerInstructions,
  LAMPORTS_PER_SIGNATURE,
  MAX_BLOCKHASH_AGE,
  MAX_SLOTS_PER_ADVANCE,
  MAX_TRANSACTION_SIZE,
  type RecordedTransaction,
  type ReturnData,
  type SimulateOptions,
  type SimulationOutcome,
  SvmLedger,
  type SvmLedgerOptions,
  type TokenBalance,
} from './rpc/ledger.js'
export { SVM_DEVNET_CORE_VERSION, SVM_DEVNET_FEATURE_SET } from './rpc/methods.js'
export type { SvmRpcServer } from './rpc/server.js'
export { TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS, type UiTokenAmount } from './rpc/token.js'

/** Options of {@link startSvmRpcServer}: where to serve, and the ledger's commitment depths and faucet. */
export interface SvmRpcServerOptions
  extends Omit<RpcServerOptions, 'ledger' | 'log'>,
    Pick<SvmLedgerOptions, 'confirmedDepth' | 'finalizedDepth' | 'faucet'> {
  /** Receives a line per dropped transaction and per internal error. */
  log?: (message: string) => void
}

/**
 * Starts a LiteSVM ledger and serves it over JSON-RPC.
 *
 * @throws Error when the port cannot be bound or an option is invalid (negative depth, confirmed
 *   deeper than finalized).
 */
export async function startSvmRpcServer(options: SvmRpcServerOptions = {}): Promise<SvmRpcServer> {
  const ledger = new SvmLedger({
    confirmedDepth: options.confirmedDepth,
    finalizedDepth: options.finalizedDepth,
    faucet: options.faucet,
    log: options.log,
  })
  return startRpcServer({
    ledger,
    host: options.host,
    port: options.port,
    slotIntervalMs: options.slotIntervalMs,
    log: options.log,
  })
}
