/**
 * The local Bitcoin devnet: a regtest chain simulator ({@link BitcoinChain}) behind an Esplora HTTP API
 * on loopback, with the cast of `accounts.ts` funded at start in one confirmed funding block:
 * 3 × 0.5 BTC to each user (P2WPKH, P2TR, P2SH-P2WPKH, P2PKH) and 10 × 1 BTC to the solver. The
 * vault starts empty; block rewards go to the miner.
 */
import {
  BITCOIN_DEVNET_NETWORK,
  BITCOIN_FUNDING,
  BITCOIN_SOLVER,
  BITCOIN_USER_LIST,
  type BitcoinDevAccount,
} from './accounts.js'
import { BitcoinChain, type BitcoinPayment } from './chain.js'
import { type BitcoinFaultPowers, bitcoinFaultPowers } from './faults.js'
import { startEsploraServer } from './server.js'

/** Options of {@link startBitcoinDevnet}. */
export interface BitcoinDevnetOptions {
  /** Interface to listen on (default 127.0.0.1: the devnet is never reachable from outside). */
  host?: string
  /** HTTP port; 0 or omitted picks a free one. */
  port?: number
  /** Mines a block (paying the miner) every this many milliseconds; off by default (mine on demand). */
  blockIntervalMs?: number
  /** The `GET /fee-estimates` answer (target blocks → sat/vB). */
  feeRates?: Readonly<Record<string, number>>
  /** Receives one line per start-up step. */
  log?: (message: string) => void
}

/** A funded output, as {@link BitcoinDevnet.fund} creates it. */
export interface BitcoinFundedOutput {
  readonly txid: string
  readonly vout: number
  readonly value: bigint
  readonly blockHash: string
  readonly blockHeight: number
}

/** A running Bitcoin devnet. */
export interface BitcoinDevnet {
  /** `http://<host>:<port>`: the Esplora API base URL (no `/api` suffix). */
  readonly url: string
  readonly host: string
  readonly port: number
  /** The chain behind the API, for in-process use (submit, inspect, set fee rates). */
  readonly chain: BitcoinChain
  /** Mines `count` blocks (default 1) including the mempool; returns their hashes. */
  mine(count?: number, payTo?: string): string[]
  /** Creates a confirmed output of `sats` paying `address` (one new block). */
  fund(address: string, sats: bigint | number): BitcoinFundedOutput
  /** Rollbacks, reorganisations, dropped transactions and held-back blocks on demand (faults.ts). */
  readonly faults: BitcoinFaultPowers
  /** Stops the server and the block timer. Idempotent. */
  stop(): Promise<void>
}

/** The start-up funding: every user's and the solver's outputs. */
export function bitcoinDevnetFunding(): BitcoinPayment[] {
  const repeat = (account: BitcoinDevAccount, count: number, value: bigint): BitcoinPayment[] =>
    Array.from({ length: count }, () => ({ script: account.outputScript, value }))
  return [
    ...BITCOIN_USER_LIST.flatMap((user) =>
      repeat(user, BITCOIN_FUNDING.userOutputs, BITCOIN_FUNDING.userOutputSats),
    ),
    ...repeat(BITCOIN_SOLVER, BITCOIN_FUNDING.solverOutputs, BITCOIN_FUNDING.solverOutputSats),
  ]
}

function btc(sats: bigint): string {
  return `${Number(sats) / 1e8} BTC`
}

/**
 * Creates the chain, funds the cast and serves the Esplora API. Each call starts an independent
 * devnet, so several can run in one process.
 *
 * @throws Error when the port cannot be bound or an option is invalid.
 */
export async function startBitcoinDevnet(options: BitcoinDevnetOptions = {}): Promise<BitcoinDevnet> {
  const log = options.log ?? (() => {})
  const interval = options.blockIntervalMs
  if (interval !== undefined && (!Number.isFinite(interval) || interval <= 0)) {
    throw new Error(`invalid blockIntervalMs: ${interval}`)
  }
  const chain = new BitcoinChain({ feeRates: options.feeRates })
  const { txid, block } = chain.fund(bitcoinDevnetFunding())
  log(
    `Bitcoin devnet (regtest simulator, ${BITCOIN_DEVNET_NETWORK.bech32} addresses) funded in block ${block.height} (funding tx ${txid}): ` +
      `${BITCOIN_FUNDING.userOutputs} × ${btc(BITCOIN_FUNDING.userOutputSats)} to ` +
      `${BITCOIN_USER_LIST.map((user) => `${user.name} ${user.address}`).join(', ')}; ` +
      `${BITCOIN_FUNDING.solverOutputs} × ${btc(BITCOIN_FUNDING.solverOutputSats)} to solver ${BITCOIN_SOLVER.address}`,
  )

  const host = options.host ?? '127.0.0.1'
  const server = await startEsploraServer(chain, { host, port: options.port ?? 0, log })
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`
  log(`Bitcoin devnet Esplora API listening on ${url}`)

  let timer: NodeJS.Timeout | undefined
  let paused = false
  if (interval !== undefined) {
    timer = setInterval(() => {
      if (!paused) chain.mine(1)
    }, interval)
    timer.unref()
    log(`Bitcoin devnet mines a block every ${interval} ms`)
  }

  return {
    url,
    host,
    port: server.port,
    chain,
    faults: bitcoinFaultPowers({
      chain,
      setMiningPaused: (value) => {
        paused = value
      },
    }),
    mine(count = 1, payTo) {
      return chain.mine(count, payTo).map((mined) => mined.hash)
    },
    fund(address, sats) {
      const funded = chain.fund([{ address, value: sats }])
      return {
        txid: funded.txid,
        vout: 0,
        value: BigInt(sats),
        blockHash: funded.block.hash,
        blockHeight: funded.block.height,
      }
    },
    stop() {
      if (timer) clearInterval(timer)
      timer = undefined
      return server.close()
    },
  }
}

/** The environment variable the local configs read for the Bitcoin devnet. */
export function bitcoinDevnetEnvironment(devnet: Pick<BitcoinDevnet, 'url'>): {
  LOCAL_BITCOIN_ESPLORA_URL: string
} {
  return { LOCAL_BITCOIN_ESPLORA_URL: devnet.url }
}
