/**
 * The Bitcoin devnet's fault powers ({@link FaultPowers}): the simulator's chain rolled back or
 * reorganised, mempool transactions dropped, blocks held back. Replacements (RBF) need no power:
 * the chain accepts one that pays enough more, as Bitcoin Core does (full RBF).
 */
import type { FaultPowers } from '../faults.js'
import type { BitcoinChain } from './chain.js'

/** What the powers drive: the chain, and the devnet's block timer. */
export interface BitcoinFaultTarget {
  readonly chain: BitcoinChain
  /** Holds the block timer (when the devnet has one) back, or lets it mine again. */
  setMiningPaused(paused: boolean): void
}

/** The Bitcoin devnet's fault powers; `dropTransaction` also evicts the transaction's descendants. */
export interface BitcoinFaultPowers extends FaultPowers {
  readonly vmType: 'bvm'
}

function requireTxid(transactionId: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(transactionId)) throw new TypeError(`not a txid: ${transactionId}`)
  return transactionId.toLowerCase()
}

export function bitcoinFaultPowers(target: BitcoinFaultTarget): BitcoinFaultPowers {
  const { chain } = target
  return {
    vmType: 'bvm',
    head: async () => BigInt(chain.height),
    async mine(blocks = 1) {
      if (!Number.isSafeInteger(blocks) || blocks < 1)
        throw new RangeError(`blocks must be a positive integer, got ${blocks}`)
      chain.mine(blocks)
    },
    async pauseMining() {
      target.setMiningPaused(true)
    },
    async resumeMining() {
      target.setMiningPaused(false)
      chain.mine(1)
    },
    async rollback(depth) {
      chain.rollback(depth)
    },
    async reorg(depth) {
      chain.reorg(depth)
    },
    async dropTransaction(transactionId) {
      const txid = requireTxid(transactionId)
      if (chain.drop(txid).length === 0) throw new Error(`${txid} is not in the mempool`)
    },
  }
}
