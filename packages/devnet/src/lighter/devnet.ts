/**
 * The local Lighter devnet: a simulator of the perpetuals exchange's REST API (see README.md) on
 * loopback, with the cast of `accounts.ts` created and funded at start.
 */
import { LIGHTER_ACCOUNTS } from './accounts.js'
import { LIGHTER_ROUTE_PERPS } from './protocol.js'
import { startLighterServer } from './server.js'
import { type LighterTxRecord, LighterVenue } from './venue.js'

/** The transfer fee when none is given: 0.01 USDC. */
export const LIGHTER_DEFAULT_TRANSFER_FEE_USDC = 10_000n

/** Options of {@link startLighterDevnet}. */
export interface LighterDevnetOptions {
  /** HTTP port; 0 or omitted picks a free one. */
  port?: number
  /** Interface to listen on (default 127.0.0.1). */
  host?: string
  /** Receives one line per start-up step and per refused request. */
  log?: (line: string) => void
  /** `transfer_fee_usdc`, smallest unit (default 10000 = 0.01 USDC). */
  transferFeeUsdc?: bigint
}

/** A running Lighter devnet. */
export interface LighterDevnet {
  /** `http://<host>:<port>`: the API base URL (paths start with `/api/v1`). */
  readonly url: string
  readonly host: string
  readonly port: number
  /** The venue state behind the API, for in-process inspection. */
  readonly venue: LighterVenue
  /** USDC of `accountIndex` on `routeType` (default perps), smallest unit. */
  balanceOf(accountIndex: number, routeType?: number): bigint
  /** Adds USDC to an existing account (default perps); answers the new balance. */
  fund(accountIndex: number, amount: bigint, routeType?: number): bigint
  /** Changes `transfer_fee_usdc`. */
  setTransferFee(feeUsdc: bigint): void
  /** The executed transaction `hash`, or undefined. */
  transaction(hash: string): LighterTxRecord | undefined
  /** Stops the server. Idempotent. */
  stop(): Promise<void>
}

/**
 * Creates the venue with its cast and serves its API. Each call starts an independent devnet.
 * @throws Error when the port cannot be bound.
 */
export async function startLighterDevnet(options: LighterDevnetOptions = {}): Promise<LighterDevnet> {
  const log = options.log ?? (() => {})
  const venue = new LighterVenue({
    transferFeeUsdc: options.transferFeeUsdc ?? LIGHTER_DEFAULT_TRANSFER_FEE_USDC,
  })
  for (const account of LIGHTER_ACCOUNTS) venue.addAccount(account)
  log(
    `Lighter devnet (simulator) accounts: ${LIGHTER_ACCOUNTS.map((account) => `${account.name} #${account.index}`).join(', ')}`,
  )
  const host = options.host ?? '127.0.0.1'
  const server = await startLighterServer(venue, { host, port: options.port ?? 0, log })
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`
  log(`Lighter devnet API listening on ${url}/api/v1`)
  return {
    url,
    host,
    port: server.port,
    venue,
    balanceOf: (accountIndex, routeType = LIGHTER_ROUTE_PERPS) => venue.balanceOf(accountIndex, routeType),
    fund: (accountIndex, amount, routeType = LIGHTER_ROUTE_PERPS) =>
      venue.fund(accountIndex, amount, routeType),
    setTransferFee(feeUsdc) {
      venue.transferFeeUsdc = feeUsdc
    },
    transaction: (hash) => venue.transaction(hash),
    stop: () => server.close(),
  }
}

/** The environment variables the local configs read for the Lighter devnet. */
export function lighterDevnetEnvironment(devnet: Pick<LighterDevnet, 'url'>): Record<string, string> {
  return { LOCAL_LIGHTER_API_URL: devnet.url, LOCAL_LIGHTER_PUBLIC_API_URL: devnet.url }
}
