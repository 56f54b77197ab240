/**
 * The named targets of `npm run bench`. A target is one HTTP request sent over and over; `server`
 * says which child processes answer it. Adding an endpoint is adding an entry here.
 */

/**
 * `pontis` is `scripts/start.ts` (devnet, intent service, oracle); `bare` is bare-koa.ts; `oracles`
 * is a devnet with one deposit and up to four oracle processes (oracles.ts).
 */
export type ServerName = 'pontis' | 'bare' | 'oracles'
/** The base URL a target is sent to: one of the URLs its server logged. */
export type ServiceName =
  | 'intents'
  | 'oracle'
  | 'bare'
  | 'oracle-peer-a'
  | 'oracle-peer-b'
  | 'oracle-aggregator'
  | 'oracle-aggregator-t2'

/** What a server's set-up made that request bodies refer to. */
export interface ServerFacts {
  /** The native deposit (chain {@link DEPOSIT_CHAIN_ID}) the oracle targets attest. */
  readonly depositTransactionId?: string
  /** A request the intent service stored (`steps[].requestId` of a quote made at set-up). */
  readonly requestId?: string
}

/** A process serving one base URL. */
export interface ServiceEndpoint {
  readonly url: string
  readonly pid: number
}

/** A started server: its services (several may share one process) and its set-up facts. */
export interface StartedServer {
  readonly services: Readonly<Partial<Record<ServiceName, ServiceEndpoint>>>
  readonly facts: ServerFacts
  /** Stops what the server holds besides its child processes (the oracles' devnet). */
  readonly stop?: () => Promise<void>
}

export type RequestBody = Readonly<Record<string, unknown>>

export interface Target {
  readonly server: ServerName
  readonly service: ServiceName
  /** Further processes whose CPU and memory count as the server's: the peers an aggregator asks. */
  readonly alsoSampled?: readonly ServiceName[]
  readonly method: 'GET' | 'POST'
  /** The path and query, or one built from what the server's set-up made. */
  readonly path: string | ((facts: ServerFacts) => string)
  readonly headers?: Readonly<Record<string, string>>
  /** A JSON body, or one built from what the server's set-up made. */
  readonly body?: RequestBody | ((facts: ServerFacts) => RequestBody)
  /**
   * Checks every answer's parsed JSON body beyond its 2xx status: undefined when right, else why
   * not. Wrong answers are counted as mismatches and invalidate the run.
   */
  readonly checkAnswer?: (answer: unknown) => string | undefined
  /**
   * The bare koa target this one's throughput is divided by: `bare` (a POST with the same JSON
   * body to read and parse) by default, `bare-get` (a GET, nothing to read) for GET targets.
   */
  readonly baseline?: BaselineName
  readonly description: string
}

/** The bare koa targets: the ceilings of a koa endpoint on this machine, with and without a body. */
export type BaselineName = 'bare' | 'bare-get'

/** Devnet test user #3 (funded), native ETH from chain 31337 to chain 31338: a quote the devnet answers. */
export const QUOTE_BODY = {
  user: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: '0x0000000000000000000000000000000000000000',
  destinationCurrency: '0x0000000000000000000000000000000000000000',
  amount: '100000000000000000',
  tradeType: 'EXACT_INPUT',
} as const

/**
 * The same user swapping 0.1 ETH into USDC on chain 31337 itself: a quote with a DEX leg (the devnet's
 * Uniswap v3 deployment: pool lookups, QuoterV2, slot0, the swap's gas), nothing stored.
 */
export const SWAP_QUOTE_BODY = {
  ...QUOTE_BODY,
  destinationChainId: 31337,
  destinationCurrency: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
} as const

/** The swap quote's answer must be the user's own swap through the router, not an error or a bridge. */
function isSelfExecutedSwap(answer: unknown): string | undefined {
  const steps = (answer as { steps?: Array<{ id?: string }> }).steps
  return steps?.at(-1)?.id === 'swap' ? undefined : 'no swap step'
}

/** The chain of the oracle targets' deposit. */
export const DEPOSIT_CHAIN_ID = 31337
/**
 * The `x-api-key` every oracle of the oracle targets accepts and the aggregators send to their
 * peers: a keyless caller is limited to 2 requests/s per IP, a keyed one is not limited.
 */
export const ORACLE_API_KEY = 'pontis-bench-oracle-key-0123456789'

/** The depository-deposits request for the bench deposit; peers are asked only when `withPeers`. */
function attestDeposit(withPeers: boolean): (facts: ServerFacts) => RequestBody {
  return (facts) => {
    if (facts.depositTransactionId === undefined) throw new Error('the server made no deposit to attest')
    return {
      chainId: DEPOSIT_CHAIN_ID,
      transactionId: facts.depositTransactionId,
      requestPeerSignatures: withPeers,
    }
  }
}

/** An attestation carrying `signers` signatures on every message and on the hub execution (or more). */
function signedByAtLeast(signers: number): (answer: unknown) => string | undefined {
  return (answer) => {
    const attestation = answer as {
      messages?: Array<{ signatures?: unknown[] }>
      execution?: { signatures?: unknown[] }
    }
    if (attestation.messages === undefined || attestation.messages.length === 0) return 'no messages'
    const counts = [
      ...attestation.messages.map((message) => message.signatures?.length ?? 0),
      attestation.execution?.signatures?.length ?? 0,
    ]
    const fewest = Math.min(...counts)
    return fewest >= signers ? undefined : `${fewest} signatures where ${signers} were expected`
  }
}

const ORACLE_HEADERS = { 'x-api-key': ORACLE_API_KEY } as const
const ATTEST_PATH = '/attestations/depository-deposits/v1'

/** The status of the request the set-up quote stored. */
function statusOfStoredRequest(facts: ServerFacts): string {
  if (facts.requestId === undefined) throw new Error('the server stored no request to ask the status of')
  return `/intents/status/v3?requestId=${facts.requestId}`
}

/** A status record of a stored request: it has a status. */
function isStatusRecord(answer: unknown): string | undefined {
  const status = (answer as { status?: unknown }).status
  return typeof status === 'string' ? undefined : 'no status in the answer'
}

/** The chain list of the devnet: at least its two chains. */
function listsChains(answer: unknown): string | undefined {
  const chains = (answer as { chains?: unknown }).chains
  return Array.isArray(chains) && chains.length >= 2 ? undefined : 'fewer than 2 chains listed'
}

export const TARGETS = {
  quote: {
    server: 'pontis',
    service: 'intents',
    method: 'POST',
    path: '/quote/v2',
    body: QUOTE_BODY,
    description: 'POST /quote/v2: validate, price, sign the order, build steps, store the request (PGlite)',
  },
  'quote-swap': {
    server: 'pontis',
    service: 'intents',
    method: 'POST',
    path: '/quote/v2',
    body: SWAP_QUOTE_BODY,
    checkAnswer: isSelfExecutedSwap,
    description:
      'POST /quote/v2, warm, same-chain ETH → USDC on 31337: the Uniswap v3 leg priced (QuoterV2, slot0) and its swap steps built; compare with quote',
  },
  price: {
    server: 'pontis',
    service: 'intents',
    method: 'POST',
    path: '/price',
    body: QUOTE_BODY,
    description: 'POST /price: the same quote without steps; nothing stored',
  },
  status: {
    server: 'pontis',
    service: 'intents',
    method: 'GET',
    path: statusOfStoredRequest,
    checkAnswer: isStatusRecord,
    baseline: 'bare-get',
    description:
      'GET /intents/status/v3?requestId=<the request a set-up quote stored>: a direct operation (no Koa): gate, validation, the record from the status cache',
  },
  chains: {
    server: 'pontis',
    service: 'intents',
    method: 'GET',
    path: '/chains',
    checkAnswer: listsChains,
    baseline: 'bare-get',
    description: 'GET /chains: the configured chain records (from config, in memory)',
  },
  bare: {
    server: 'bare',
    service: 'bare',
    method: 'POST',
    path: '/bare',
    body: QUOTE_BODY,
    description: 'POST /bare on a minimal koa app: read and parse the same JSON body, answer small JSON',
  },
  'bare-get': {
    server: 'bare',
    service: 'bare',
    method: 'GET',
    path: '/bare',
    description: 'GET /bare on the same minimal koa app: no body to read, answer small JSON',
  },
  'attest-0-peers': {
    server: 'oracles',
    service: 'oracle-peer-a',
    method: 'POST',
    path: ATTEST_PATH,
    headers: ORACLE_HEADERS,
    body: attestDeposit(false),
    checkAnswer: signedByAtLeast(1),
    description:
      'POST /attestations/depository-deposits/v1 on one oracle without peers: read the receipt and confirmations over RPC, sign message and execution',
  },
  'attest-2-peers': {
    server: 'oracles',
    service: 'oracle-aggregator',
    alsoSampled: ['oracle-peer-a', 'oracle-peer-b'],
    method: 'POST',
    path: ATTEST_PATH,
    headers: ORACLE_HEADERS,
    body: attestDeposit(true),
    checkAnswer: signedByAtLeast(3),
    description:
      'The same with requestPeerSignatures: attest locally and ask both peers at once, verify their signatures, answer once 3 of 3 allowlisted signers agree',
  },
  'attest-2-peers-t2': {
    server: 'oracles',
    service: 'oracle-aggregator-t2',
    alsoSampled: ['oracle-peer-a', 'oracle-peer-b'],
    method: 'POST',
    path: ATTEST_PATH,
    headers: ORACLE_HEADERS,
    body: attestDeposit(true),
    checkAnswer: signedByAtLeast(2),
    description:
      'As attest-2-peers with threshold 2: answers once the local and the faster peer agree; the slower peer still works',
  },
} as const satisfies Record<string, Target>

export type TargetName = keyof typeof TARGETS
export const DEFAULT_TARGETS: readonly TargetName[] = [
  'quote',
  'quote-swap',
  'price',
  'status',
  'chains',
  'attest-0-peers',
  'attest-2-peers',
  'attest-2-peers-t2',
  'bare',
  'bare-get',
]
/** The baseline of targets that name none. */
export const BASELINE: BaselineName = 'bare'

/** The bare koa target a target's throughput is divided by. */
export function baselineOf(target: Target): BaselineName {
  return target.baseline ?? BASELINE
}

export function isTargetName(name: string): name is TargetName {
  return Object.hasOwn(TARGETS, name)
}
