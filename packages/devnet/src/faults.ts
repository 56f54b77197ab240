/**
 * Chain faults on demand, for tests of the lifecycle under them: reorganisations, blocks that stop
 * coming, transactions dropped from the mempool, fee spikes.
 *
 * {@link FaultPowers} is what every family's devnet offers; the EVM one ({@link evmFaultPowers})
 * drives anvil's own methods. The SVM, Bitcoin and Tron simulators implement the same interface
 * (`svm/faults.ts`, `bitcoin/faults.ts`, `tron/faults.ts`), each with what its chain can suffer (a
 * family whose fees do not spike implements {@link FaultPowers} without {@link FeeMarketFaults}).
 */
import { createPublicClient, type Hex, http, isHex, numberToHex } from 'viem'

/** Faults every family's devnet can cause. Heights are the chain's block heights (slots on SVM). */
export interface FaultPowers {
  /** The family (`vmType`) the devnet simulates. */
  readonly vmType: string
  /** The newest block height, read from the node each time (no cache). */
  head(): Promise<bigint>
  /** Produces `blocks` blocks now (default 1), whatever the mining mode. */
  mine(blocks?: number): Promise<void>
  /** Stops producing blocks: transactions stay in the mempool until {@link resumeMining} or {@link mine}. */
  pauseMining(): Promise<void>
  /** Produces a block per arriving transaction again (and one now for what waited). */
  resumeMining(): Promise<void>
  /** Removes the newest `depth` blocks: the head goes back by `depth`, their transactions are gone. */
  rollback(depth: number): Promise<void>
  /**
   * Replaces the newest `depth` blocks by as many empty ones: the head keeps its height, the
   * transactions in the replaced blocks are gone (re-sending them is up to their sender).
   */
  reorg(depth: number): Promise<void>
  /** Removes a transaction from the mempool, as a node does with one it evicts. */
  dropTransaction(transactionId: string): Promise<void>
}

/** Families with a base fee that moves with demand. */
export interface FeeMarketFaults {
  /** The next block's base fee, per unit of gas: transactions paying less wait. */
  spikeBaseFee(perGas: bigint): Promise<void>
}

/** The EVM devnet's powers: all of {@link FaultPowers}, fee spikes and interval mining. */
export interface EvmFaultPowers extends FaultPowers, FeeMarketFaults {
  /** A block every `seconds` instead of one per transaction (0 goes back to one per transaction). */
  intervalMining(seconds: number): Promise<void>
}

function depthOf(depth: number): number {
  if (!Number.isSafeInteger(depth) || depth < 1)
    throw new RangeError(`depth must be a positive integer, got ${depth}`)
  return depth
}

/** The fault powers of the anvil node at `rpcUrl`, through its own JSON-RPC methods. */
export function evmFaultPowers(rpcUrl: string): EvmFaultPowers {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) })
  // anvil's own methods are not in viem's typed RPC schema.
  const call = (method: string, params: readonly unknown[] = []): Promise<unknown> =>
    client.request({ method, params } as never)
  const mine = async (blocks = 1): Promise<void> => {
    await call('anvil_mine', [numberToHex(depthOf(blocks))])
  }
  return {
    vmType: 'evm',
    head: async () => BigInt((await call('eth_blockNumber')) as Hex),
    mine,
    async pauseMining() {
      await call('evm_setIntervalMining', [0])
      await call('evm_setAutomine', [false])
    },
    async resumeMining() {
      await call('evm_setAutomine', [true])
      await mine()
    },
    async rollback(depth) {
      await call('anvil_rollback', [depthOf(depth)])
    },
    async reorg(depth) {
      await call('anvil_reorg', [depthOf(depth), []])
    },
    async dropTransaction(transactionId) {
      if (!isHex(transactionId)) throw new TypeError(`not a transaction hash: ${transactionId}`)
      await call('anvil_dropTransaction', [transactionId])
    },
    async spikeBaseFee(perGas) {
      if (perGas < 0n) throw new RangeError('the base fee cannot be negative')
      await call('anvil_setNextBlockBaseFeePerGas', [numberToHex(perGas)])
    },
    async intervalMining(seconds) {
      if (!Number.isSafeInteger(seconds) || seconds < 0)
        throw new RangeError(`seconds must be a non-negative integer, got ${seconds}`)
      if (seconds > 0) await call('evm_setAutomine', [false])
      await call('evm_setIntervalMining', [seconds])
      if (seconds === 0) await call('evm_setAutomine', [true])
    },
  }
}
