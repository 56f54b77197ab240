/**
 * `pontis deploy`: puts the depository, its deposit receiver, the fill multicaller and (on request) the oracle hub on an EVM
 * chain at CREATE2 addresses of the standard deterministic-deployment proxy, verifies the code at each
 * address, and answers the config entries that name them. A rerun finds the contracts already there
 * and sends nothing.
 */
import {
  PONTIS_CALL_EXECUTOR,
  PONTIS_DEPOSIT_RECEIVER,
  PONTIS_DEPOSITORY,
  PONTIS_MULTICALLER,
  PONTIS_ORACLE_HUB,
} from '@pontis/devnet'
import {
  type Address,
  concatHex,
  createPublicClient,
  encodeAbiParameters,
  encodeDeployData,
  getAddress,
  getContractAddress,
  type Hex,
  http,
  isAddress,
  keccak256,
  numberToHex,
  type PublicClient,
  padHex,
  parseTransaction,
  recoverTransactionAddress,
  type TransactionSerializable,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

/** The deterministic-deployment proxy (Arachnid's), present on anvil and most public chains. */
export const DETERMINISTIC_DEPLOYER: Address = '0x4e59b44847b379578588920ca78fbf26c0b4956c'

/** The salt used when none is given: `keccak256("pontis")`. */
export const DEFAULT_DEPLOY_SALT: Hex = keccak256(toHex('pontis'))

/** Signs the deployment transactions. */
export interface DeploySigner {
  readonly address: Address
  /** A description for messages (never the key). */
  readonly label: string
  /** The signed, serialized transaction. */
  signTransaction(transaction: TransactionSerializable & { chainId: number }): Promise<Hex>
}

/** A signer holding the key in memory (read from an environment variable by the command). */
export function privateKeySigner(privateKey: Hex): DeploySigner {
  const account = privateKeyToAccount(privateKey)
  return {
    address: account.address,
    label: `key of ${account.address}`,
    signTransaction: (transaction) => account.signTransaction(transaction),
  }
}

/**
 * A signer behind JSON-RPC `eth_signTransaction` (web3signer, clef, or a KMS reached through one).
 * The answer is a raw transaction (web3signer) or `{ raw }` (clef); it is parsed and its signer
 * recovered, so a signer that signs something else, or for someone else, is refused.
 */
export function remoteSigner(url: string, address: Address): DeploySigner {
  const from = getAddress(address)
  // Messages name the origin only: a signer URL may carry credentials.
  const where = new URL(url).origin
  return {
    address: from,
    label: `remote signer ${where} for ${from}`,
    async signTransaction(transaction) {
      const request = {
        from,
        to: transaction.to,
        data: transaction.data,
        value: numberToHex(transaction.value ?? 0n),
        gas: numberToHex(transaction.gas ?? 0n),
        nonce: numberToHex(transaction.nonce ?? 0),
        chainId: numberToHex(transaction.chainId),
        ...(transaction.maxFeePerGas !== undefined
          ? {
              type: '0x2',
              maxFeePerGas: numberToHex(transaction.maxFeePerGas),
              maxPriorityFeePerGas: numberToHex(transaction.maxPriorityFeePerGas ?? 0n),
            }
          : { gasPrice: numberToHex(transaction.gasPrice ?? 0n) }),
      }
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_signTransaction', params: [request] }),
        signal: AbortSignal.timeout(60_000),
      }).catch((error: unknown) => {
        throw new DeployError(
          `remote signer ${where} did not answer: ${error instanceof Error ? error.message : String(error)}`,
        )
      })
      const body = (await response.json().catch(() => undefined)) as
        | { result?: unknown; error?: { message?: string } }
        | undefined
      if (body?.error !== undefined || body?.result === undefined) {
        throw new DeployError(
          `remote signer ${where} refused eth_signTransaction: ${body?.error?.message ?? `HTTP ${response.status}`}`,
        )
      }
      const raw = typeof body.result === 'string' ? body.result : (body.result as { raw?: unknown }).raw
      if (typeof raw !== 'string' || !/^0x[0-9a-fA-F]+$/.test(raw)) {
        throw new DeployError(`remote signer ${where} answered no raw transaction`)
      }
      const signed = raw as Hex
      const parsed = parseTransaction(signed)
      const signer = await recoverTransactionAddress({ serializedTransaction: signed as never })
      if (getAddress(signer) !== from) {
        throw new DeployError(`remote signer ${where} signed with ${signer}, not ${from}`)
      }
      if (
        parsed.to?.toLowerCase() !== transaction.to?.toLowerCase() ||
        parsed.data !== transaction.data ||
        parsed.nonce !== transaction.nonce ||
        parsed.chainId !== transaction.chainId ||
        parsed.gas !== transaction.gas ||
        (parsed.value ?? 0n) !== (transaction.value ?? 0n) ||
        // Fees too: a signer raising them would spend the account's funds.
        parsed.maxFeePerGas !== transaction.maxFeePerGas ||
        parsed.gasPrice !== transaction.gasPrice
      ) {
        throw new DeployError(`remote signer ${where} signed a different transaction than asked`)
      }
      return signed
    },
  }
}

/** A deployment problem the operator has to act on. */
export class DeployError extends Error {
  override name = 'DeployError'
}

/** The hub's constructor arguments. */
export interface HubParameters {
  readonly name: string
  readonly version: string
  readonly signers: readonly Address[]
  readonly threshold: bigint
}

/** What to deploy. */
export interface DeployPlanOptions {
  readonly chainId: number
  /** The depository's allocator: the key whose signatures release deposits. */
  readonly allocator: Address
  readonly salt?: Hex
  readonly hub?: HubParameters
}

/** One contract of a plan. */
export interface PlannedContract {
  readonly contractName: string
  readonly initCode: Hex
  readonly address: Address
  readonly deployedBytecode: Hex
  /** The 32-byte values the constructor writes into the runtime code's immutables. */
  readonly immutables: readonly Hex[]
  /** Set when another planned contract's constructor creates this one (nothing is sent for it). */
  readonly createdBy?: string
}

const EIP712_DOMAIN_TYPEHASH = keccak256(
  toHex('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
)

function domainSeparator(name: string, version: string, chainId: number, verifyingContract: Address): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'address' },
      ],
      [
        EIP712_DOMAIN_TYPEHASH,
        keccak256(toHex(name)),
        keccak256(toHex(version)),
        BigInt(chainId),
        verifyingContract,
      ],
    ),
  )
}

const word = (value: Hex | bigint | number): Hex =>
  typeof value === 'string'
    ? padHex(value.toLowerCase() as Hex, { size: 32 })
    : padHex(numberToHex(value), { size: 32 })

function create2Address(salt: Hex, initCode: Hex): Address {
  return getContractAddress({ opcode: 'CREATE2', from: DETERMINISTIC_DEPLOYER, salt, bytecode: initCode })
}

/** The contracts, in deployment order (the receiver needs the depository's code at construction). */
export function planDeployment(options: DeployPlanOptions): PlannedContract[] {
  const salt = options.salt ?? DEFAULT_DEPLOY_SALT
  const { chainId } = options
  const allocator = getAddress(options.allocator)
  const depositoryInit = encodeDeployData({
    abi: PONTIS_DEPOSITORY.abi,
    bytecode: PONTIS_DEPOSITORY.bytecode,
    args: [allocator],
  })
  const depository = create2Address(salt, depositoryInit)
  const receiverInit = encodeDeployData({
    abi: PONTIS_DEPOSIT_RECEIVER.abi,
    bytecode: PONTIS_DEPOSIT_RECEIVER.bytecode,
    args: [depository],
  })
  const multicaller = create2Address(salt, PONTIS_MULTICALLER.bytecode)
  // The multicaller's constructor creates its executor: CREATE from the multicaller at nonce 1.
  const executor = getContractAddress({ opcode: 'CREATE', from: multicaller, nonce: 1n })
  const plan: PlannedContract[] = [
    {
      contractName: PONTIS_DEPOSITORY.contractName,
      initCode: depositoryInit,
      address: depository,
      deployedBytecode: PONTIS_DEPOSITORY.deployedBytecode,
      // PontisDepository: allocator, _cachedChainId, _cachedDomainSeparator ("RelayDepository", "1").
      immutables: [
        word(allocator),
        word(chainId),
        domainSeparator('RelayDepository', '1', chainId, depository),
      ],
    },
    {
      contractName: PONTIS_DEPOSIT_RECEIVER.contractName,
      initCode: receiverInit,
      address: create2Address(salt, receiverInit),
      deployedBytecode: PONTIS_DEPOSIT_RECEIVER.deployedBytecode,
      immutables: [word(depository)],
    },
    {
      contractName: PONTIS_MULTICALLER.contractName,
      initCode: PONTIS_MULTICALLER.bytecode,
      address: multicaller,
      deployedBytecode: PONTIS_MULTICALLER.deployedBytecode,
      immutables: [word(executor)],
    },
    {
      contractName: PONTIS_CALL_EXECUTOR.contractName,
      initCode: PONTIS_CALL_EXECUTOR.bytecode,
      address: executor,
      deployedBytecode: PONTIS_CALL_EXECUTOR.deployedBytecode,
      immutables: [word(multicaller)],
      createdBy: PONTIS_MULTICALLER.contractName,
    },
  ]
  if (options.hub !== undefined) {
    const { name, version, signers, threshold } = options.hub
    const hubInit = encodeDeployData({
      abi: PONTIS_ORACLE_HUB.abi,
      bytecode: PONTIS_ORACLE_HUB.bytecode,
      args: [name, version, signers.map((signer) => getAddress(signer)), threshold],
    })
    const hub = create2Address(salt, hubInit)
    plan.push({
      contractName: PONTIS_ORACLE_HUB.contractName,
      initCode: hubInit,
      address: hub,
      deployedBytecode: PONTIS_ORACLE_HUB.deployedBytecode,
      // PontisOracleHub: threshold, _nameHash, _versionHash, _cachedChainId, _cachedDomainSeparator.
      immutables: [
        word(threshold),
        keccak256(toHex(name)),
        keccak256(toHex(version)),
        word(chainId),
        domainSeparator(name, version, chainId, hub),
      ],
    })
  }
  return plan
}

const PUSH1 = 0x60
const PUSH32 = 0x7f

/**
 * Byte offsets of the immutables in compiled runtime code: solc leaves each one as `PUSH32` of 32
 * zero bytes for the constructor to fill (the optimizer writes a real zero as `PUSH0`).
 */
export function immutableSlots(deployedBytecode: Hex): number[] {
  const code = Buffer.from(deployedBytecode.slice(2), 'hex')
  const slots: number[] = []
  for (let index = 0; index < code.length; index++) {
    const opcode = code[index] as number
    if (opcode < PUSH1 || opcode > PUSH32) continue
    const size = opcode - PUSH1 + 1
    if (opcode === PUSH32 && code.subarray(index + 1, index + 33).every((byte) => byte === 0)) {
      slots.push(index + 1)
    }
    index += size
  }
  return slots
}

/**
 * Why the runtime code at an address is not the planned contract, or undefined when it is: equal to
 * the artifact's runtime code byte for byte outside the immutables, and each immutable one of the
 * values this plan's constructor writes.
 */
export function codeMismatch(planned: PlannedContract, code: Hex): string | undefined {
  const expected = Buffer.from(planned.deployedBytecode.slice(2), 'hex')
  const actual = Buffer.from(code.slice(2), 'hex')
  if (actual.length !== expected.length) {
    return `its runtime code is ${actual.length} bytes, ${planned.contractName}'s is ${expected.length}`
  }
  const allowed = new Set(planned.immutables.map((value) => value.toLowerCase()))
  const slots = immutableSlots(planned.deployedBytecode)
  let from = 0
  for (const slot of [...slots, expected.length]) {
    if (!actual.subarray(from, slot).equals(expected.subarray(from, slot))) {
      return `its runtime code differs from ${planned.contractName}'s between bytes ${from} and ${slot}`
    }
    if (slot === expected.length) break
    const value = `0x${actual.subarray(slot, slot + 32).toString('hex')}`
    if (!allowed.has(value)) {
      return `its immutable at byte ${slot} is ${value}, not a value ${planned.contractName}'s constructor writes with these arguments`
    }
    from = slot + 32
  }
  return undefined
}

/** What happened to one contract. */
export interface DeployedContract {
  readonly contractName: string
  readonly address: Address
  /** `deployed`: this run sent its transaction; `existing`: it was already there. */
  readonly status: 'deployed' | 'existing'
  readonly transactionHash?: Hex
}

/** Options of {@link deployContracts}. */
export interface DeployOptions extends Omit<DeployPlanOptions, 'chainId'> {
  readonly rpcUrl: string
  /** Needed only when something has to be sent. */
  readonly signer?: DeploySigner
  /** Progress lines. */
  readonly log?: (line: string) => void
  /** How long to wait for each receipt (default 120 s). */
  readonly receiptTimeoutMs?: number
}

/** The outcome of a run. */
export interface DeployResult {
  readonly chainId: number
  readonly salt: Hex
  readonly contracts: readonly DeployedContract[]
  readonly depository: Address
  readonly relayReceiver: Address
  readonly multicaller: Address
  readonly oracleHub?: Address
}

async function sendThroughProxy(
  client: PublicClient,
  signer: DeploySigner,
  chainId: number,
  data: Hex,
  receiptTimeoutMs: number,
): Promise<Hex> {
  const [nonce, gas, block] = await Promise.all([
    client.getTransactionCount({ address: signer.address, blockTag: 'pending' }),
    client.estimateGas({ account: signer.address, to: DETERMINISTIC_DEPLOYER, data }),
    client.getBlock(),
  ])
  // 20% over the estimate: the proxy's CREATE2 forwards 63/64 of the gas left.
  const gasLimit = (gas * 12n) / 10n
  let fees: Pick<TransactionSerializable, 'maxFeePerGas' | 'maxPriorityFeePerGas' | 'gasPrice'>
  if (block.baseFeePerGas !== null && block.baseFeePerGas !== undefined) {
    const estimated = await client.estimateFeesPerGas()
    fees = { maxFeePerGas: estimated.maxFeePerGas, maxPriorityFeePerGas: estimated.maxPriorityFeePerGas }
  } else {
    fees = { gasPrice: await client.getGasPrice() }
  }
  const signed = await signer.signTransaction({
    chainId,
    to: DETERMINISTIC_DEPLOYER,
    data,
    nonce,
    gas: gasLimit,
    value: 0n,
    ...fees,
    ...(fees.maxFeePerGas !== undefined ? { type: 'eip1559' as const } : { type: 'legacy' as const }),
  } as TransactionSerializable & { chainId: number })
  const hash = await client.sendRawTransaction({ serializedTransaction: signed })
  const receipt = await client.waitForTransactionReceipt({ hash, timeout: receiptTimeoutMs })
  if (receipt.status !== 'success') throw new DeployError(`transaction ${hash} reverted`)
  return hash
}

/**
 * Deploys what is missing of the plan and verifies every contract.
 * @throws DeployError when the proxy is absent, an address holds other code, a deployment is needed
 *   but no signer was given, or a transaction fails.
 */
export async function deployContracts(options: DeployOptions): Promise<DeployResult> {
  const log = options.log ?? (() => {})
  const client = createPublicClient({ transport: http(options.rpcUrl, { retryCount: 1 }) })
  // Only the host is named: RPC URLs often carry a provider key in the path or query.
  const rpcHost = new URL(options.rpcUrl).host
  const chainId = await client.getChainId().catch((error: unknown) => {
    throw new DeployError(
      `${rpcHost} did not answer eth_chainId (${error instanceof Error ? error.name : 'error'})`,
    )
  })
  const proxyCode = await client.getCode({ address: DETERMINISTIC_DEPLOYER })
  if (proxyCode === undefined || proxyCode === '0x') {
    throw new DeployError(
      `chain ${chainId} has no deterministic-deployment proxy at ${DETERMINISTIC_DEPLOYER} (github.com/Arachnid/deterministic-deployment-proxy); deploy it first with its published pre-signed transaction`,
    )
  }
  const salt = options.salt ?? DEFAULT_DEPLOY_SALT
  const plan = planDeployment({ ...options, chainId, salt })
  const results: DeployedContract[] = []
  const deployedNow = new Set<string>()
  for (const planned of plan) {
    const existing = await client.getCode({ address: planned.address })
    if (existing !== undefined && existing !== '0x') {
      const mismatch = codeMismatch(planned, existing)
      if (mismatch !== undefined) {
        throw new DeployError(`${planned.address} already holds a different contract: ${mismatch}`)
      }
      const createdNow = planned.createdBy !== undefined && deployedNow.has(planned.createdBy)
      log(
        createdNow
          ? `${planned.contractName} created by ${planned.createdBy} at ${planned.address}; runtime code verified`
          : `${planned.contractName} already deployed and verified at ${planned.address}; nothing to do`,
      )
      results.push({
        contractName: planned.contractName,
        address: planned.address,
        status: createdNow ? 'deployed' : 'existing',
      })
      continue
    }
    if (planned.createdBy !== undefined) {
      throw new DeployError(
        `${planned.contractName} is missing at ${planned.address}, where ${planned.createdBy}'s constructor creates it`,
      )
    }
    if (options.signer === undefined) {
      throw new DeployError(
        `${planned.contractName} is not deployed at ${planned.address} and no signer was given`,
      )
    }
    log(`deploying ${planned.contractName} to ${planned.address} (${options.signer.label})`)
    const hash = await sendThroughProxy(
      client,
      options.signer,
      chainId,
      concatHex([salt, planned.initCode]),
      options.receiptTimeoutMs ?? 120_000,
    ).catch((error: unknown) => {
      if (error instanceof DeployError) throw error
      // viem's short message names the failure (a constructor revert, funds) without the RPC URL.
      const short = (error as { shortMessage?: unknown }).shortMessage
      throw new DeployError(
        `${planned.contractName} could not be deployed: ${typeof short === 'string' ? short : error instanceof Error ? error.name : String(error)}`,
      )
    })
    const code = await client.getCode({ address: planned.address })
    const mismatch = code === undefined || code === '0x' ? 'no code was created' : codeMismatch(planned, code)
    if (mismatch !== undefined) {
      throw new DeployError(
        `${planned.contractName} at ${planned.address} did not verify after ${hash}: ${mismatch}`,
      )
    }
    log(`${planned.contractName} deployed at ${planned.address} in ${hash}; runtime code verified`)
    deployedNow.add(planned.contractName)
    results.push({
      contractName: planned.contractName,
      address: planned.address,
      status: 'deployed',
      transactionHash: hash,
    })
  }
  const [depository, receiver, multicaller] = plan
  const hub = plan.find((planned) => planned.contractName === PONTIS_ORACLE_HUB.contractName)
  return {
    chainId,
    salt,
    contracts: results,
    depository: (depository as PlannedContract).address,
    relayReceiver: (receiver as PlannedContract).address,
    multicaller: (multicaller as PlannedContract).address,
    ...(hub !== undefined ? { oracleHub: hub.address } : {}),
  }
}

/** Options of {@link configEntries}. */
export interface ConfigEntriesOptions {
  /** The chain's `name` in the chain config (also the hub's `name`). */
  readonly chainName: string
  readonly hub?: Pick<HubParameters, 'name' | 'version'>
}

/** The config entries to paste: the chain entry's keys, and the hub block when a hub was deployed. */
export interface ConfigEntries {
  /** Keys of the chain's entry in `chains.<environment>.json`. */
  readonly chain: {
    readonly id: number
    readonly name: string
    readonly protocol: { readonly v2: { readonly chainId: string; readonly depository: Address } }
    readonly contracts: { readonly relayReceiver: Address }
    readonly plugin: { readonly multicaller: Address }
  }
  /** The `chains.hub.<environment>.json` document. */
  readonly hubFile?: {
    readonly hub: {
      readonly chainId: number
      readonly name: string
      readonly oracleContract: Address
      readonly domain: { readonly name: string; readonly version: string }
    }
  }
}

export function configEntries(result: DeployResult, options: ConfigEntriesOptions): ConfigEntries {
  return {
    chain: {
      id: result.chainId,
      name: options.chainName,
      protocol: { v2: { chainId: options.chainName, depository: result.depository } },
      contracts: { relayReceiver: result.relayReceiver },
      plugin: { multicaller: result.multicaller },
    },
    ...(result.oracleHub !== undefined && options.hub !== undefined
      ? {
          hubFile: {
            hub: {
              chainId: result.chainId,
              name: options.chainName,
              oracleContract: result.oracleHub,
              domain: { name: options.hub.name, version: options.hub.version },
            },
          },
        }
      : {}),
  }
}

/** Reads a `0x` 32-byte salt, or a text hashed into one. */
export function parseSalt(value: string): Hex {
  return /^0x[0-9a-fA-F]{64}$/.test(value) ? (value.toLowerCase() as Hex) : keccak256(toHex(value))
}

export function isEvmAddress(value: string): value is Address {
  return isAddress(value, { strict: false })
}
