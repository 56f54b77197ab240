/**
 * The local EVM devnet: anvil chains with the stablecoin, the depository, the multicaller and the hub
 * oracle contract deployed at fixed addresses, and the solver and test users funded.
 *
 * Address plan (identical on every chain, because each chain starts from an empty state and the same
 * deployer spends the same nonces):
 * - deployer #0 nonce 0: PontisUSD (stablecoin)    0x5FbDB2315678afecb367f032d93F642f64180aa3
 * - deployer #0 nonce 1: PontisDepository          0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512
 * - deployer #0 nonce 2: PontisOracleHub           0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0
 *   (the hub oracle contract of configs/chains.hub.local.json: domain "PontisOracle"/"1", signer
 *   account #9, threshold 1; deployed on every chain, the hub config names chain 31337)
 * - deployer #0 nonce 3: PontisDepositReceiver     0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9
 *   (forwards direct native deposits, `explicitDeposit: false`, into the depository; the chain
 *   record's `contracts.relayReceiver`)
 * - account #7 nonce 0: PontisMulticaller           0xef11D1c2aA48826D4c41e54ab82D1Ff5Ad8A64Ca
 *   (which creates its PontisCallExecutor at its own nonce 1: 0x4FF3706b36a51e0e0A6e30AeAb70cF4EB71175E2)
 * - account #10 (DEX_DEPLOYER): the price feeds, WETH9, Uniswap v3 and the THIN token, see dex.ts
 * Funding is minted by the stablecoin's owner, the minter account #8, so the deployer's nonce is 4
 * when the devnet is ready. The solver (#1) approves the multicaller for the stablecoin (its nonce 0).
 */
import {
  type Address,
  BaseError,
  type Chain,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  defineChain,
  encodeDeployData,
  getAddress,
  getContractAddress,
  type Hash,
  type Hex,
  http,
  isAddressEqual,
  isHex,
  maxUint256,
  type PublicClient,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import {
  pontisDepositoryAbi,
  pontisDepositoryBytecode,
  pontisDepositReceiverAbi,
  pontisDepositReceiverBytecode,
  pontisMulticallerAbi,
  pontisMulticallerBytecode,
  pontisOracleHubAbi,
  pontisOracleHubBytecode,
  pontisUsdAbi,
  pontisUsdBytecode,
} from './abis.gen.js'
import {
  ALLOCATOR,
  DEPLOYER,
  DEVNET_ACCOUNTS,
  DEX_DEPLOYER,
  type DevAccount,
  type DevnetAccounts,
  MINTER,
  MULTICALLER_DEPLOYER,
  ORACLE_SIGNER,
  SOLVER,
  USERS,
} from './accounts.js'
import { type AnvilInstance, startAnvil } from './anvil.js'
import { type BitcoinDevnet, type BitcoinDevnetOptions, startBitcoinDevnet } from './bitcoin/devnet.js'
import { DEX_STABLECOIN_FUNDING, type DevnetDex, deployDex } from './dex.js'
import { type EvmFaultPowers, evmFaultPowers } from './faults.js'
import { HUB_ORACLE_DOMAIN_NAME, HUB_ORACLE_DOMAIN_VERSION } from './hub.js'
import {
  type HyperliquidDevnet,
  type HyperliquidDevnetOptions,
  hyperliquidDevnetEnvironment,
  startHyperliquidDevnet,
} from './hyperliquid/index.js'
import {
  type LighterDevnet,
  type LighterDevnetOptions,
  lighterDevnetEnvironment,
  startLighterDevnet,
} from './lighter/index.js'
import { minedReceipt } from './receipts.js'
import { type SvmDevnet, type SvmDevnetOptions, startSvmDevnet } from './svm/devnet.js'
import { type SvmFaultPowers, svmFaultPowers } from './svm/faults.js'
import { connectionLedger, type RouteSimulator, startRouteSimulator } from './svm/routes/index.js'
import {
  startTronDevnet,
  type TronDevnet,
  type TronDevnetOptions,
  tronDevnetEnvironment,
} from './tron/index.js'
import { startZeroExSimulator, type ZeroExSimulator, type ZeroExSimulatorOptions } from './zeroex.js'

/** PontisUSD: deployer #0's CREATE address at nonce 0. */
export const STABLECOIN_ADDRESS: Address = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
/** PontisDepository: deployer #0's CREATE address at nonce 1. */
export const DEPOSITORY_ADDRESS: Address = '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512'
/** PontisDepositReceiver (direct native deposits into the depository): deployer #0's CREATE address at nonce 3. */
export const DEPOSIT_RECEIVER_ADDRESS: Address = '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9'
/** PontisMulticaller: account #7's CREATE address at nonce 0. */
export const MULTICALLER_ADDRESS: Address = '0xef11D1c2aA48826D4c41e54ab82D1Ff5Ad8A64Ca'
/** The PontisCallExecutor the multicaller creates in its constructor (the multicaller's nonce 1). */
export const MULTICALLER_EXECUTOR_ADDRESS: Address = '0x4FF3706b36a51e0e0A6e30AeAb70cF4EB71175E2'
/** PontisOracleHub, the hub oracle contract: deployer #0's CREATE address at nonce 2. */
export const HUB_ORACLE_ADDRESS: Address = '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0'

/** Stablecoin decimals (as USDC). */
export const STABLECOIN_DECIMALS = 6
/** Stablecoin minted to the solver on every chain: 1,000,000 USDC. */
export const SOLVER_STABLECOIN_FUNDING = 1_000_000n * 10n ** 6n
/** Stablecoin minted to each test user on every chain: 10,000 USDC. */
export const USER_STABLECOIN_FUNDING = 10_000n * 10n ** 6n

/** The chains of `configs/chains.local.json`, on the ports its defaults point at. */
export const DEFAULT_DEVNET_CHAINS: readonly DevnetChainOptions[] = [
  { chainId: 31337, port: 8545 },
  { chainId: 31338, port: 8546 },
]

/** The prefix of the variables `configs/chains.local.json` reads for each local chain. */
export const LOCAL_CHAIN_ENV_PREFIX: Readonly<Record<number, string>> = { 31337: 'LOCAL_A', 31338: 'LOCAL_B' }

const CHAIN_NAMES: Readonly<Record<number, string>> = { 31337: 'pontis-local-a', 31338: 'pontis-local-b' }

// Explicit gas limits: no estimation round trips, and no estimate taken against a state where an
// earlier transaction (the deployment a mint depends on) is still pending under --block-time.
const DEPLOY_GAS = 3_000_000n
const MINT_GAS = 100_000n
const APPROVE_GAS = 100_000n

/** One chain to start. */
export interface DevnetChainOptions {
  chainId: number
  /** 0 or omitted picks a free port. */
  port?: number
  /** Seconds between blocks; omitted means automine. */
  blockTime?: number
}

/** Options of {@link startDevnet}. */
export interface DevnetOptions {
  /** Defaults to {@link DEFAULT_DEVNET_CHAINS} (31337 on 8545, 31338 on 8546). */
  chains?: readonly DevnetChainOptions[]
  /** Interface anvil listens on (default 127.0.0.1). */
  host?: string
  /** Receives one line per step (chain started, contracts deployed, accounts funded). */
  log?: (message: string) => void
  /** Also start the SVM chain (LiteSVM behind a Solana RPC) and its swap-route simulator. */
  svm?: DevnetSvmOptions
  /** Also start the Bitcoin regtest simulator (the Esplora HTTP API). */
  bitcoin?: Omit<BitcoinDevnetOptions, 'log' | 'host'>
  /** Also start the perpetuals-exchange (Lighter) venue simulator. */
  lighter?: Omit<LighterDevnetOptions, 'log' | 'host'>
  /** Also start the Hyperliquid core API simulator (`/info`, `/exchange`, `/explorer`). */
  hyperliquid?: Omit<HyperliquidDevnetOptions, 'log' | 'host'>
  /** Also start the Tron full-node API simulator. */
  tron?: Omit<TronDevnetOptions, 'log' | 'host'>
  /**
   * Also start the 0x Swap API v2 simulator (see zeroex.ts) over every EVM chain: quotes from the
   * devnet's Uniswap v3 pools, transactions through its SwapRouter.
   */
  zeroEx?: Omit<ZeroExSimulatorOptions, 'log' | 'host' | 'chains'>
}

/** The SVM part of a devnet: the chain's options plus the route simulator's port. */
export interface DevnetSvmOptions extends Omit<SvmDevnetOptions, 'log' | 'host'> {
  /** Port of the swap-route simulator; 0 picks a free one. Default 8901 when `port` is 8899, else 0. */
  routesPort?: number
}

/** The SVM chain and its route simulator. */
export interface DevnetSvm {
  readonly chain: SvmDevnet
  readonly rpcUrl: string
  readonly routes: RouteSimulator
  /** Base URL of the aggregator-shaped route API (`/quote`, `/swap-instructions`). */
  readonly routesUrl: string
  /** Rollbacks, paused slots, evicted transactions and expired blockhashes on demand (svm/faults.ts). */
  readonly faults: SvmFaultPowers
}

/** A started devnet chain. */
export interface DevnetChain {
  chainId: number
  rpcUrl: string
  port: number
  /** A viem chain definition for clients of this chain. */
  chain: Chain
  contracts: {
    stablecoin: Address
    depository: Address
    multicaller: Address
    oracleHub: Address
    depositReceiver: Address
  }
  /** The price feeds and the Uniswap v3 deployment with its seeded pools (see dex.ts). */
  dex: DevnetDex
  /** Reorganisations, stalled mining, dropped transactions and fee spikes on demand (see faults.ts). */
  faults: EvmFaultPowers
}

/** A running devnet. */
export interface Devnet {
  chains: DevnetChain[]
  /** Present when started with the `svm` option. */
  svm?: DevnetSvm
  /** Present when started with the `bitcoin` option. */
  bitcoin?: BitcoinDevnet
  /** Present when started with the `lighter` option. */
  lighter?: LighterDevnet
  /** Present when started with the `hyperliquid` option. */
  hyperliquid?: HyperliquidDevnet
  /** Present when started with the `tron` option. */
  tron?: TronDevnet
  /** Present when started with the `zeroEx` option. */
  zeroEx?: ZeroExSimulator
  accounts: DevnetAccounts
  /** Stops every anvil of the devnet. */
  stop(): Promise<void>
}

/** A viem chain definition for a devnet chain served at `rpcUrl`. */
export function devnetChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: CHAIN_NAMES[chainId] ?? `pontis-devnet-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    testnet: true,
  })
}

/**
 * Starts the chains, deploys PontisUSD, PontisDepository, PontisOracleHub (signer: the oracle signer
 * #9, threshold 1) and PontisMulticaller on each at the fixed addresses, mints stablecoin to the
 * solver and the test users, and has the solver approve the multicaller for the stablecoin
 * (unlimited). On any failure every started chain is stopped again.
 *
 * @throws Error when a chain cannot start (port taken, no anvil binary) or a deployment lands elsewhere
 *   than the address plan says.
 */
export async function startDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  const log = options.log ?? (() => {})
  const wanted = options.chains ?? DEFAULT_DEVNET_CHAINS
  const ids = wanted.map((chain) => chain.chainId)
  if (new Set(ids).size !== ids.length)
    throw new Error(`devnet chain ids must be distinct, got ${ids.join(', ')}`)

  const started = await Promise.allSettled(
    wanted.map((chain) =>
      startAnvil({
        chainId: chain.chainId,
        port: chain.port,
        host: options.host,
        blockTime: chain.blockTime,
      }),
    ),
  )
  const anvils = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
  let svm: DevnetSvm | undefined
  let svmChain: SvmDevnet | undefined
  let bitcoin: BitcoinDevnet | undefined
  let lighter: LighterDevnet | undefined
  let tron: TronDevnet | undefined
  let hyperliquid: HyperliquidDevnet | undefined
  let zeroEx: ZeroExSimulator | undefined
  const stop = async (): Promise<void> => {
    await Promise.all([
      ...anvils.map((anvil) => anvil.stop()),
      svm?.routes.stop(),
      svmChain?.stop(),
      bitcoin?.stop(),
      lighter?.stop(),
      tron?.stop(),
      hyperliquid?.stop(),
      zeroEx?.stop(),
    ])
  }
  try {
    const failure = started.find((result) => result.status === 'rejected')
    if (failure) throw failure.reason
    for (const anvil of anvils) log(`chain ${anvil.chainId} listening on ${anvil.rpcUrl}`)
    const chains = await Promise.all(anvils.map((anvil) => setUpChain(anvil, log)))
    if (options.svm) {
      const { routesPort, ...chainOptions } = options.svm
      svmChain = await startSvmDevnet({
        ...chainOptions,
        ...(options.host ? { host: options.host } : {}),
        log,
      })
      const { Connection } = await import('@solana/web3.js')
      const routes = await startRouteSimulator({
        ledger: connectionLedger(new Connection(svmChain.rpcUrl, 'confirmed')),
        ...(options.host ? { host: options.host } : {}),
        port: routesPort ?? (chainOptions.port === 8899 ? 8901 : 0),
        log,
      })
      svm = {
        chain: svmChain,
        rpcUrl: svmChain.rpcUrl,
        routes,
        routesUrl: routes.url,
        faults: svmFaultPowers(svmChain.ledger),
      }
      log(`svm chain listening on ${svmChain.rpcUrl}; swap routes on ${routes.url}`)
    }
    if (options.bitcoin) {
      bitcoin = await startBitcoinDevnet({
        ...options.bitcoin,
        ...(options.host ? { host: options.host } : {}),
        log,
      })
      log(`bitcoin regtest simulator (Esplora API) on ${bitcoin.url}`)
    }
    if (options.lighter) {
      lighter = await startLighterDevnet({
        ...options.lighter,
        ...(options.host ? { host: options.host } : {}),
        log,
      })
      log(`lighter venue simulator (perpetuals-exchange API) on ${lighter.url}`)
    }
    if (options.hyperliquid) {
      hyperliquid = await startHyperliquidDevnet({
        ...options.hyperliquid,
        ...(options.host ? { host: options.host } : {}),
        log,
      })
      log(`hyperliquid core simulator (info/exchange API) on ${hyperliquid.url}`)
    }
    if (options.tron) {
      tron = await startTronDevnet({ ...options.tron, ...(options.host ? { host: options.host } : {}), log })
      log(`tron simulator (full-node HTTP API) on ${tron.url}`)
    }
    if (options.zeroEx) {
      zeroEx = await startZeroExSimulator({
        ...options.zeroEx,
        chains: chains.map((chain) => ({ chainId: chain.chainId, rpcUrl: chain.rpcUrl })),
        ...(options.host ? { host: options.host } : {}),
        log,
      })
    }
    return {
      chains,
      accounts: DEVNET_ACCOUNTS,
      stop,
      ...(svm ? { svm } : {}),
      ...(bitcoin ? { bitcoin } : {}),
      ...(lighter ? { lighter } : {}),
      ...(tron ? { tron } : {}),
      ...(hyperliquid ? { hyperliquid } : {}),
      ...(zeroEx ? { zeroEx } : {}),
    }
  } catch (error) {
    await stop()
    throw error
  }
}

async function setUpChain(anvil: AnvilInstance, log: (message: string) => void): Promise<DevnetChain> {
  const chain = devnetChain(anvil.chainId, anvil.rpcUrl)
  const transport = http(anvil.rpcUrl)
  const client = createPublicClient({ chain, transport, pollingInterval: 50 })
  const deployer = createWalletClient({ chain, transport, account: privateKeyToAccount(DEPLOYER.privateKey) })
  const minter = createWalletClient({ chain, transport, account: privateKeyToAccount(MINTER.privateKey) })
  const solver = createWalletClient({ chain, transport, account: privateKeyToAccount(SOLVER.privateKey) })
  const multicallerDeployer = createWalletClient({
    chain,
    transport,
    account: privateKeyToAccount(MULTICALLER_DEPLOYER.privateKey),
  })

  for (const account of [DEPLOYER, MULTICALLER_DEPLOYER, SOLVER]) {
    const startNonce = await client.getTransactionCount({ address: account.address })
    if (startNonce !== 0) {
      throw new Error(
        `chain ${anvil.chainId}: account #${account.index} has nonce ${startNonce}, expected a fresh chain (nonce 0)`,
      )
    }
  }
  // The feeds and the DEX go out from their own deployer (#10) while the Pontis contracts deploy; only
  // their liquidity waits for the USDC minted below.
  let stablecoinFunded!: { resolve: () => void; reject: (error: unknown) => void }
  const funded = new Promise<void>((resolve, reject) => {
    stablecoinFunded = { resolve, reject }
  })
  const dexDeployment = deployDex({
    chainId: anvil.chainId,
    client,
    stablecoin: STABLECOIN_ADDRESS,
    stablecoinFunded: funded,
  })
  // Awaited below; until then a failure must not count as unhandled.
  dexDeployment.catch(() => {})
  try {
    return await setUpPontisContracts()
  } catch (error) {
    stablecoinFunded.reject(error)
    // The DEX deployment fails with it (or already has): report the first cause.
    await dexDeployment.catch(() => {})
    throw error
  }

  async function setUpPontisContracts(): Promise<DevnetChain> {
    const stablecoinHash = await deployer.deployContract({
      abi: pontisUsdAbi,
      bytecode: pontisUsdBytecode,
      args: [MINTER.address],
      nonce: 0,
      gas: DEPLOY_GAS,
    })
    const depositoryHash = await deployer.deployContract({
      abi: pontisDepositoryAbi,
      bytecode: pontisDepositoryBytecode,
      args: [ALLOCATOR.address],
      nonce: 1,
      gas: DEPLOY_GAS,
    })
    const oracleHubHash = await deployer.deployContract({
      abi: pontisOracleHubAbi,
      bytecode: pontisOracleHubBytecode,
      args: [HUB_ORACLE_DOMAIN_NAME, HUB_ORACLE_DOMAIN_VERSION, [ORACLE_SIGNER.address], 1n],
      nonce: 2,
      gas: DEPLOY_GAS,
    })
    const receiverHash = await deployer.deployContract({
      abi: pontisDepositReceiverAbi,
      bytecode: pontisDepositReceiverBytecode,
      args: [DEPOSITORY_ADDRESS],
      nonce: 3,
      gas: DEPLOY_GAS,
    })
    const multicallerHash = await multicallerDeployer.deployContract({
      abi: pontisMulticallerAbi,
      bytecode: pontisMulticallerBytecode,
      nonce: 0,
      gas: DEPLOY_GAS,
    })
    const stablecoin = await deployedAddress(
      client,
      stablecoinHash,
      DEPLOYER,
      0,
      STABLECOIN_ADDRESS,
      'PontisUSD',
    )
    const depository = await deployedAddress(
      client,
      depositoryHash,
      DEPLOYER,
      1,
      DEPOSITORY_ADDRESS,
      'PontisDepository',
    )
    const oracleHub = await deployedAddress(
      client,
      oracleHubHash,
      DEPLOYER,
      2,
      HUB_ORACLE_ADDRESS,
      'PontisOracleHub',
    )
    const depositReceiver = await deployedAddress(
      client,
      receiverHash,
      DEPLOYER,
      3,
      DEPOSIT_RECEIVER_ADDRESS,
      'PontisDepositReceiver',
    )
    const multicaller = await deployedAddress(
      client,
      multicallerHash,
      MULTICALLER_DEPLOYER,
      0,
      MULTICALLER_ADDRESS,
      'PontisMulticaller',
    )
    const executor = await client.readContract({
      address: multicaller,
      abi: pontisMulticallerAbi,
      functionName: 'executor',
    })
    const plannedExecutor = getContractAddress({ from: multicaller, nonce: 1n })
    if (
      !isAddressEqual(executor, MULTICALLER_EXECUTOR_ADDRESS) ||
      !isAddressEqual(plannedExecutor, executor)
    ) {
      throw new Error(`PontisCallExecutor created at ${executor}, expected ${MULTICALLER_EXECUTOR_ADDRESS}`)
    }
    log(
      `chain ${anvil.chainId}: PontisUSD at ${stablecoin}, PontisDepository at ${depository}, PontisOracleHub at ${oracleHub}, PontisDepositReceiver at ${depositReceiver}, PontisMulticaller at ${multicaller}`,
    )

    const funding: Array<[Address, bigint]> = [
      [SOLVER.address, SOLVER_STABLECOIN_FUNDING],
      [DEX_DEPLOYER.address, DEX_STABLECOIN_FUNDING],
      ...USERS.map((user): [Address, bigint] => [user.address, USER_STABLECOIN_FUNDING]),
    ]
    let nonce = await client.getTransactionCount({ address: MINTER.address })
    const hashes: Hash[] = []
    for (const [to, amount] of funding) {
      hashes.push(
        await minter.writeContract({
          address: stablecoin,
          abi: pontisUsdAbi,
          functionName: 'mint',
          args: [to, amount],
          nonce: nonce++,
          gas: MINT_GAS,
        }),
      )
    }
    // The solver's first transaction on a fresh chain (nothing else uses its key during start-up).
    const approveHash = await solver.writeContract({
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName: 'approve',
      args: [multicaller, maxUint256],
      nonce: 0,
      gas: APPROVE_GAS,
    })
    for (const hash of hashes) {
      const receipt = await minedReceipt(client, hash)
      if (receipt.status !== 'success') throw new Error(`chain ${anvil.chainId}: mint ${hash} reverted`)
    }
    stablecoinFunded.resolve()
    const approval = await minedReceipt(client, approveHash)
    if (approval.status !== 'success')
      throw new Error(`chain ${anvil.chainId}: approval ${approveHash} reverted`)
    log(
      `chain ${anvil.chainId}: minted USDC to the solver and ${USERS.length} test users; the solver approved the multicaller`,
    )

    const dex = await dexDeployment
    log(
      `chain ${anvil.chainId}: Uniswap v3 (factory ${dex.factory}, SwapRouter ${dex.swapRouter}, QuoterV2 ${dex.quoter}), WETH9 ${dex.weth}, pools WETH/USDC ${dex.pools.wethUsdc} and THIN/WETH ${dex.pools.thinWeth}, ${Object.keys(dex.feeds).length} price feeds`,
    )
    return {
      chainId: anvil.chainId,
      rpcUrl: anvil.rpcUrl,
      port: anvil.port,
      chain,
      contracts: { stablecoin, depository, multicaller, oracleHub, depositReceiver },
      dex,
      faults: evmFaultPowers(anvil.rpcUrl),
    }
  }
}

async function deployedAddress(
  client: PublicClient,
  hash: Hash,
  deployer: DevAccount,
  nonce: number,
  expected: Address,
  name: string,
): Promise<Address> {
  const receipt = await minedReceipt(client, hash)
  const planned = getContractAddress({ from: deployer.address, nonce: BigInt(nonce) })
  const actual = receipt.contractAddress
  if (receipt.status !== 'success' || !actual) throw new Error(`${name} deployment ${hash} failed`)
  // Both checks: the constant must match the CREATE rule, and the chain must agree with both.
  if (!isAddressEqual(planned, expected) || !isAddressEqual(actual, expected)) {
    throw new Error(
      `${name} deployed at ${actual}, expected ${expected} (account #${deployer.index} nonce ${nonce})`,
    )
  }
  return expected
}

/** Options of {@link deployOracleHub}. */
export interface DeployOracleHubOptions {
  rpcUrl: string
  chainId: number
  /** Pays for and sends the deployment (its next nonce is used). */
  deployerKey: Hex
  /** EIP-712 domain name; defaults to {@link HUB_ORACLE_DOMAIN_NAME}. */
  name?: string
  /** EIP-712 domain version; defaults to {@link HUB_ORACLE_DOMAIN_VERSION}. */
  version?: string
  /** Nonzero and distinct. */
  signers: readonly Address[]
  /** Signatures an execution needs: 1 to `signers.length`. */
  threshold: number
}

/**
 * Deploys another PontisOracleHub (e.g. with a 2-of-3 signer set) and waits for it.
 *
 * @returns The new contract's address.
 * @throws Error when the constructor rejects the signers or the threshold, naming the contract error
 *   (e.g. `PontisOracleHub constructor reverted: ZeroSigner(1)`; also `DuplicateSigner(index, signer)`,
 *   `InvalidThreshold(threshold, signerCount)`), or when the deployment fails.
 */
export async function deployOracleHub(options: DeployOracleHubOptions): Promise<Address> {
  const chain = devnetChain(options.chainId, options.rpcUrl)
  const transport = http(options.rpcUrl)
  const client = createPublicClient({ chain, transport, pollingInterval: 50 })
  const account = privateKeyToAccount(options.deployerKey)
  const args = [
    options.name ?? HUB_ORACLE_DOMAIN_NAME,
    options.version ?? HUB_ORACLE_DOMAIN_VERSION,
    [...options.signers],
    BigInt(options.threshold),
  ] as const
  // The dry run turns a constructor revert into a named error instead of a mined failed transaction.
  try {
    await client.call({
      account,
      data: encodeDeployData({ abi: pontisOracleHubAbi, bytecode: pontisOracleHubBytecode, args }),
    })
  } catch (error) {
    throw new Error(`PontisOracleHub constructor reverted: ${describeHubRevert(error)}`, { cause: error })
  }
  const hash = await createWalletClient({ chain, transport, account }).deployContract({
    abi: pontisOracleHubAbi,
    bytecode: pontisOracleHubBytecode,
    args,
  })
  const receipt = await minedReceipt(client, hash)
  if (receipt.status !== 'success' || !receipt.contractAddress)
    throw new Error(`PontisOracleHub deployment ${hash} failed`)
  return getAddress(receipt.contractAddress)
}

/** `Name(arg, ...)` of a PontisOracleHub custom error inside a viem error, else the error's message. */
function describeHubRevert(error: unknown): string {
  if (!(error instanceof BaseError)) return String(error)
  const withData = error.walk((inner) => isHex((inner as { data?: unknown }).data))
  const data = (withData as { data?: unknown } | null)?.data
  if (isHex(data) && data.length >= 10) {
    try {
      const decoded = decodeErrorResult({ abi: pontisOracleHubAbi, data })
      return `${decoded.errorName}(${(decoded.args ?? []).map(String).join(', ')})`
    } catch {
      // Not one of the hub's errors: fall through to the message.
    }
  }
  return error.shortMessage
}

/**
 * The environment variables `configs/chains.local.json` reads, pointing at this devnet: for chain
 * 31337 the `LOCAL_A_*` variables, for 31338 the `LOCAL_B_*` ones (other chain ids have no entry in
 * that config and are skipped). Use it when the devnet runs on other ports than the defaults.
 */
export function devnetEnvironment(
  devnet: Pick<Devnet, 'chains' | 'svm' | 'bitcoin' | 'lighter' | 'hyperliquid' | 'tron' | 'zeroEx'>,
): Record<string, string> {
  const env: Record<string, string> = {
    ...(devnet.lighter ? lighterDevnetEnvironment(devnet.lighter) : {}),
    ...(devnet.hyperliquid ? hyperliquidDevnetEnvironment(devnet.hyperliquid) : {}),
    ...(devnet.tron ? tronDevnetEnvironment(devnet.tron) : {}),
  }
  if (devnet.bitcoin) {
    env.LOCAL_BTC_ESPLORA_URL = devnet.bitcoin.url
    env.LOCAL_BTC_PUBLIC_ESPLORA_URL = devnet.bitcoin.url
  }
  if (devnet.svm) {
    env.LOCAL_SVM_RPC_URL = devnet.svm.rpcUrl
    env.LOCAL_SVM_PUBLIC_RPC_URL = devnet.svm.rpcUrl
    env.LOCAL_SVM_SWAP_API_URL = devnet.svm.routesUrl
  }
  for (const chain of devnet.chains) {
    const prefix = LOCAL_CHAIN_ENV_PREFIX[chain.chainId]
    if (prefix === undefined) continue
    env[`${prefix}_RPC_URL`] = chain.rpcUrl
    env[`${prefix}_PUBLIC_RPC_URL`] = chain.rpcUrl
    env[`${prefix}_USDC_ADDRESS`] = chain.contracts.stablecoin
    env[`${prefix}_DEPOSITORY_ADDRESS`] = chain.contracts.depository
    env[`${prefix}_MULTICALLER_ADDRESS`] = chain.contracts.multicaller
    env[`${prefix}_DEPOSIT_RECEIVER_ADDRESS`] = chain.contracts.depositReceiver
    if (devnet.zeroEx) env[`${prefix}_ZEROEX_API_URL`] = devnet.zeroEx.url
    if (devnet.zeroEx?.apiKey) env[`${prefix}_ZEROEX_API_KEY`] = devnet.zeroEx.apiKey
  }
  return env
}
