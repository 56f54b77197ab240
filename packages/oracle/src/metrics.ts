/**
 * The oracle's Prometheus metrics (prom-client), served by `GET /metrics`: how each peer answered
 * and when answers disagreed about the attested payload, plus the process's default metrics. Each
 * app has its own registry, so several oracles in one process (tests) never share counters.
 */
import type { RpcCallObservation } from '@pontis/core'
import { createMetricsRegistry, createRpcCallMetrics, type MetricsRegistry } from '@pontis/http'
import { Counter } from 'prom-client'

/**
 * How a peer's answer to one aggregated request ended:
 * - `ok`: valid, and its payload is the one returned (or the request failed for another reason);
 * - `mismatch`: valid, but it attests another payload than the one returned (rule 9);
 * - `invalid`: failed the route's schema or the signature checks, or attests another request;
 * - `timeout`: no whole answer within PEER_REQUEST_TIMEOUT_MS;
 * - `error`: unreachable, a non-2xx answer, or a body that is not JSON;
 * - `cancelled`: still running when the answer was decided (an early return); its call was aborted.
 */
export type PeerOutcome = 'ok' | 'mismatch' | 'invalid' | 'timeout' | 'error' | 'cancelled'

export const PEER_OUTCOMES: readonly PeerOutcome[] = [
  'ok',
  'mismatch',
  'invalid',
  'timeout',
  'error',
  'cancelled',
]

/**
 * Which side lost when valid answers attested different payloads:
 * - `local_outvoted`: peers' payload was returned and the local reading dropped (colluding or
 *   misreading peers, or a misreading local node: the operator must look);
 * - `peers_outvoted`: the local payload was returned and the peers' dropped.
 */
export type DisagreementResolution = 'local_outvoted' | 'peers_outvoted'

const DISAGREEMENT_RESOLUTIONS: readonly DisagreementResolution[] = ['local_outvoted', 'peers_outvoted']

export interface OracleMetrics {
  readonly registry: MetricsRegistry
  /** Records one call to a chain's node (core's `watchRpcCalls` feeds it). */
  rpcCall(observation: RpcCallObservation): void
  /** Counts one answered attestation request: `ok`, or the errorCode it was refused with. */
  attestationAnswered(path: string, outcome: string): void
  /** Counts one peer's outcome for one aggregated request. */
  peerAnswered(peer: string, outcome: PeerOutcome): void
  /** Counts one aggregated request whose valid answers disagreed about the payload. */
  payloadDisagreement(path: string, resolution: DisagreementResolution): void
}

/** What starts at zero, so an alert on `increase()` sees the first event. */
export interface OracleMetricsOptions {
  /** The peers' base URLs (`PEERS`). */
  readonly peers?: readonly string[]
  /** The attestation routes. */
  readonly paths?: readonly string[]
  /** The configured chains' ids. */
  readonly chainIds?: readonly number[]
}

/** The registry and counters of one oracle. */
export function createOracleMetrics(options: OracleMetricsOptions = {}): OracleMetrics {
  const registry = createMetricsRegistry()
  const attestations = new Counter({
    name: 'pontis_oracle_attestations_total',
    help: 'Attestation requests answered, by route and outcome (ok, or the errorCode of the refusal).',
    labelNames: ['path', 'outcome'] as const,
    registers: [registry],
  })
  const peerResponses = new Counter({
    name: 'pontis_oracle_peer_responses_total',
    help: 'Answers of peer oracles to aggregated attestation requests, by peer and outcome (ok, mismatch, invalid, timeout, error, cancelled).',
    labelNames: ['peer', 'outcome'] as const,
    registers: [registry],
  })
  const disagreements = new Counter({
    name: 'pontis_oracle_payload_disagreements_total',
    help: "Aggregated attestation requests whose valid answers attested different payloads; resolution local_outvoted means the local reading was dropped for the peers' one.",
    labelNames: ['path', 'resolution'] as const,
    registers: [registry],
  })
  for (const peer of options.peers ?? []) {
    for (const outcome of PEER_OUTCOMES) peerResponses.inc({ peer, outcome }, 0)
  }
  for (const path of options.paths ?? []) {
    attestations.inc({ path, outcome: 'ok' }, 0)
    for (const resolution of DISAGREEMENT_RESOLUTIONS) disagreements.inc({ path, resolution }, 0)
  }
  return {
    registry,
    rpcCall: createRpcCallMetrics(registry, options.chainIds ?? []),
    attestationAnswered: (path, outcome) => attestations.inc({ path, outcome }),
    peerAnswered: (peer, outcome) => peerResponses.inc({ peer, outcome }),
    payloadDisagreement: (path, resolution) => disagreements.inc({ path, resolution }),
  }
}
