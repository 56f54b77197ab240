/**
 * The SVM devnet's fault powers ({@link FaultPowers}), on its LiteSVM ledger in process: rollback
 * and reorganisation of the newest slots, paused and interval slot production with a mempool of
 * waiting transactions, evicted transactions, and expired blockhashes.
 *
 * Heights are slots: the ledger has no skipped slots, so block height equals slot. Every landed
 * transaction has a slot of its own, so "mining" one block lands one waiting transaction.
 */
import type { FaultPowers } from '../faults.js'
import type { SvmLedger } from './rpc.js'

/** The SVM devnet's powers: all of {@link FaultPowers}, interval production and blockhash expiry. */
export interface SvmFaultPowers extends FaultPowers {
  /**
   * Opens empty slots (waiting transactions stay waiting) until `blockhash` is past its last valid
   * block height, then drops the waiting transactions that used it. Answers the new head.
   */
  expireBlockhash(blockhash: string): Promise<bigint>
  /** Signatures waiting for a slot while production is paused, oldest first. */
  waiting(): Promise<string[]>
  /**
   * A slot every `milliseconds` (transactions wait for it) instead of one per arriving
   * transaction; 0 goes back to one per transaction.
   */
  intervalMining(milliseconds: number): Promise<void>
}

function countOf(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}

/** The fault powers of the SVM devnet whose ledger is `ledger` (in this process). */
export function svmFaultPowers(ledger: SvmLedger): SvmFaultPowers {
  let timer: NodeJS.Timeout | undefined
  const stopTimer = () => {
    if (timer) clearInterval(timer)
    timer = undefined
  }
  return {
    vmType: 'svm',
    head: async () => BigInt(ledger.slot),
    async mine(blocks = 1) {
      ledger.produce(countOf(blocks, 'blocks'))
    },
    async pauseMining() {
      stopTimer()
      ledger.pause()
    },
    async resumeMining() {
      stopTimer()
      ledger.resume()
    },
    async rollback(depth) {
      ledger.rollback(countOf(depth, 'depth'))
    },
    async reorg(depth) {
      ledger.rollback(countOf(depth, 'depth'))
      ledger.produce(depth)
    },
    async dropTransaction(transactionId) {
      ledger.dropWaiting(transactionId)
    },
    expireBlockhash: async (blockhash) => BigInt(ledger.expireBlockhash(blockhash)),
    waiting: async () => ledger.waiting(),
    async intervalMining(milliseconds) {
      if (!Number.isSafeInteger(milliseconds) || milliseconds < 0)
        throw new RangeError(`milliseconds must be a non-negative integer, got ${milliseconds}`)
      stopTimer()
      if (milliseconds === 0) {
        ledger.resume()
        return
      }
      ledger.pause()
      timer = setInterval(() => ledger.produce(1), milliseconds)
      timer.unref()
    },
  }
}
