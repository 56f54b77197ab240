/**
 * Untrusted nodes (issue 23): a chain may list several nodes (`rpc.url` and `rpc.fallbackUrls`). A
 * fact the oracle signs or the solver acts on is trusted only when a majority of them agree on the
 * hash of the block it is in, each node asked on its own (the main read may have failed over to
 * another node, so it is no vote of the main node's); a node answering another hash for the same
 * height is reported (host only in the log, and counted as an RPC call with outcome
 * `disagreement`), not trusted. The family asks its nodes its own way; the vote and the report are
 * the same for every family.
 */
import type { Logger } from './logger.js'
import { reportRpcDisagreement } from './rpc-calls.js'

/** One node of a chain, asked on its own to vouch for what a read found. */
export interface ChainWitness {
  readonly url: string
}

/** What {@link blockHashQuorum} weighs. */
export interface BlockHashVote<Witness extends ChainWitness> {
  /**
   * Every node of the chain, the main one included, each to be asked on its own; fewer than two:
   * there is nobody to outvote, and what was read is trusted.
   */
  readonly witnesses: readonly Witness[]
  /** Height (block number, slot) of the block the fact is in. */
  readonly height: bigint
  /** The block's hash as the read gave it. */
  readonly blockHash: string
  /**
   * The hash `witness` gives for the block at `height`, in the form `blockHash` is in; undefined
   * (or a throw) when it cannot say: a node behind or down is not counted, nor reported.
   */
  readonly ask: (witness: Witness, height: bigint) => Promise<string | undefined>
  /** Told about a witness that answered another hash for the same height. */
  readonly onDisagreement?: ((witness: Witness, height: bigint) => void) | undefined
}

/**
 * Whether more than half of the chain's nodes, each asked on its own, answer `blockHash` for
 * `height`. With fewer than two nodes, true. They are asked at once.
 */
export async function blockHashQuorum<Witness extends ChainWitness>(
  vote: BlockHashVote<Witness>,
): Promise<boolean> {
  const { witnesses } = vote
  if (witnesses.length < 2) return true
  const answers = await Promise.allSettled(witnesses.map((witness) => vote.ask(witness, vote.height)))
  let agreeing = 0
  for (const [position, answer] of answers.entries()) {
    if (answer.status !== 'fulfilled' || answer.value === undefined) continue
    if (answer.value === vote.blockHash) agreeing++
    else vote.onDisagreement?.(witnesses[position] as Witness, vote.height)
  }
  return agreeing > witnesses.length / 2
}

/** The host of `url`, for logs: the rest of an RPC URL (path, query) may carry a provider key. */
function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return 'an unparsable URL'
  }
}

/**
 * The report of a node contradicting its chain's other nodes, as every family makes it: a warning
 * naming the node's host only, and the `disagreement` outcome of the RPC call metrics.
 */
export function nodeDisagreementReporter(logger: Logger): (witness: ChainWitness, height: bigint) => void {
  return (witness, height) => {
    logger.warn('a node answered another block hash than the others; not trusted', {
      node: hostOf(witness.url),
      blockNumber: height.toString(),
    })
    reportRpcDisagreement(witness.url)
  }
}
