/**
 * The servers of the oracle targets: a devnet (two anvil chains on free ports, managed from this
 * process; anvil runs in its own processes), one native deposit on chain 31337 for every request to
 * attest, and oracles in child processes, each `packages/oracle/src/main.ts` configured by its
 * environment as an operator runs it:
 *
 * - `oracle-peer-a`, `oracle-peer-b`: no peers of their own, signing with devnet keys #7 and #8.
 *   Peer A alone is also the "0 peers" oracle.
 * - `oracle-aggregator` (threshold 3) and `oracle-aggregator-t2` (threshold 2): both sign with #9
 *   and ask both peers; ORACLE_SIGNERS allowlists #7, #8 and #9.
 *
 * Every oracle accepts {@link ORACLE_API_KEY}, and the aggregators send it to their peers: with a
 * valid key nothing is rate-limited (2 requests/s per IP without one).
 */
import { randomBytes } from 'node:crypto'
import {
  DEPOSITORY_ADDRESS,
  DEV_ACCOUNTS,
  type DevAccount,
  type Devnet,
  devnetEnvironment,
  ORACLE_SIGNER,
  pontisDepositoryAbi,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { createPublicClient, createWalletClient, type Hex, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { spawnServer } from './children.js'
import { DEPOSIT_CHAIN_ID, ORACLE_API_KEY, type ServiceName, type StartedServer } from './targets.js'

export type OracleServiceName = Extract<ServiceName, `oracle-${string}`>

interface OracleRole {
  readonly signer: DevAccount
  /** Asks both peers, with this ORACLE_SIGNERS_THRESHOLD; undefined: no peers. */
  readonly threshold?: number
}

const PEER_A = DEV_ACCOUNTS[7]!
const PEER_B = DEV_ACCOUNTS[8]!
const ROLES: Readonly<Record<OracleServiceName, OracleRole>> = {
  'oracle-peer-a': { signer: PEER_A },
  'oracle-peer-b': { signer: PEER_B },
  'oracle-aggregator': { signer: ORACLE_SIGNER, threshold: 3 },
  'oracle-aggregator-t2': { signer: ORACLE_SIGNER, threshold: 2 },
}
const ALLOWLIST = [PEER_A, PEER_B, ORACLE_SIGNER].map((account) => account.address).join(';')
const ORACLE_MAIN = 'packages/oracle/src/main.ts'
const START_TIMEOUT_MS = 60_000

export function isOracleService(service: ServiceName): service is OracleServiceName {
  return Object.hasOwn(ROLES, service)
}

export interface OracleStartOptions {
  /** The oracles the chosen targets send to or sample; peers are added when an aggregator is in. */
  readonly services: ReadonlySet<OracleServiceName>
  readonly cwd: string
  /** Node flags for every oracle (`--cpu-prof`, ...). */
  readonly nodeFlags: readonly string[]
}

/** Makes the deposit every oracle request attests: devnet user #3 pays 0.01 ETH into the depository. */
async function depositOnce(devnet: Devnet): Promise<Hex> {
  const chain = devnet.chains.find((candidate) => candidate.chainId === DEPOSIT_CHAIN_ID)
  if (!chain) throw new Error(`the devnet has no chain ${DEPOSIT_CHAIN_ID}`)
  const user = USERS[0]!
  const transport = http(chain.rpcUrl)
  const wallet = createWalletClient({
    account: privateKeyToAccount(user.privateKey),
    chain: chain.chain,
    transport,
  })
  const client = createPublicClient({ chain: chain.chain, transport, pollingInterval: 50 })
  const hash = await wallet.writeContract({
    address: DEPOSITORY_ADDRESS,
    abi: pontisDepositoryAbi,
    functionName: 'depositNative',
    args: [user.address, `0x${randomBytes(32).toString('hex')}`],
    value: parseEther('0.01'),
  })
  const receipt = await client.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success') throw new Error(`the bench deposit ${hash} reverted`)
  return hash
}

/**
 * Starts the devnet, deposits, then the oracles (peers first: the aggregators' PEERS name their
 * URLs). `stop` ends the devnet; the oracle children are stopped with every other child
 * (`stopAllServers`). On a failure everything started here is stopped again.
 */
export async function startOracles(options: OracleStartOptions): Promise<StartedServer> {
  const wanted = new Set(options.services)
  if (wanted.has('oracle-aggregator') || wanted.has('oracle-aggregator-t2')) {
    wanted.add('oracle-peer-a')
    wanted.add('oracle-peer-b')
  }
  const devnet = await startDevnet({
    chains: [
      { chainId: 31337, port: 0 },
      { chainId: 31338, port: 0 },
    ],
  })
  try {
    const depositTransactionId = await depositOnce(devnet)
    // The caller's shell may hold oracle variables of its own: every one the roles use is set here.
    const { DEVNET: _devnet, PEERS: _peers, ORACLE_SIGNERS: _signers, ...inherited } = process.env
    const baseEnv: NodeJS.ProcessEnv = {
      ...inherited,
      ...devnetEnvironment(devnet),
      ENVIRONMENT: 'local',
      HTTP_PORT: '0',
      HOST: '127.0.0.1',
      API_KEYS: `${ORACLE_API_KEY}:bench`,
    }
    const start = async (service: OracleServiceName, peers: readonly string[]) => {
      const role = ROLES[service]
      const child = await spawnServer({
        name: `oracle (${service})`,
        args: [...options.nodeFlags, ORACLE_MAIN],
        cwd: options.cwd,
        env: {
          ...baseEnv,
          ECDSA_PRIVATE_KEY: role.signer.privateKey,
          ...(role.threshold === undefined
            ? {}
            : {
                PEERS: peers.map((url) => `${url}|${ORACLE_API_KEY}`).join(';'),
                ORACLE_SIGNERS: ALLOWLIST,
                ORACLE_SIGNERS_THRESHOLD: String(role.threshold),
              }),
        },
        urls: { [service]: /oracle listening on (http:\/\/[^\s"]+)/ },
        startTimeoutMs: START_TIMEOUT_MS,
      })
      return [service, { url: child.urls[service]!, pid: child.pid }] as const
    }
    const peers = await Promise.all(
      (['oracle-peer-a', 'oracle-peer-b'] as const)
        .filter((name) => wanted.has(name))
        .map((name) => start(name, [])),
    )
    const peerUrls = peers.map(([, endpoint]) => endpoint.url)
    const aggregators = await Promise.all(
      (['oracle-aggregator', 'oracle-aggregator-t2'] as const)
        .filter((name) => wanted.has(name))
        .map((name) => start(name, peerUrls)),
    )
    return {
      services: Object.fromEntries([...peers, ...aggregators]),
      facts: { depositTransactionId },
      stop: () => devnet.stop(),
    }
  } catch (error) {
    await devnet.stop()
    throw error
  }
}
