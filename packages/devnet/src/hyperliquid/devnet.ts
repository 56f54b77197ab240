/**
 * The local Hyperliquid devnet: a simulator of Hyperliquid core's public API (see README.md) on
 * loopback, with the cast of `accounts.ts` funded at start.
 */
import { HYPERLIQUID_EMPTY, HYPERLIQUID_FUNDING, HYPERLIQUID_SOLVER, HYPERLIQUID_USERS } from './accounts.js'
import { HyperliquidLedger } from './ledger.js'
import { startHyperliquidServer } from './server.js'

/** Options of {@link startHyperliquidDevnet}. */
export interface HyperliquidDevnetOptions {
  /** Interface to listen on (default 127.0.0.1). */
  host?: string
  /** HTTP port; 0 or omitted picks a free one. */
  port?: number
  /** The `hyperliquidChain` signed actions must name. Default `Mainnet`. */
  hyperliquidChain?: 'Mainnet' | 'Testnet'
  /** Receives one line per start-up step. */
  log?: (message: string) => void
}

/** A running Hyperliquid devnet. */
export interface HyperliquidDevnet {
  /** `http://<host>:<port>`: the API base URL (`/info`, `/exchange`, `/explorer` under it). */
  readonly url: string
  readonly host: string
  readonly port: number
  /** The state behind the API, for in-process use. */
  readonly ledger: HyperliquidLedger
  /** Balance of `user` in `currencyId` (perps USDC `0x00…0` or a spot token id), smallest units. */
  balance(user: string, currencyId: string): bigint
  /** Credits `amount` (smallest units) of `currencyId` to `user`, creating the account. */
  fund(user: string, currencyId: string, amount: bigint): void
  /** Stops the server. Idempotent. */
  stop(): Promise<void>
}

/**
 * Creates the ledger, funds the cast (users and solver; the empty account gets nothing) and serves
 * the API. Each call starts an independent devnet.
 * @throws Error when the port cannot be bound.
 */
export async function startHyperliquidDevnet(
  options: HyperliquidDevnetOptions = {},
): Promise<HyperliquidDevnet> {
  const log = options.log ?? (() => {})
  const ledger = new HyperliquidLedger({ hyperliquidChain: options.hyperliquidChain ?? 'Mainnet' })
  for (const user of Object.values(HYPERLIQUID_USERS)) {
    for (const [currencyId, amount] of Object.entries(HYPERLIQUID_FUNDING.user)) {
      ledger.credit(user.address, currencyId, amount)
    }
  }
  for (const [currencyId, amount] of Object.entries(HYPERLIQUID_FUNDING.solver)) {
    ledger.credit(HYPERLIQUID_SOLVER.address, currencyId, amount)
  }
  const host = options.host ?? '127.0.0.1'
  const server = await startHyperliquidServer(ledger, { host, port: options.port ?? 0, log })
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`
  log(
    `Hyperliquid devnet (API simulator, ${ledger.hyperliquidChain}) listening on ${url}: users ` +
      `${Object.values(HYPERLIQUID_USERS)
        .map((user) => `${user.name} ${user.address}`)
        .join(', ')}; solver/depository ${HYPERLIQUID_SOLVER.address}; empty ${HYPERLIQUID_EMPTY.address}`,
  )
  return {
    url,
    host,
    port: server.port,
    ledger,
    balance: (user, currencyId) => ledger.balance(user, currencyId),
    fund: (user, currencyId, amount) => ledger.credit(user, currencyId, amount),
    stop: () => server.close(),
  }
}

/** The environment variables the local configs read for the Hyperliquid devnet. */
export function hyperliquidDevnetEnvironment(devnet: Pick<HyperliquidDevnet, 'url'>): {
  LOCAL_HYPERLIQUID_API_URL: string
  LOCAL_HYPERLIQUID_PUBLIC_API_URL: string
} {
  return { LOCAL_HYPERLIQUID_API_URL: devnet.url, LOCAL_HYPERLIQUID_PUBLIC_API_URL: devnet.url }
}
