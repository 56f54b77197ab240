/**
 * The Tron devnet's fault powers ({@link FaultPowers}) on its simulator in process: forks of the
 * newest (non-solid) blocks, paused and interval block production, evicted pool transactions, and a
 * clock moved ahead (transactions expire without waiting).
 *
 * Tron produces blocks on a timer (every 3 s on mainnet), not per transaction: "mining" produces a
 * block that takes the whole pool, and "resuming" restarts the devnet's timer.
 */
import type { FaultPowers } from '../faults.js'
import type { TronChain } from './chain.js'

/** The Tron devnet's powers: all of {@link FaultPowers} and interval production. */
export interface TronFaultPowers extends FaultPowers {
  /** A block every `milliseconds`; 0 stops production (blocks only on {@link FaultPowers.mine}). */
  intervalMining(milliseconds: number): Promise<void>
  /** Transaction ids accepted and not yet in a block, oldest first. */
  pool(): Promise<string[]>
  /**
   * Moves the chain's clock `milliseconds` ahead: the next blocks are stamped that much later, so a
   * transaction's `expiration` passes without waiting for it.
   */
  advanceClock(milliseconds: number): Promise<void>
}

/** The block timer of a Tron devnet: what the fault powers pause and resume. */
export interface TronBlockTimer {
  /** The interval the devnet was started with (0: none). */
  readonly configuredMs: number
  /** Runs the timer at `milliseconds` (0 stops it). */
  set(milliseconds: number): void
}

function countOf(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}

/** The fault powers of the Tron devnet made of `chain` and its block `timer`. */
export function tronFaultPowers(chain: TronChain, timer: TronBlockTimer): TronFaultPowers {
  return {
    vmType: 'tvm',
    head: async () => BigInt(chain.head.number),
    async mine(blocks = 1) {
      chain.mine(countOf(blocks, 'blocks'))
    },
    async pauseMining() {
      timer.set(0)
    },
    async resumeMining() {
      timer.set(timer.configuredMs)
      chain.mine(1)
    },
    async rollback(depth) {
      chain.rollback(countOf(depth, 'depth'))
    },
    async reorg(depth) {
      chain.rollback(countOf(depth, 'depth'))
      chain.mine(depth, { empty: true })
    },
    async dropTransaction(transactionId) {
      chain.dropTransaction(transactionId)
    },
    async intervalMining(milliseconds) {
      if (!Number.isSafeInteger(milliseconds) || milliseconds < 0)
        throw new RangeError(`milliseconds must be a non-negative integer, got ${milliseconds}`)
      timer.set(milliseconds)
    },
    pool: async () => [...chain.pool()],
    async advanceClock(milliseconds) {
      chain.advanceClock(milliseconds)
    },
  }
}
