/**
 * The local Tron devnet: a {@link TronChain} simulator behind the full-node HTTP API on loopback,
 * with the cast of `accounts.ts` funded at start, producing a block every `blockIntervalMs`.
 */
import { TRON_FUNDING, TRON_SOLVER, TRON_USDT_ADDRESS, TRON_USERS, TRON_VAULT } from './accounts.js'
import { type TronBlock, TronChain } from './chain.js'
import { tronAddressBytes, tronHex } from './codec.js'
import { type TronFaultPowers, tronFaultPowers } from './faults.js'
import { startTronApiServer } from './server.js'

/** Options of {@link startTronDevnet}. */
export interface TronDevnetOptions {
  /** Interface to listen on (default 127.0.0.1). */
  host?: string
  /** HTTP port; 0 or omitted picks a free one. */
  port?: number
  /** Produces a block every this many milliseconds (default 3000); 0 turns the timer off (mine on demand). */
  blockIntervalMs?: number
  /** Receives one line per start-up step. */
  log?: (message: string) => void
}

/** A running Tron devnet. */
export interface TronDevnet {
  /** `http://<host>:<port>`: the node API base URL (paths `/wallet/...`). */
  readonly url: string
  readonly host: string
  readonly port: number
  /** The chain behind the API, for in-process use. */
  readonly chain: TronChain
  /** Produces `count` blocks (default 1), the first with the pending transactions. */
  mine(count?: number): TronBlock[]
  /** TRX balance of an address (base58 or 41-hex), sun; 0 for no account. */
  trxBalance(address: string): bigint
  /** USDT balance of an address, smallest unit. */
  usdtBalance(address: string): bigint
  /** Credits TRX (sun) to an address, creating the account. */
  fundTrx(address: string, sun: bigint): void
  /** Credits USDT to an address. */
  fundUsdt(address: string, units: bigint): void
  /** Forks of non-solid blocks, paused production and evicted transactions on demand (faults.ts). */
  readonly faults: TronFaultPowers
  /** Stops the server and the block timer. Idempotent. */
  stop(): Promise<void>
}

function hexOf(address: string): string {
  const bytes = tronAddressBytes(address)
  if (!bytes) throw new Error(`not a Tron address: ${address}`)
  return tronHex(bytes)
}

/**
 * Creates the chain, funds the cast and serves the node API. Each call starts an independent devnet.
 * @throws Error when the port cannot be bound or an option is invalid.
 */
export async function startTronDevnet(options: TronDevnetOptions = {}): Promise<TronDevnet> {
  const log = options.log ?? (() => {})
  const interval = options.blockIntervalMs ?? 3000
  if (!Number.isFinite(interval) || interval < 0) throw new Error(`invalid blockIntervalMs: ${interval}`)
  const chain = new TronChain()
  log(
    `Tron devnet (simulator) cast: users ${Object.values(TRON_USERS)
      .map((user) => `${user.name} ${user.address}`)
      .join(', ')} ` +
      `(${TRON_FUNDING.userTrx / 1_000_000n} TRX, ${TRON_FUNDING.userUsdt / 1_000_000n} USDT each); solver ${TRON_SOLVER.address}; vault ${TRON_VAULT.address}; USDT ${TRON_USDT_ADDRESS}`,
  )
  const host = options.host ?? '127.0.0.1'
  const server = await startTronApiServer(chain, { host, port: options.port ?? 0, log })
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`
  log(`Tron devnet node API listening on ${url}`)
  let timer: NodeJS.Timeout | undefined
  let stopping = false
  const setTimer = (milliseconds: number) => {
    if (timer) clearInterval(timer)
    timer = undefined
    if (milliseconds <= 0 || stopping) return
    timer = setInterval(() => chain.mine(1), milliseconds)
    timer.unref()
  }
  setTimer(interval)
  let stopped: Promise<void> | undefined
  return {
    url,
    host,
    port: server.port,
    chain,
    mine: (count = 1) => chain.mine(count),
    trxBalance: (address) => chain.balance(hexOf(address)) ?? 0n,
    usdtBalance: (address) => chain.tokenBalance(hexOf(address)),
    fundTrx: (address, sun) => chain.credit(hexOf(address), sun),
    fundUsdt: (address, units) => chain.creditToken(hexOf(address), units),
    faults: tronFaultPowers(chain, { configuredMs: interval, set: setTimer }),
    stop() {
      stopping = true
      setTimer(0)
      stopped ??= server.close()
      return stopped
    },
  }
}

/** The environment variables the local configs read for the Tron devnet. */
export function tronDevnetEnvironment(devnet: Pick<TronDevnet, 'url'>): {
  LOCAL_TRON_API_URL: string
  LOCAL_TRON_PUBLIC_API_URL: string
} {
  return { LOCAL_TRON_API_URL: devnet.url, LOCAL_TRON_PUBLIC_API_URL: devnet.url }
}
