/**
 * Bitcoin quoting: deposit PSBTs and what they cost.
 *
 * A deposit is one transaction the user signs: it spends the user's coins (read from Esplora) into
 * an output paying the vault, an OP_RETURN output carrying the 32-byte request id, and change back
 * to the user. Its fee is the fee rate times the signed virtual size, estimated per input type
 * before signing. Each input carries what a wallet needs to sign it: `witnessUtxo` (segwit),
 * `nonWitnessUtxo` (P2PKH: the whole previous transaction), `redeemScript` (P2SH-P2WPKH, built
 * from the user's public key) and `tapInternalKey` (P2TR, when the user's public key is given).
 *
 * About P2TR: the address holds the tweaked output key, not the internal key a wallet signs with
 * (BIP 86), so `tapInternalKey` is only set when the request passes the key
 * (`additionalData.userPublicKey`) and it tweaks to the address; otherwise wallets fill it in
 * themselves, as they do for their own inputs.
 *
 * With a deposit address the PSBT pays that address instead, untagged: the address itself names
 * the request.
 */
import {
  type CostEstimate,
  type DepositStepsRequest,
  type FillCostRequest,
  invalidAddressError,
  type OriginCostRequest,
  type OriginRequestOption,
  type OriginRequestOptions,
  PontisError,
  type PreparedStep,
  type QuotingCapability,
} from '@pontis/core/plugin'
import { Psbt } from 'bitcoinjs-lib'
import { BITCOIN_NATIVE_CURRENCY_ID } from './config.js'
import { type BitcoinChainContext, balanceOf, coinsOf, feeRate, vaultOf } from './context.js'
import { type ParsedAddress, parseAddress } from './identity.js'
import { depositAddressKeyPair, hash160, isPublicKey, p2wpkhAddress, taprootOutputKey } from './keys.js'
import {
  type Coin,
  estimateVsize,
  P2WPKH_SCRIPT_LENGTH,
  type Selection,
  type SpendableType,
  selectCoins,
  TAG_SCRIPT_LENGTH,
  tagScript,
} from './transactions.js'

/** Request members a Bitcoin origin honours. */
export const BITCOIN_ORIGIN_OPTIONS = [
  'additionalData.userPublicKey',
] as const satisfies readonly OriginRequestOption[]

const USER_PUBLIC_KEY = 'additionalData.userPublicKey'

/** How the depositor's coins are spent: the input type and the data a signer needs. */
export interface DepositorSpend {
  readonly address: ParsedAddress
  readonly type: SpendableType
  /** P2SH-P2WPKH: the redeem script (OP_0 <20-byte key hash>). */
  readonly redeemScript?: Uint8Array
  /** P2TR: the internal key (x-only), when known. */
  readonly tapInternalKey?: Uint8Array
}

function badKey(message: string): PontisError {
  return new PontisError('INVALID_REQUEST', `${USER_PUBLIC_KEY} ${message}`, { field: USER_PUBLIC_KEY })
}

function decodePublicKey(value: string): Uint8Array {
  const hex = value.trim().replace(/^0x/, '')
  if (!/^[0-9a-fA-F]*$/.test(hex) || (hex.length !== 66 && hex.length !== 64)) {
    throw badKey(
      'must be a public key in hex: 33 bytes compressed (02… or 03…) or, for P2TR, 32 bytes x-only',
    )
  }
  const key = new Uint8Array(Buffer.from(hex, 'hex'))
  if (!isPublicKey(key)) throw badKey('is not a valid secp256k1 public key')
  return key
}

/**
 * How `depositor` spends, with `options.userPublicKey` where the address needs it.
 * `forSigning` false (cost estimates) lets a P2SH address without a key be priced as P2SH-P2WPKH
 * and a P2WSH address as P2WPKH, instead of refusing.
 * @throws PontisError INVALID_ADDRESS for an address of another network, INVALID_REQUEST naming
 *   `additionalData.userPublicKey` when it is missing (P2SH) or does not match the address,
 *   UNSUPPORTED_ROUTE for P2WSH (a script this plugin cannot have signed).
 */
export function depositorSpend(
  context: BitcoinChainContext,
  depositor: string,
  options: OriginRequestOptions | undefined,
  forSigning: boolean,
): DepositorSpend {
  const result = parseAddress(depositor, context.network)
  if ('problem' in result) throw invalidAddressError('user', depositor, result.problem, context.label)
  const address = result.parsed
  const keyText = options?.userPublicKey
  switch (address.type) {
    case 'p2wpkh':
    case 'p2pkh':
      return { address, type: address.type }
    case 'p2tr': {
      if (keyText === undefined) return { address, type: 'p2tr' }
      const key = decodePublicKey(keyText)
      const internal = key.length === 33 ? key.subarray(1) : key
      const output = taprootOutputKey(internal)
      if (!output || Buffer.compare(Buffer.from(output), Buffer.from(address.program)) !== 0) {
        throw badKey(
          `does not match ${depositor}: its BIP 86 Taproot output key (no script tree) is not the one the address holds`,
        )
      }
      return { address, type: 'p2tr', tapInternalKey: internal }
    }
    case 'p2sh': {
      if (keyText === undefined) {
        if (!forSigning) return { address, type: 'p2sh-p2wpkh' }
        throw new PontisError(
          'INVALID_REQUEST',
          `${depositor} is a P2SH address: pass the user's public key as ${USER_PUBLIC_KEY} (33-byte compressed, hex) so the deposit can spend it as P2SH-P2WPKH.`,
          { field: USER_PUBLIC_KEY },
        )
      }
      const key = decodePublicKey(keyText)
      if (key.length !== 33) throw badKey('must be the 33-byte compressed key for a P2SH address')
      const redeemScript = Uint8Array.from([0, 20, ...hash160(key)])
      if (Buffer.compare(Buffer.from(hash160(redeemScript)), Buffer.from(address.program)) !== 0) {
        throw badKey(`does not match ${depositor}: its P2SH-P2WPKH script does not hash to the address`)
      }
      return { address, type: 'p2sh-p2wpkh', redeemScript }
    }
    case 'p2wsh':
      if (!forSigning) return { address, type: 'p2wpkh' }
      throw new PontisError(
        'UNSUPPORTED_ROUTE',
        `${depositor} is a P2WSH address, whose witness script is unknown here, so no deposit PSBT can be built for it; deposit from a single-key address (P2WPKH, P2TR, P2SH-P2WPKH, P2PKH) or use useDepositAddress.`,
      )
  }
}

function requireNative(context: BitcoinChainContext, currencyId: string): void {
  if (currencyId !== BITCOIN_NATIVE_CURRENCY_ID) {
    throw new PontisError(
      'UNSUPPORTED_CURRENCY',
      `${context.label.displayName} has one currency, the native one (${BITCOIN_NATIVE_CURRENCY_ID}).`,
      { chainId: context.label.id, currency: currencyId },
    )
  }
}

/** What a deposit transaction pays, besides change: the destination and, for the vault, the tag. */
function depositOutputs(
  context: BitcoinChainContext,
  request: { readonly requestId: string; readonly depositAddress?: string | undefined },
): { destination: ParsedAddress; tagged: boolean } {
  if (request.depositAddress !== undefined) {
    const result = parseAddress(request.depositAddress, context.network)
    if ('problem' in result)
      throw invalidAddressError('address', request.depositAddress, result.problem, context.label)
    return { destination: result.parsed, tagged: false }
  }
  return { destination: vaultOf(context), tagged: true }
}

/** A deposit PSBT with what it pays. */
export interface DepositPsbt {
  readonly psbt: Psbt
  /** The PSBT, hex without 0x (the step item's `psbt`, as Relay serves it: wallets read it with `Psbt.fromHex`). */
  readonly hex: string
  readonly fee: bigint
  readonly feeRate: bigint
  /** Estimated virtual size once signed. */
  readonly vsize: number
  readonly coins: readonly Coin[]
  readonly change: bigint
}

/**
 * Builds the deposit PSBT of one request from the depositor's coins.
 * @throws PontisError INSUFFICIENT_FUNDS (with `balance` and `required`), AMOUNT_TOO_LOW (below
 *   the dust limit), and the errors of {@link depositorSpend}.
 */
export async function buildDepositPsbt(
  context: BitcoinChainContext,
  request: Pick<
    DepositStepsRequest,
    'requestId' | 'depositor' | 'currencyId' | 'amount' | 'options' | 'depositAddress'
  >,
): Promise<DepositPsbt> {
  requireNative(context, request.currencyId)
  const spend = depositorSpend(context, request.depositor, request.options, true)
  const { destination, tagged } = depositOutputs(context, request)
  if (request.amount < context.dustLimit) {
    throw new PontisError(
      'AMOUNT_TOO_LOW',
      `A deposit of ${request.amount} sat is below the dust limit of ${context.dustLimit} sat on ${context.label.displayName}.`,
      { amount: request.amount.toString(), dustLimit: context.dustLimit.toString() },
    )
  }
  const [rate, coins] = await Promise.all([feeRate(context), coinsOf(context, spend.address.address)])
  const outputScriptLengths = tagged
    ? [destination.script.length, TAG_SCRIPT_LENGTH]
    : [destination.script.length]
  const chosen = selectCoins(coins, spend.type, {
    outputScriptLengths,
    target: request.amount,
    changeScriptLength: spend.address.script.length,
    feeRate: rate,
    dustLimit: context.dustLimit,
  })
  if ('shortfall' in chosen) {
    const { available, required, fee } = chosen.shortfall
    throw new PontisError(
      'INSUFFICIENT_FUNDS',
      `${request.depositor} can spend ${available} sat on ${context.label.displayName}; the deposit needs ${required} sat (${request.amount} plus a fee of ${fee} sat at ${rate} sat/vB).`,
      {
        chainId: context.label.id,
        balance: available.toString(),
        required: required.toString(),
        amount: request.amount.toString(),
        fee: fee.toString(),
        feeRate: rate.toString(),
      },
    )
  }
  const selection: Selection = chosen.selection
  const psbt = new Psbt({ network: context.params })
  const previous =
    spend.type === 'p2pkh'
      ? await Promise.all(selection.coins.map((coin) => previousTransaction(context, coin.txid)))
      : []
  selection.coins.forEach((coin, index) => {
    psbt.addInput({
      hash: coin.txid,
      index: coin.vout,
      ...(spend.type === 'p2pkh'
        ? { nonWitnessUtxo: previous[index] as Uint8Array }
        : { witnessUtxo: { script: spend.address.script, value: coin.value } }),
      ...(spend.redeemScript ? { redeemScript: spend.redeemScript } : {}),
      ...(spend.tapInternalKey ? { tapInternalKey: spend.tapInternalKey } : {}),
    })
  })
  psbt.addOutput({ script: destination.script, value: request.amount })
  if (tagged) psbt.addOutput({ script: tagScript(request.requestId), value: 0n })
  if (selection.change > 0n) psbt.addOutput({ script: spend.address.script, value: selection.change })
  return {
    psbt,
    hex: psbt.toHex(),
    fee: selection.fee,
    feeRate: rate,
    vsize: selection.vsize,
    coins: selection.coins,
    change: selection.change,
  }
}

const PREVIOUS_TX_TTL_MS = 10 * 60_000

/** A whole previous transaction (for P2PKH inputs), cached: transactions never change. */
function previousTransaction(context: BitcoinChainContext, txid: string): Promise<Uint8Array> {
  return context.cache.read(
    `tx-hex:${txid}`,
    async () => {
      const hex = await context.esplora.transactionHex(txid)
      if (hex === undefined) {
        throw new PontisError(
          'RPC_HTTP_ERROR',
          `The Esplora API of ${context.label.displayName} does not have transaction ${txid} the deposit spends; retry shortly.`,
          { chainId: context.label.id },
        )
      }
      return new Uint8Array(Buffer.from(hex, 'hex'))
    },
    PREVIOUS_TX_TTL_MS,
  )
}

/** The P2WPKH deposit address of a request (see `depositAddressKey`). */
export function depositAddressOf(context: BitcoinChainContext, seed: string, requestId: string): string {
  return p2wpkhAddress(depositAddressKeyPair(seed, requestId, context.params).publicKey, context.params)
}

export function createBitcoinQuoting(context: BitcoinChainContext): QuotingCapability {
  const seed = context.depositAddressSeed
  return {
    supportsDestinationCalls: false,
    supportsGasTopup: false,
    originRequestOptions: BITCOIN_ORIGIN_OPTIONS,

    async estimateOriginCost(request: OriginCostRequest): Promise<CostEstimate> {
      requireNative(context, request.currencyId)
      const spend = depositorSpend(context, request.depositor, request.options, false)
      if (request.viaDepositAddress) {
        // The spec's rule for deposit-address quotes: the user must hold more than the amount.
        const balance = await balanceOf(context, spend.address.address)
        if (balance <= request.amount) {
          throw new PontisError(
            'INSUFFICIENT_FUNDS',
            `${request.depositor} holds ${balance} sat on ${context.label.displayName}, not more than the quoted ${request.amount} sat.`,
            {
              chainId: context.label.id,
              balance: balance.toString(),
              required: (request.amount + 1n).toString(),
            },
          )
        }
      }
      const outputScriptLengths = request.viaDepositAddress
        ? [P2WPKH_SCRIPT_LENGTH]
        : [vaultOf(context).script.length, TAG_SCRIPT_LENGTH]
      const [rate, coins] = await Promise.all([feeRate(context), coinsOf(context, spend.address.address)])
      const chosen = selectCoins(coins, spend.type, {
        outputScriptLengths,
        target: request.amount,
        changeScriptLength: spend.address.script.length,
        feeRate: rate,
        dustLimit: context.dustLimit,
      })
      // Without enough coins the price assumes all of them are spent; the deposit step then says why it cannot be built.
      const vsize =
        'selection' in chosen
          ? chosen.selection.vsize
          : estimateVsize(
              Array.from({ length: Math.max(1, coins.length) }, () => spend.type),
              outputScriptLengths,
            )
      return {
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount: BigInt(vsize) * rate,
        units: BigInt(vsize),
        unitPrice: rate,
      }
    },

    async estimateFillCost(request: FillCostRequest): Promise<CostEstimate> {
      requireNative(context, request.currencyId)
      const recipient = parseAddress(request.recipient, context.network)
      if ('problem' in recipient)
        throw invalidAddressError('recipient', request.recipient, recipient.problem, context.label)
      // One solver coin (P2WPKH) paying the recipient, the order tag and change.
      const vsize = estimateVsize(
        ['p2wpkh'],
        [recipient.parsed.script.length, TAG_SCRIPT_LENGTH, P2WPKH_SCRIPT_LENGTH],
      )
      const rate = await feeRate(context)
      return {
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount: BigInt(vsize) * rate,
        units: BigInt(vsize),
        unitPrice: rate,
      }
    },

    async buildDepositSteps(request: DepositStepsRequest): Promise<readonly PreparedStep[]> {
      if (request.usePermit) {
        throw new PontisError(
          'UNSUPPORTED_EXECUTION_TYPE',
          `${context.label.displayName} takes no signed deposit authorizations; remove usePermit.`,
        )
      }
      if (request.originSwap) {
        throw new PontisError('UNSUPPORTED_ROUTE', `${context.label.displayName} deposits cannot swap first.`)
      }
      const built = await buildDepositPsbt(context, request)
      return [
        {
          id: 'deposit',
          kind: 'transaction',
          action: 'Confirm transaction in your wallet',
          description: request.depositAddress
            ? `Sign the PSBT and broadcast it: it sends the deposit to your request's deposit address on ${context.label.displayName}`
            : `Sign the PSBT and broadcast it: it deposits on ${context.label.displayName}`,
          items: [{ data: { format: 'bitcoin-psbt', psbt: built.hex, chainId: context.label.id } }],
        },
      ]
    },

    async supportsPermit(): Promise<boolean> {
      return false
    },

    ...(seed
      ? {
          async createDepositAddress(requestId: string): Promise<string> {
            return depositAddressOf(context, seed, requestId)
          },
        }
      : {}),
  }
}
