/**
 * Readiness of a service's chains: each enabled chain's node must answer its adapter's `probe`
 * (a cheap call the family checks for sane data, with its head) within a bound. Results are cached
 * briefly and concurrent callers share one round, so a storm of readiness probes costs the nodes
 * at most one call per chain per period.
 */
import type { Registry } from './registry.js'

/** One chain's answer to a readiness probe. */
export interface ChainReadiness {
  readonly chainId: number
  readonly name: string
  readonly status: 'ok' | 'failing'
  /** How long the probe took (or the bound, when it ran out). */
  readonly latencyMs: number
  /** The newest block height or slot, when the family reports it. */
  readonly head?: string
  /** Why it failed; never a URL (they carry provider credentials). */
  readonly error?: string
}

export interface ChainReadinessOptions {
  /** Bound of one probe. Default 3000 ms. */
  readonly timeoutMs?: number
  /** How long a round's results are served again. Default 1500 ms. */
  readonly cacheMs?: number
  readonly now?: () => number
}

export const DEFAULT_READINESS_TIMEOUT_MS = 3000
const DEFAULT_CACHE_MS = 1500

/** What {@link withDeadline} rejects with. */
export class ProbeTimeout extends Error {}

/** `run`, or a rejection once `timeoutMs` has passed (the call itself is not aborted). */
export function withDeadline<T>(run: () => Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs)
  })
  return Promise.race([run(), deadline]).finally(() => clearTimeout(timer))
}

/** The reason of a failed probe, without URLs (an RPC URL often embeds its provider key). */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.replaceAll(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>').slice(0, 200)
}

/** Answers every chain's readiness, probing at most once per `cacheMs`. */
export function createChainReadiness(
  registry: Pick<Registry, 'chains'>,
  options: ChainReadinessOptions = {},
): () => Promise<readonly ChainReadiness[]> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_READINESS_TIMEOUT_MS
  const cacheMs = options.cacheMs ?? DEFAULT_CACHE_MS
  const now = options.now ?? Date.now
  let cached: { at: number; round: Promise<readonly ChainReadiness[]> } | undefined

  const probeOne = async (chain: ReturnType<Registry['chains']>[number]): Promise<ChainReadiness> => {
    const started = performance.now()
    const base = { chainId: chain.id, name: chain.record.name }
    try {
      const { head } = await withDeadline(() => chain.adapter.probe(), timeoutMs)
      return {
        ...base,
        status: 'ok',
        latencyMs: Math.round(performance.now() - started),
        ...(head !== undefined ? { head } : {}),
      }
    } catch (error) {
      const timedOut = error instanceof ProbeTimeout || (error as Error | undefined)?.name === 'TimeoutError'
      return {
        ...base,
        status: 'failing',
        latencyMs: Math.round(performance.now() - started),
        error: timedOut ? `no answer within ${timeoutMs} ms` : reasonOf(error),
      }
    }
  }

  return () => {
    const at = now()
    if (cached !== undefined && at - cached.at < cacheMs) return cached.round
    // A chain the config marks disabled is not served, so it does not hold readiness back.
    const enabled = registry.chains().filter((chain) => chain.record.disabled !== true)
    const round = Promise.all(enabled.map(probeOne))
    cached = { at, round }
    return round
  }
}
