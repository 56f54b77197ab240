/**
 * SVM quoting: origin costs and deposit transactions (native transfer or SPL transferChecked to the
 * vault, an optional origin swap first, a memo with the request id), compiled and measured against
 * the 1232-byte limit; fill costs with the rent of recipient token accounts that do not exist yet.
 */
import {
  type CostEstimate,
  type DepositStepsRequest,
  type FillCostRequest,
  type OriginCostRequest,
  type OriginRequestOption,
  type OriginSwapQuote,
  PontisError,
  type PreparedStep,
  type QuotingCapability,
  type TransactionSizeCheck,
} from '@pontis/core/plugin'
import {
  ACCOUNT_SIZE,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token'
import {
  type AddressLookupTableAccount,
  ComputeBudgetProgram,
  PublicKey,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'
import {
  accountExists,
  CONFIRMED,
  isNative,
  mintInfo,
  rentExemption,
  rpc,
  type SvmChainContext,
  vaultOf,
} from './context.js'
import { routeInstructions, routeSource } from './routes.js'
import { instructionToJson, memoInstruction, SVM_TRANSACTION_SIZE_LIMIT, wireSize } from './transactions.js'

/** Request members an SVM origin honours. */
export const SVM_ORIGIN_OPTIONS = [
  'depositFeePayer',
  'maxRouteLength',
  'useSharedAccounts',
  'includeComputeUnitLimit',
] as const satisfies readonly OriginRequestOption[]

/** A compiled (unsigned) deposit transaction with its measured wire size. */
export interface CompiledDeposit {
  readonly transaction: VersionedTransaction | undefined
  readonly base64: string
  readonly size: number
  readonly instructions: readonly TransactionInstruction[]
  readonly addressLookupTableAddresses: readonly string[]
  /** Lamports of rent the payer puts into accounts the transaction creates. */
  readonly rent: bigint
  readonly signers: number
}

/** The recent blockhash, shared by quotes for a second: it stays valid for about a minute. */
function latestBlockhash(context: SvmChainContext): Promise<string> {
  return context.cache.read(
    'blockhash',
    async () => (await rpc(context, () => context.connection.getLatestBlockhash(CONFIRMED))).blockhash,
    1000,
  )
}

/** The address lookup tables at `addresses` that exist (what a compiled message may load keys from). */
export async function lookupTables(
  context: SvmChainContext,
  addresses: readonly string[],
): Promise<AddressLookupTableAccount[]> {
  const tables = await Promise.all(
    addresses.map((address) =>
      rpc(context, () =>
        context.connection.getAddressLookupTable(new PublicKey(address), { commitment: CONFIRMED }),
      ),
    ),
  )
  return tables.flatMap((table) => (table.value ? [table.value] : []))
}

/** Builds and measures the deposit transaction of one request. */
export async function compileDeposit(
  context: SvmChainContext,
  request: Pick<
    DepositStepsRequest,
    'requestId' | 'depositor' | 'currencyId' | 'amount' | 'options' | 'originSwap'
  >,
): Promise<CompiledDeposit> {
  const vault = vaultOf(context)
  const options = request.options ?? {}
  const depositor = new PublicKey(request.depositor)
  const payer = new PublicKey(options.depositFeePayer ?? request.depositor)
  const useShared = options.useSharedAccounts === true
  const instructions: TransactionInstruction[] = []
  let rent = 0n
  if (options.includeComputeUnitLimit)
    instructions.push(ComputeBudgetProgram.setComputeUnitLimit({ units: context.computeUnitLimit }))
  let tableAddresses: readonly string[] = []
  if (request.originSwap) {
    const route = await routeInstructions(context, request.originSwap, request.depositor, useShared)
    instructions.push(...route.instructions)
    tableAddresses = route.addressLookupTableAddresses
  }
  if (isNative(request.currencyId)) {
    instructions.push(
      SystemProgram.transfer({ fromPubkey: depositor, toPubkey: vault, lamports: request.amount }),
    )
  } else {
    const mint = new PublicKey(request.currencyId)
    const { programId, decimals } = await mintInfo(context, request.currencyId)
    const vaultAccount = getAssociatedTokenAddressSync(mint, vault, true, programId)
    if (!(await accountExists(context, vaultAccount))) {
      if (useShared) {
        throw new PontisError(
          'UNSUPPORTED_ROUTE',
          `The depository on ${context.label.displayName} has no token account for ${request.currencyId} yet and useSharedAccounts forbids creating one; remove useSharedAccounts.`,
        )
      }
      instructions.push(
        createAssociatedTokenAccountIdempotentInstruction(payer, vaultAccount, vault, mint, programId),
      )
      rent += await rentExemption(context, ACCOUNT_SIZE)
    }
    const source = getAssociatedTokenAddressSync(mint, depositor, true, programId)
    instructions.push(
      createTransferCheckedInstruction(
        source,
        mint,
        vaultAccount,
        depositor,
        request.amount,
        decimals,
        [],
        programId,
      ),
    )
  }
  instructions.push(memoInstruction(request.requestId))
  const [recentBlockhash, tables] = await Promise.all([
    latestBlockhash(context),
    lookupTables(context, tableAddresses),
  ])
  const message = new TransactionMessage({
    payerKey: payer,
    recentBlockhash,
    instructions,
  }).compileToV0Message(tables)
  const size = wireSize(message)
  // web3.js cannot serialize a message above the limit; such a deposit is refused before it is served.
  const transaction = size <= SVM_TRANSACTION_SIZE_LIMIT ? new VersionedTransaction(message) : undefined
  return {
    transaction,
    base64: transaction ? Buffer.from(transaction.serialize()).toString('base64') : '',
    size,
    instructions,
    addressLookupTableAddresses: tableAddresses,
    rent,
    signers: message.header.numRequiredSignatures,
  }
}

export function createSvmQuoting(context: SvmChainContext): QuotingCapability {
  return {
    supportsDestinationCalls: false,
    supportsGasTopup: true,
    originRequestOptions: SVM_ORIGIN_OPTIONS,

    async estimateOriginCost(request: OriginCostRequest): Promise<CostEstimate> {
      const signers =
        request.options?.depositFeePayer && request.options.depositFeePayer !== request.depositor ? 2n : 1n
      let rent = 0n
      if (!isNative(request.currencyId) && context.vault && request.options?.useSharedAccounts !== true) {
        const { programId } = await mintInfo(context, request.currencyId)
        const vaultAccount = getAssociatedTokenAddressSync(
          new PublicKey(request.currencyId),
          context.vault,
          true,
          programId,
        )
        if (!(await accountExists(context, vaultAccount))) rent = await rentExemption(context, ACCOUNT_SIZE)
      }
      const fees = signers * context.signatureFeeLamports
      return {
        currencyId: SystemProgram.programId.toBase58(),
        amount: fees + rent,
        rent,
        units: signers,
        unitPrice: context.signatureFeeLamports,
      }
    },

    async estimateFillCost(request: FillCostRequest): Promise<CostEstimate> {
      let rent = 0n
      if (!isNative(request.currencyId)) {
        const { programId } = await mintInfo(context, request.currencyId)
        const account = getAssociatedTokenAddressSync(
          new PublicKey(request.currencyId),
          new PublicKey(request.recipient),
          true,
          programId,
        )
        if (!(await accountExists(context, account))) rent = await rentExemption(context, ACCOUNT_SIZE)
      }
      const fees = context.signatureFeeLamports
      return {
        currencyId: SystemProgram.programId.toBase58(),
        amount: fees + rent,
        rent,
        units: 1n,
        unitPrice: fees,
      }
    },

    async buildDepositSteps(request: DepositStepsRequest): Promise<readonly PreparedStep[]> {
      if (request.usePermit) {
        throw new PontisError(
          'UNSUPPORTED_EXECUTION_TYPE',
          `${context.label.displayName} takes no signed deposit authorizations; remove usePermit.`,
        )
      }
      const compiled = await compileDeposit(context, request)
      const swap = request.originSwap
      return [
        {
          id: 'deposit',
          kind: 'transaction',
          action: 'Confirm transaction in your wallet',
          description: swap
            ? `Swap and deposit on ${context.label.displayName} (${swap.hops} hop${swap.hops === 1 ? '' : 's'} via ${swap.sources.join(', ')})`
            : `Deposit on ${context.label.displayName}`,
          items: [
            {
              data: {
                format: 'svm-transaction',
                transaction: compiled.base64,
                chainId: context.label.id,
                instructions: compiled.instructions.map(instructionToJson),
                addressLookupTableAddresses: [...compiled.addressLookupTableAddresses],
                size: compiled.size,
                sizeLimit: SVM_TRANSACTION_SIZE_LIMIT,
                headroom: Math.max(0, SVM_TRANSACTION_SIZE_LIMIT - compiled.size),
              },
            },
          ],
        },
      ]
    },

    async supportsPermit(): Promise<boolean> {
      return false
    },

    checkTransactionSize(step: PreparedStep): TransactionSizeCheck {
      const sizes = step.items.map((item) => Number((item.data as { size?: unknown }).size ?? 0))
      const sizeBytes = Math.max(0, ...sizes)
      return {
        sizeBytes,
        limitBytes: SVM_TRANSACTION_SIZE_LIMIT,
        fits: sizeBytes <= SVM_TRANSACTION_SIZE_LIMIT,
      }
    },

    oversizedTransaction: {
      errorCode: 'SOLANA_TX_TOO_LARGE',
      remedy: (originSwap) =>
        originSwap
          ? `the origin swap takes ${originSwap.hops} hop${originSwap.hops === 1 ? '' : 's'} (${originSwap.sources.join(', ')}): set maxRouteLength (start at 4, then 3) or includedOriginSwapSources to a single size-conservative source`
          : 'remove includeComputeUnitLimit or depositFeePayer, or change the amount',
    },

    // Only with a route source: without one, an unlisted token is simply unsupported.
    ...(context.swapApiUrl ? { swapSources: [routeSource(context)], depositsCanSwap: true } : {}),
  }
}

export type { OriginSwapQuote }
