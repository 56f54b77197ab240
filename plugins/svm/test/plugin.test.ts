/**
 * The SVM plugin on the SVM devnet (LiteSVM behind the devnet's Solana RPC) and its route
 * simulator, with adapters made from the local chain config as the registry makes them. Every
 * transaction the plugin builds or signs is executed: deposit steps signed by the devnet users,
 * fills by the solver, refunds by the vault owner. Then the reads: deposits, fills, refunds,
 * balances and the deposit scan.
 */

import type {
  DepositStepsRequest,
  OriginCostRequest,
  OriginSwapQuote,
  QuotingCapability,
  SolverCredentials,
  SwapQuoteRequest,
} from '@pontis/core/plugin'
import {
  SVM_FAUCET,
  SVM_NATIVE_CURRENCY_ID,
  SVM_ROUTE_TOKENS,
  SVM_SOLVER,
  SVM_STABLECOIN,
  SVM_USERS,
  SVM_VAULT_OWNER,
  SVM_WRAPPED_NATIVE_MINT,
  type SvmDevAccount,
  svmAssociatedTokenAddress,
} from '@pontis/devnet'
import { depositStepsRequest } from '@pontis/plugin-testkit'
import { ACCOUNT_SIZE, ASSOCIATED_TOKEN_PROGRAM_ID } from '@solana/spl-token'
import {
  AddressLookupTableAccount,
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'
import bs58 from 'bs58'
import t, { type Test } from 'tap'
// The devnet's RPC server itself, for a chain with a confirmation depth startSvmDevnet does not offer.
import { MAX_BLOCKHASH_AGE, startSvmRpcServer } from '../../../packages/devnet/src/svm/rpc.js'
import { MEMO_PROGRAM_ID, SVM_TRANSACTION_SIZE_LIMIT, wireSize } from '../src/index.js'
import {
  confirmed,
  DEVNET_CREDENTIALS,
  depositItem,
  depositTransaction,
  devnetSeedHex,
  memo,
  randomId,
  SIGNATURE_FEE_LAMPORTS,
  sendInstructions,
  sendSigned,
  svmPluginTestbed,
} from './fixtures/svm-chain.js'

const devnet = await svmPluginTestbed(t)
const { connection, chain, lamports, tokenBalance, svm } = devnet

const NATIVE = SVM_NATIVE_CURRENCY_ID
const USDC = SVM_STABLECOIN.address
const VAULT = SVM_VAULT_OWNER.address
const [ALICE, BOB, CAROL, DAVE] = SVM_USERS as [SvmDevAccount, SvmDevAccount, SvmDevAccount, SvmDevAccount]
const [PBONK, PJUP] = SVM_ROUTE_TOKENS as [(typeof SVM_ROUTE_TOKENS)[0], (typeof SVM_ROUTE_TOKENS)[0]]
const FEE = SIGNATURE_FEE_LAMPORTS

function depositRequest(
  request: Pick<DepositStepsRequest, 'depositor' | 'currencyId' | 'amount'> & Partial<DepositStepsRequest>,
): DepositStepsRequest {
  return depositStepsRequest({ requestId: randomId(), ...request })
}

function costRequest(request: DepositStepsRequest): OriginCostRequest {
  const { requestId, depositor, currencyId, amount, options, originSwap } = request
  return {
    requestId,
    depositor,
    currencyId,
    amount,
    usePermit: false,
    viaDepositAddress: false,
    ...(options ? { options } : {}),
    ...(originSwap ? { originSwap } : {}),
  }
}

/** Builds the deposit steps of `request`, checks the served size, signs with `signers` and sends. */
async function deposit(t: Test, request: DepositStepsRequest, signers: readonly Keypair[]): Promise<string> {
  const steps = await svm.quoting.buildDepositSteps(request)
  const item = depositItem(steps)
  const transaction = depositTransaction(steps)
  t.equal(transaction.serialize().length, item.size, 'size is the wire size of the served transaction')
  t.equal(item.headroom, SVM_TRANSACTION_SIZE_LIMIT - item.size, 'headroom is what is left of 1232 bytes')
  return sendSigned(connection, transaction, signers)
}

/** A route request with the source filter given as the quote request names it. */
type RouteRequest = Omit<SwapQuoteRequest, 'filter' | 'options'> & {
  readonly options: { readonly includedOriginSwapSources?: string[]; readonly maxRouteLength?: number }
}

/** The chain's one swap source (the route aggregator) asked for `request`. */
function quoteOriginSwap(quoting: QuotingCapability, request: RouteRequest): Promise<OriginSwapQuote> {
  const [source] = quoting.swapSources ?? []
  if (!source) throw new Error('this adapter has no route source')
  const { includedOriginSwapSources, ...options } = request.options
  const filter = includedOriginSwapSources ? { included: includedOriginSwapSources } : {}
  return source.quote({ ...request, filter, options })
}

/** A signature of the right shape that no transaction has. */
const unknownSignature = () => bs58.encode(Keypair.generate().secretKey)

t.test('native and USDC deposits land in the vault and read back from their memos', async (t) => {
  // A request id in upper case is still written (and read back) in lower case.
  const nativeId = `0x${randomId().slice(2).toUpperCase()}`
  const nativeAmount = 1_500_000_000n
  const nativeRequest = depositRequest({
    requestId: nativeId,
    depositor: ALICE.address,
    currencyId: NATIVE,
    amount: nativeAmount,
  })
  const steps = await svm.quoting.buildDepositSteps(nativeRequest)
  t.match(steps, [
    { id: 'deposit', kind: 'transaction', description: 'Deposit on Pontis Local SVM', items: [{}] },
  ])
  const item = depositItem(steps)
  t.match(item, { chainId: 792703809, sizeLimit: 1232, addressLookupTableAddresses: [] })
  t.same(
    item.instructions.map((instruction) => instruction.programId),
    [SystemProgram.programId.toBase58(), MEMO_PROGRAM_ID.toBase58()],
    'a transfer to the vault, then the memo',
  )
  t.equal(Buffer.from(item.instructions[1]?.data ?? '', 'hex').toString(), nativeId.toLowerCase())
  // Relay's shape: instruction data in hex (its SVM wallet adapter rebuilds the transaction from
  // `instructions` with Buffer.from(data, 'hex')), the very bytes of the served transaction.
  const served = VersionedTransaction.deserialize(Buffer.from(item.transaction, 'base64'))
  t.same(
    item.instructions.map((instruction) => instruction.data),
    served.message.compiledInstructions.map((instruction) => Buffer.from(instruction.data).toString('hex')),
    'each instruction’s data is the hex of the served transaction’s instruction data',
  )
  t.same(svm.quoting.checkTransactionSize?.(steps[0] as (typeof steps)[0]), {
    sizeBytes: item.size,
    limitBytes: 1232,
    fits: true,
  })

  const [vaultBefore, aliceBefore] = [await lamports(VAULT), await lamports(ALICE.address)]
  const nativeSignature = await deposit(t, nativeRequest, [ALICE.keypair])
  t.equal(await lamports(VAULT), vaultBefore + nativeAmount, 'the vault holds the SOL')
  t.equal(await lamports(ALICE.address), aliceBefore - nativeAmount - FEE, 'the depositor paid one fee')
  const nativeFacts = await svm.reading.readDeposits(nativeSignature)
  const landed = await connection.getTransaction(nativeSignature, { maxSupportedTransactionVersion: 0 })
  t.match(nativeFacts, {
    transactionId: nativeSignature,
    state: 'success',
    final: false,
    blockNumber: BigInt(landed?.slot ?? -1),
  })
  t.ok((nativeFacts.confirmations ?? 0) >= 1, 'confirmed')
  t.same(nativeFacts.facts, [
    {
      index: 0,
      depository: VAULT,
      depositId: nativeId.toLowerCase(),
      depositor: ALICE.address,
      currencyId: NATIVE,
      amount: nativeAmount,
    },
  ])

  const usdcRequest = depositRequest({ depositor: BOB.address, currencyId: USDC, amount: 25_000_000n })
  const [vaultUsdc, bobUsdc] = [await tokenBalance(VAULT, USDC), await tokenBalance(BOB.address, USDC)]
  const usdcSignature = await deposit(t, usdcRequest, [BOB.keypair])
  t.equal(await tokenBalance(VAULT, USDC), vaultUsdc + 25_000_000n, 'the vault token account holds the USDC')
  t.equal(await tokenBalance(BOB.address, USDC), bobUsdc - 25_000_000n)
  const usdcFacts = await svm.reading.readDeposits(usdcSignature)
  t.same(usdcFacts.facts, [
    {
      index: 0,
      depository: VAULT,
      depositId: usdcRequest.requestId,
      depositor: BOB.address,
      currencyId: USDC,
      amount: 25_000_000n,
    },
  ])
  t.equal(usdcFacts.final, false)
  chain.advanceSlots(2)
  const later = await svm.reading.readDeposits(usdcSignature)
  t.equal(later.final, true, 'final once the slot is finalized')
  t.ok((later.confirmations ?? 0) > (usdcFacts.confirmations ?? 0), 'confirmations grow with slots')
})

t.test('depositFeePayer: a second signer pays the fees, the depositor only the deposit', async (t) => {
  const request = depositRequest({
    depositor: BOB.address,
    currencyId: USDC,
    amount: 10_000_000n,
    options: { depositFeePayer: CAROL.address },
  })
  t.same(await svm.quoting.estimateOriginCost(costRequest(request)), {
    currencyId: NATIVE,
    amount: 2n * FEE,
    rent: 0n,
    units: 2n,
    unitPrice: FEE,
  })
  const steps = await svm.quoting.buildDepositSteps(request)
  const transaction = depositTransaction(steps)
  t.equal(transaction.message.header.numRequiredSignatures, 2)
  t.same(
    transaction.message.staticAccountKeys.slice(0, 2).map((key) => key.toBase58()),
    [CAROL.address, BOB.address],
    'the fee payer comes first',
  )
  t.equal(transaction.serialize().length, depositItem(steps).size)

  transaction.sign([BOB.keypair])
  await t.rejects(
    connection.sendRawTransaction(transaction.serialize()),
    /signature verification failure/i,
    'the depositor alone cannot send it',
  )
  const before = {
    carol: await lamports(CAROL.address),
    bob: await lamports(BOB.address),
    bobUsdc: await tokenBalance(BOB.address, USDC),
    vault: await tokenBalance(VAULT, USDC),
  }
  const signature = await sendSigned(connection, transaction, [CAROL.keypair])
  t.equal(await lamports(CAROL.address), before.carol - 2n * FEE, 'the fee payer paid both signatures')
  t.equal(await lamports(BOB.address), before.bob, 'the depositor paid no SOL')
  t.equal(await tokenBalance(BOB.address, USDC), before.bobUsdc - 10_000_000n)
  t.equal(await tokenBalance(VAULT, USDC), before.vault + 10_000_000n)
  t.match((await svm.reading.readDeposits(signature)).facts, [
    { depositor: BOB.address, depositId: request.requestId, amount: 10_000_000n },
  ])
})

t.test('includeComputeUnitLimit adds exactly the compute-budget instruction', async (t) => {
  const request = depositRequest({ depositor: ALICE.address, currencyId: NATIVE, amount: 100_000_000n })
  const plain = depositItem(await svm.quoting.buildDepositSteps(request))
  const limited = { ...request, options: { includeComputeUnitLimit: true } }
  const steps = await svm.quoting.buildDepositSteps(limited)
  const item = depositItem(steps)
  const budget = ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 })
  // A new static key, plus the instruction: program index, empty account list, data length, data.
  t.equal(item.size - plain.size, 32 + 1 + 1 + 1 + budget.data.length, 'grows by the instruction bytes')
  const [first] = item.instructions
  t.equal(first?.programId, ComputeBudgetProgram.programId.toBase58())
  t.same(Buffer.from(first?.data ?? '', 'hex'), budget.data, 'the configured default: 200000 units')

  const tight = await devnet.adapter({ computeUnitLimit: 50_000 })
  const tightItem = depositItem(await tight.quoting.buildDepositSteps(limited))
  t.equal(Buffer.from(tightItem.instructions[0]?.data ?? '', 'hex').readUInt32LE(1), 50_000)

  const signature = await deposit(t, limited, [ALICE.keypair])
  t.match((await svm.reading.readDeposits(signature)).facts, [
    { index: 1, depositId: request.requestId, amount: 100_000_000n },
  ])
})

t.test('a mint without a vault token account: created by the deposit, its rent estimated', async (t) => {
  const amount = 1_000n * 10n ** BigInt(PBONK.decimals)
  const vaultAccount = svmAssociatedTokenAddress(VAULT, PBONK.address)
  t.equal(await connection.getAccountInfo(new PublicKey(vaultAccount)), null, 'no vault account yet')
  const rent = BigInt(await connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE))
  const request = depositRequest({ depositor: DAVE.address, currencyId: PBONK.address, amount })

  const estimate = await svm.quoting.estimateOriginCost(costRequest(request))
  t.same(estimate, {
    currencyId: NATIVE,
    amount: FEE + rent,
    rent,
    units: 1n,
    unitPrice: FEE,
  })
  const shared = { ...request, options: { useSharedAccounts: true } }
  t.match(await svm.quoting.estimateOriginCost(costRequest(shared)), { amount: FEE, rent: 0n })
  await t.rejects(svm.quoting.buildDepositSteps(shared), {
    code: 'UNSUPPORTED_ROUTE',
    message: /no token account .* useSharedAccounts/,
  })

  const item = depositItem(await svm.quoting.buildDepositSteps(request))
  const [create] = item.instructions
  t.equal(create?.programId, ASSOCIATED_TOKEN_PROGRAM_ID.toBase58())
  t.same([...Buffer.from(create?.data ?? '', 'hex')], [1], 'CreateIdempotent')
  t.same(
    create?.keys.slice(0, 3).map((key) => key.pubkey),
    [DAVE.address, vaultAccount, VAULT],
    'paid by the depositor, for the vault',
  )
  const daveBefore = await lamports(DAVE.address)
  const signature = await deposit(t, request, [DAVE.keypair])
  t.equal(await lamports(DAVE.address), daveBefore - estimate.amount, 'spent exactly the estimate')
  t.equal(await tokenBalance(VAULT, PBONK.address), amount)
  t.match((await svm.reading.readDeposits(signature)).facts, [
    { index: 1, currencyId: PBONK.address, amount, depositor: DAVE.address },
  ])
  const fresh = await devnet.adapter()
  t.match(await fresh.quoting.estimateOriginCost(costRequest(request)), { amount: FEE, rent: 0n })
})

t.test('deposits refuse what the family does not do', async (t) => {
  await t.rejects(
    svm.quoting.buildDepositSteps(
      depositRequest({ depositor: ALICE.address, currencyId: USDC, amount: 1n, usePermit: true }),
    ),
    { code: 'UNSUPPORTED_EXECUTION_TYPE' },
  )
  await t.rejects(
    svm.quoting.buildDepositSteps(
      depositRequest({
        depositor: ALICE.address,
        currencyId: Keypair.generate().publicKey.toBase58(),
        amount: 1n,
      }),
    ),
    { code: 'UNSUPPORTED_CURRENCY' },
    'a key that is no mint',
  )
  t.equal(await svm.quoting.supportsPermit(USDC), false, 'no signed deposit authorizations')
})

t.test('origin swaps: the route runs inside the deposit, which pays exactly the minimum', async (t) => {
  const amountIn = 25n * 10n ** BigInt(PJUP.decimals)
  const quote = await quoteOriginSwap(svm.quoting, {
    user: BOB.address,
    fromCurrency: PJUP.address,
    toCurrency: USDC,
    tradeType: 'EXACT_INPUT',
    amount: amountIn,
    slippageBps: 50,
    options: { includedOriginSwapSources: ['SimSwap'] },
  })
  t.match(quote, {
    fromCurrency: PJUP.address,
    fromDecimals: PJUP.decimals,
    toCurrency: USDC,
    amountIn,
    hops: 1,
    sources: ['SimSwap'],
  })
  t.equal(quote.minimumAmountOut, (quote.amountOut * 9950n) / 10000n, 'ExactIn: the output less slippage')

  const request = depositRequest({
    depositor: BOB.address,
    currencyId: USDC,
    amount: quote.minimumAmountOut,
    originSwap: quote,
  })
  const steps = await svm.quoting.buildDepositSteps(request)
  t.match(steps[0]?.description, /^Swap and deposit on Pontis Local SVM \(1 hop via SimSwap\)$/)
  const before = {
    pjup: await tokenBalance(BOB.address, PJUP.address),
    usdc: await tokenBalance(BOB.address, USDC),
    vault: await tokenBalance(VAULT, USDC),
  }
  const signature = await deposit(t, request, [BOB.keypair])
  t.equal(await tokenBalance(BOB.address, PJUP.address), before.pjup - amountIn, 'the input went in')
  t.equal(await tokenBalance(VAULT, USDC), before.vault + quote.minimumAmountOut, 'the vault got the minimum')
  t.equal(
    await tokenBalance(BOB.address, USDC),
    before.usdc + quote.amountOut - quote.minimumAmountOut,
    'the depositor keeps what the route paid above the minimum',
  )
  t.same(
    (await svm.reading.readDeposits(signature)).facts.map((fact) => [fact.currencyId, fact.amount]),
    [[USDC, quote.minimumAmountOut]],
    'one deposit: the route legs are not deposits',
  )
})

t.test('origin swaps: EXACT_OUTPUT, native in and out', async (t) => {
  const wanted = 10_000_000n
  const exactOut = await quoteOriginSwap(svm.quoting, {
    user: CAROL.address,
    fromCurrency: PJUP.address,
    toCurrency: USDC,
    tradeType: 'EXACT_OUTPUT',
    amount: wanted,
    slippageBps: 100,
    options: { includedOriginSwapSources: ['SimSwap'] },
  })
  const route = exactOut.route as { swapMode: string; inAmount: string; otherAmountThreshold: string }
  t.equal(route.swapMode, 'ExactOut')
  t.equal(exactOut.amountOut, wanted)
  t.equal(exactOut.minimumAmountOut, wanted, 'ExactOut: the output is guaranteed')
  t.equal(exactOut.amountIn, BigInt(route.otherAmountThreshold), 'the most input it may take')
  t.ok(exactOut.amountIn > BigInt(route.inAmount), 'above the expected input by the slippage')
  const pjupBefore = await tokenBalance(CAROL.address, PJUP.address)
  const vaultBefore = await tokenBalance(VAULT, USDC)
  await deposit(
    t,
    depositRequest({ depositor: CAROL.address, currencyId: USDC, amount: wanted, originSwap: exactOut }),
    [CAROL.keypair],
  )
  t.equal(await tokenBalance(VAULT, USDC), vaultBefore + wanted)
  const spent = pjupBefore - (await tokenBalance(CAROL.address, PJUP.address))
  t.equal(spent, BigInt(route.inAmount), 'the expected input, within the most it may take')

  // Into the native currency: the route unwraps before the transfer to the vault.
  const toSol = await quoteOriginSwap(svm.quoting, {
    user: DAVE.address,
    fromCurrency: PJUP.address,
    toCurrency: NATIVE,
    tradeType: 'EXACT_INPUT',
    amount: 50n * 10n ** BigInt(PJUP.decimals),
    slippageBps: 50,
    options: { includedOriginSwapSources: ['SimSwap'] },
  })
  t.equal(toSol.toCurrency, NATIVE)
  t.equal((toSol.route as { outputMint: string }).outputMint, SVM_WRAPPED_NATIVE_MINT, 'routed as wSOL')
  const vaultSol = await lamports(VAULT)
  const solSignature = await deposit(
    t,
    depositRequest({
      depositor: DAVE.address,
      currencyId: NATIVE,
      amount: toSol.minimumAmountOut,
      originSwap: toSol,
    }),
    [DAVE.keypair],
  )
  t.equal(await lamports(VAULT), vaultSol + toSol.minimumAmountOut)
  t.match((await svm.reading.readDeposits(solSignature)).facts, [
    { currencyId: NATIVE, amount: toSol.minimumAmountOut, depositor: DAVE.address },
  ])

  // From the native currency: priced with 9 decimals, wrapped in the route's setup.
  const fromSol = await quoteOriginSwap(svm.quoting, {
    user: ALICE.address,
    fromCurrency: NATIVE,
    toCurrency: USDC,
    tradeType: 'EXACT_INPUT',
    amount: 100_000_000n,
    slippageBps: 50,
    options: { includedOriginSwapSources: ['SimSwap'] },
  })
  t.match(fromSol, { fromCurrency: NATIVE, fromDecimals: 9, toCurrency: USDC })
  const vaultUsdc = await tokenBalance(VAULT, USDC)
  await deposit(
    t,
    depositRequest({
      depositor: ALICE.address,
      currencyId: USDC,
      amount: fromSol.minimumAmountOut,
      originSwap: fromSol,
    }),
    [ALICE.keypair],
  )
  t.equal(await tokenBalance(VAULT, USDC), vaultUsdc + fromSol.minimumAmountOut)
})

t.test('origin swaps: limits, oversized routes, and chains without a route source', async (t) => {
  const base: RouteRequest = {
    user: BOB.address,
    fromCurrency: PJUP.address,
    toCurrency: USDC,
    tradeType: 'EXACT_INPUT',
    amount: 10n * 10n ** BigInt(PJUP.decimals),
    slippageBps: 50,
    options: {},
  }
  // SimCPMM only joins route tokens in a ring: no way into USDC at all.
  await t.rejects(
    quoteOriginSwap(svm.quoting, { ...base, options: { includedOriginSwapSources: ['SimCPMM'] } }),
    { code: 'NO_SWAP_ROUTES_FOUND' },
  )
  // PBONK and PRAY are two hops apart on the ring: maxRouteLength 1 finds nothing, 2 finds it.
  const ring = {
    ...base,
    fromCurrency: PBONK.address,
    toCurrency: (SVM_ROUTE_TOKENS[2] as (typeof SVM_ROUTE_TOKENS)[0]).address,
  }
  await t.rejects(
    quoteOriginSwap(svm.quoting, {
      ...ring,
      options: { includedOriginSwapSources: ['SimCPMM'], maxRouteLength: 1 },
    }),
    { code: 'NO_SWAP_ROUTES_FOUND' },
  )
  t.match(
    await quoteOriginSwap(svm.quoting, {
      ...ring,
      options: { includedOriginSwapSources: ['SimCPMM'], maxRouteLength: 2 },
    }),
    { hops: 2, sources: ['SimCPMM', 'SimCPMM'] },
  )
  await t.rejects(
    quoteOriginSwap(svm.quoting, { ...base, fromCurrency: Keypair.generate().publicKey.toBase58() }),
    { code: 'UNSUPPORTED_CURRENCY' },
  )

  // The aggregator is the swap source by name: excluding it leaves no route; naming it allows all its venues.
  const [routeSource] = svm.quoting.swapSources ?? []
  t.equal(routeSource?.name, 'svm-aggregator')
  await t.rejects(
    (routeSource as NonNullable<typeof routeSource>).quote({
      ...base,
      filter: { excluded: ['svm-aggregator'] },
      options: {},
    }),
    { code: 'NO_SWAP_ROUTES_FOUND', message: /excludes svm-aggregator/ },
  )
  t.match(
    await (routeSource as NonNullable<typeof routeSource>).quote({
      ...base,
      filter: { included: ['SVM-Aggregator'] },
      options: {},
    }),
    { source: 'svm-aggregator', hops: 4 },
  )

  // The best route has four heavy hops: measured, but far too large to serve.
  const best = await quoteOriginSwap(svm.quoting, base)
  t.equal(best.hops, 4)
  const steps = await svm.quoting.buildDepositSteps(
    depositRequest({
      depositor: BOB.address,
      currencyId: USDC,
      amount: best.minimumAmountOut,
      originSwap: best,
    }),
  )
  const item = depositItem(steps)
  t.ok(item.size > SVM_TRANSACTION_SIZE_LIMIT, `measured at ${item.size} bytes`)
  t.equal(item.transaction, '', 'no transaction is served')
  t.equal(item.headroom, 0)
  t.same(svm.quoting.checkTransactionSize?.(steps[0] as (typeof steps)[0]), {
    sizeBytes: item.size,
    limitBytes: 1232,
    fits: false,
  })
  // The family's error for it, and what the request can change (the route here).
  t.equal(svm.quoting.oversizedTransaction?.errorCode, 'SOLANA_TX_TOO_LARGE')
  t.match(
    svm.quoting.oversizedTransaction?.remedy(best),
    new RegExp(`the origin swap takes ${best.hops} hops? .*set maxRouteLength`),
  )
  t.match(
    svm.quoting.oversizedTransaction?.remedy(undefined),
    /remove includeComputeUnitLimit or depositFeePayer/,
  )

  const withoutRoutes = await devnet.adapter({ swapApiUrl: undefined })
  t.equal(withoutRoutes.quoting.swapSources, undefined, 'no route source, no origin swaps')
  await t.rejects(
    withoutRoutes.quoting.buildDepositSteps(
      depositRequest({ depositor: BOB.address, currencyId: USDC, amount: 1n, originSwap: best }),
    ),
    { code: 'NO_SWAP_ROUTES_FOUND' },
  )
  const unreachable = await devnet.adapter({ swapApiUrl: 'http://127.0.0.1:1', swapApiTimeoutMs: 1000 })
  await t.rejects(quoteOriginSwap(unreachable.quoting, base), { code: 'SWAP_QUOTE_FAILED' })
})

t.test('wireSize is the serialized length, and measures what web3.js cannot serialize', async (t) => {
  const payer = Keypair.generate().publicKey
  const cosigner = Keypair.generate().publicKey
  const recentBlockhash = Keypair.generate().publicKey.toBase58()
  // 254 table entries: with the payer and the program, the 256 accounts a message can index.
  const others = Array.from({ length: 254 }, () => Keypair.generate().publicKey)
  const table = new AddressLookupTableAccount({
    key: Keypair.generate().publicKey,
    state: {
      deactivationSlot: 2n ** 64n - 1n,
      lastExtendedSlot: 0,
      lastExtendedSlotStartIndex: 0,
      addresses: others,
    },
  })
  const program = Keypair.generate().publicKey
  const transfer = SystemProgram.transfer({
    fromPubkey: payer,
    toPubkey: others[0] as PublicKey,
    lamports: 1,
  })
  const withData = (length: number) =>
    new TransactionInstruction({
      programId: program,
      keys: [{ pubkey: cosigner, isSigner: true, isWritable: false }],
      data: Buffer.alloc(length, 7),
    })
  // Writable (169) and read-only (85) lookups: the writable list and the instruction's account list
  // need two-byte length prefixes.
  const wide = new TransactionInstruction({
    programId: program,
    keys: others.map((pubkey, index) => ({ pubkey, isSigner: false, isWritable: index % 3 !== 0 })),
    data: Buffer.alloc(3),
  })
  const messages = {
    'one transfer and a memo': new TransactionMessage({
      payerKey: payer,
      recentBlockhash,
      instructions: [transfer, memo(randomId())],
    }).compileToV0Message(),
    'two signers, 200 bytes of data': new TransactionMessage({
      payerKey: payer,
      recentBlockhash,
      instructions: [transfer, withData(200)],
    }).compileToV0Message(),
    '254 accounts through a lookup table': new TransactionMessage({
      payerKey: payer,
      recentBlockhash,
      instructions: [wide],
    }).compileToV0Message([table]),
  }
  for (const [name, message] of Object.entries(messages)) {
    t.equal(wireSize(message), new VersionedTransaction(message).serialize().length, name)
  }
  const [lookup] = messages['254 accounts through a lookup table'].addressTableLookups
  t.same([lookup?.writableIndexes.length, lookup?.readonlyIndexes.length], [169, 85])

  const compile = (length: number) =>
    new TransactionMessage({
      payerKey: payer,
      recentBlockhash,
      instructions: [withData(length)],
    }).compileToV0Message()
  const fits = compile(600)
  const oversized = compile(1600)
  t.equal(wireSize(fits), new VersionedTransaction(fits).serialize().length)
  t.throws(() => new VersionedTransaction(oversized).serialize(), 'web3.js cannot serialize it')
  t.equal(wireSize(oversized), wireSize(fits) + 1000, 'the oversized one, measured byte for byte')
  t.ok(wireSize(oversized) > SVM_TRANSACTION_SIZE_LIMIT)
})

t.test('readBalance: SOL, tokens, and 0 without a token account', async (t) => {
  const nobody = Keypair.generate().publicKey.toBase58()
  t.equal(await svm.reading.readBalance(SVM_SOLVER.address, NATIVE), await lamports(SVM_SOLVER.address))
  t.equal(await svm.reading.readBalance(CAROL.address, USDC), await tokenBalance(CAROL.address, USDC))
  t.ok((await svm.reading.readBalance(CAROL.address, USDC)) > 0n)
  t.equal(
    await svm.reading.readBalance(SVM_SOLVER.address, SVM_WRAPPED_NATIVE_MINT),
    await tokenBalance(SVM_SOLVER.address, SVM_WRAPPED_NATIVE_MINT),
    'wSOL is a token like any other',
  )
  t.equal(await svm.reading.readBalance(nobody, USDC), 0n)
  t.equal(await svm.reading.readBalance(nobody, NATIVE), 0n)
  await t.rejects(svm.reading.readBalance(nobody, Keypair.generate().publicKey.toBase58()), {
    code: 'UNSUPPORTED_CURRENCY',
  })
})

t.test('scanDeposits starts at the head and finds later deposits in the vault accounts', async (t) => {
  const scan = svm.reading.scanDeposits
  if (!scan) throw new Error('the SVM reading scans deposits')
  const start = await scan(undefined)
  t.same(start.deposits, [], 'no replay of the funding history')
  t.equal(start.caughtUp, true)
  const watched = [
    VAULT,
    svmAssociatedTokenAddress(VAULT, USDC),
    svmAssociatedTokenAddress(VAULT, SVM_WRAPPED_NATIVE_MINT),
  ]
  const newest = async (account: string) =>
    (await connection.getSignaturesForAddress(new PublicKey(account), { limit: 1 }))[0]?.signature
  t.same(
    JSON.parse(start.cursor),
    Object.fromEntries(await Promise.all(watched.map(async (account) => [account, await newest(account)]))),
    'the cursor holds the newest signature of the vault and its token accounts',
  )
  t.same(await scan(start.cursor), { deposits: [], cursor: start.cursor, caughtUp: true }, 'nothing new')

  const native = depositRequest({ depositor: ALICE.address, currencyId: NATIVE, amount: 7_000_000n })
  const token = depositRequest({ depositor: BOB.address, currencyId: USDC, amount: 3_000_000n })
  const nativeSignature = await deposit(t, native, [ALICE.keypair])
  const tokenSignature = await deposit(t, token, [BOB.keypair])
  // Into the vault but untagged: not a deposit.
  await sendInstructions(connection, CAROL.keypair, [
    SystemProgram.transfer({
      fromPubkey: CAROL.keypair.publicKey,
      toPubkey: new PublicKey(VAULT),
      lamports: 1_000,
    }),
  ])
  const found = await scan(start.cursor)
  t.equal(found.caughtUp, true)
  t.same(
    found.deposits.map(({ depositId, currencyId, amount, depositor, transactionId }) => ({
      depositId,
      currencyId,
      amount,
      depositor,
      transactionId,
    })),
    [
      {
        depositId: native.requestId,
        currencyId: NATIVE,
        amount: 7_000_000n,
        depositor: ALICE.address,
        transactionId: nativeSignature,
      },
      {
        depositId: token.requestId,
        currencyId: USDC,
        amount: 3_000_000n,
        depositor: BOB.address,
        transactionId: tokenSignature,
      },
    ],
  )
  for (const fact of found.deposits) {
    t.ok(fact.confirmations >= 1, 'with confirmations')
    t.type(fact.blockNumber, 'bigint')
  }
  t.not(found.cursor, start.cursor, 'the cursor moved on')
  t.same(await scan(found.cursor), { deposits: [], cursor: found.cursor, caughtUp: true })
  await t.rejects(scan('twelve'), { code: 'INVALID_REQUEST' }, 'a cursor that is not one')
})

t.test('scanDeposits in small steps misses nothing and says when it caught up', async (t) => {
  const small = await devnet.adapter({ maxScanSignatures: 2 })
  const scan = small.reading.scanDeposits
  if (!scan) throw new Error('the SVM reading scans deposits')
  let cursor = (await scan(undefined)).cursor
  const ids: string[] = []
  for (let index = 0; index < 5; index++) {
    const request = depositRequest({
      depositor: DAVE.address,
      currencyId: NATIVE,
      amount: BigInt(1_000_000 + index),
    })
    ids.push(request.requestId)
    await deposit(t, request, [DAVE.keypair])
  }
  /** Scans on from the cursor, `steps` times or until caught up: the deposit ids and each step's caughtUp. */
  const scanOn = async (steps: number) => {
    const seen: string[] = []
    const caughtUp: boolean[] = []
    while (caughtUp.length < steps && caughtUp.at(-1) !== true) {
      const result = await scan(cursor)
      t.ok(result.deposits.length <= 2, 'at most maxScanSignatures transactions per account and step')
      seen.push(...result.deposits.map((fact) => fact.depositId))
      caughtUp.push(result.caughtUp)
      cursor = result.cursor
    }
    return { seen, caughtUp }
  }
  const first = await scanOn(1)
  // A deposit landing while the scan walks down the backlog is read once it is through.
  const during = depositRequest({ depositor: DAVE.address, currencyId: NATIVE, amount: 2_000_000n })
  await deposit(t, during, [DAVE.keypair])
  const rest = await scanOn(10)
  t.same([...first.caughtUp, ...rest.caughtUp], [false, false, true], 'five deposits in steps of two')
  t.same([...first.seen, ...rest.seen].sort(), [...ids].sort(), 'every deposit of the backlog, each once')
  t.same((await scanOn(1)).seen, [during.requestId], 'then the one that landed meanwhile')
  t.same(await scan(cursor), { deposits: [], cursor, caughtUp: true }, 'nothing left')

  // Exactly one page of new deposits: read in order, then an empty page says it caught up.
  const later = [0, 1].map((index) =>
    depositRequest({ depositor: DAVE.address, currencyId: NATIVE, amount: BigInt(3_000_000 + index) }),
  )
  for (const request of later) await deposit(t, request, [DAVE.keypair])
  t.same(await scanOn(5), {
    seen: later.map((request) => request.requestId),
    caughtUp: [false, true],
  })
})

t.test('fills: native and token, a new token account, a top-up; broadcast twice', async (t) => {
  const { filling } = svm
  t.equal(filling.solverAddress(DEVNET_CREDENTIALS), SVM_SOLVER.address)
  t.equal(await filling.nextNonce(SVM_SOLVER.address), 0n, 'no sequence numbers: blockhashes instead')

  const recipient = Keypair.generate().publicKey.toBase58()
  const orderId = randomId()
  const signed = await filling.signFill(
    { orderId, recipient, currencyId: NATIVE, amount: 5_000_000n, calls: [], topupNativeAmount: 0n },
    DEVNET_CREDENTIALS,
  )
  const transaction = VersionedTransaction.deserialize(Buffer.from(signed.raw, 'base64'))
  t.equal(signed.transactionId, bs58.encode(transaction.signatures[0] as Uint8Array))
  t.equal(signed.amount, 5_000_000n)
  t.match(await filling.outcome(signed.transactionId), { state: 'not_found', final: false })
  const solverBefore = await lamports(SVM_SOLVER.address)
  await filling.broadcast(signed.raw)
  await filling.broadcast(signed.raw)
  await confirmed(connection, signed.transactionId)
  t.equal(await lamports(recipient), 5_000_000n)
  t.equal(await lamports(SVM_SOLVER.address), solverBefore - 5_000_000n - FEE, 'paid once')
  const outcome = await filling.outcome(signed.transactionId)
  t.match(outcome, { transactionId: signed.transactionId, state: 'success', final: false })
  t.ok((outcome.confirmations ?? 0) >= 1)
  t.notOk('revert' in outcome)
  chain.advanceSlots(2)
  t.match(await filling.outcome(signed.transactionId), { state: 'success', final: true })
  const fills = await svm.reading.readFills?.(signed.transactionId)
  t.match(fills, { state: 'success', final: true })
  t.same(fills?.facts, [{ index: 0, orderId, recipient, currencyId: NATIVE, amount: 5_000_000n }])

  // USDC to someone without a token account, with a SOL top-up: rent priced, then paid.
  const newcomer = Keypair.generate().publicKey.toBase58()
  const tokenOrder = randomId()
  const fill = {
    orderId: tokenOrder,
    recipient: newcomer,
    currencyId: USDC,
    amount: 12_000_000n,
    calls: [],
    topupNativeAmount: 2_000_000n,
  }
  const rent = BigInt(await connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE))
  const estimate = await svm.quoting.estimateFillCost({ ...fill, payer: SVM_SOLVER.address })
  t.same(estimate, { currencyId: NATIVE, amount: FEE + rent, rent, units: 1n, unitPrice: FEE })
  const solverSol = await lamports(SVM_SOLVER.address)
  const solverUsdc = await tokenBalance(SVM_SOLVER.address, USDC)
  const tokenFill = await filling.signFill(fill, DEVNET_CREDENTIALS)
  await filling.broadcast(tokenFill.raw)
  await confirmed(connection, tokenFill.transactionId)
  t.equal(await tokenBalance(newcomer, USDC), 12_000_000n)
  t.equal(await lamports(newcomer), 2_000_000n, 'the top-up')
  t.equal(await tokenBalance(SVM_SOLVER.address, USDC), solverUsdc - 12_000_000n)
  t.equal(
    await lamports(SVM_SOLVER.address),
    solverSol - estimate.amount - 2_000_000n,
    'fee and rent as estimated',
  )
  t.same((await svm.reading.readFills?.(tokenFill.transactionId))?.facts, [
    { index: 1, orderId: tokenOrder, recipient: newcomer, currencyId: USDC, amount: 12_000_000n },
    { index: 2, orderId: tokenOrder, recipient: newcomer, currencyId: NATIVE, amount: 2_000_000n },
  ])
  const fresh = await devnet.adapter()
  t.match(await fresh.quoting.estimateFillCost({ ...fill, payer: SVM_SOLVER.address }), {
    amount: FEE,
    rent: 0n,
  })

  await t.rejects(
    filling.signFill({ ...fill, calls: [{ to: newcomer, value: 0n, data: '0x' }] }, DEVNET_CREDENTIALS),
    { code: 'EXTRA_TXS_NOT_SUPPORTED' },
  )
})

t.test('outcomes: not_found, reverted (landed with skipPreflight), refused by preflight', async (t) => {
  const { filling } = svm
  t.match(await filling.outcome(unknownSignature()), { state: 'not_found', final: false, confirmations: 0 })
  await t.rejects(filling.outcome('abc'), { code: 'INVALID_REQUEST' }, 'not a signature')

  const held = await tokenBalance(SVM_SOLVER.address, USDC)
  const signed = await filling.signFill(
    {
      orderId: randomId(),
      recipient: ALICE.address,
      currencyId: USDC,
      amount: held + 1n,
      calls: [],
      topupNativeAmount: 0n,
    },
    DEVNET_CREDENTIALS,
  )
  // broadcast simulates first: a fill the solver cannot pay is refused and nothing lands.
  await t.rejects(filling.broadcast(signed.raw), /insufficient funds/i)
  t.match(await filling.outcome(signed.transactionId), { state: 'not_found' })

  // Sent without preflight, it lands with its error and pays its fee, as on chain.
  const solverSol = await lamports(SVM_SOLVER.address)
  await connection.sendRawTransaction(Buffer.from(signed.raw, 'base64'), { skipPreflight: true })
  const outcome = await filling.outcome(signed.transactionId)
  t.match(outcome, { state: 'reverted', final: false })
  t.same(outcome.revert, { error: { InstructionError: [1, { Custom: 1 }] } }, 'SPL Token: insufficient funds')
  t.equal(await lamports(SVM_SOLVER.address), solverSol - FEE)
  t.equal(await tokenBalance(SVM_SOLVER.address, USDC), held)
  t.match(await svm.reading.readFills?.(signed.transactionId), { state: 'reverted', facts: [] })
  await t.resolves(filling.broadcast(signed.raw), 'broadcasting a landed (failed) transaction again is fine')
  chain.advanceSlots(2)
  t.match(await filling.outcome(signed.transactionId), { state: 'reverted', final: true })
})

// A chain of its own: it confirms a slot one slot later, and its slots jump past blockhash expiry
// (which would expire the blockhash the shared chain's quoting has cached for a second).
t.test(
  'a chain that confirms one slot later: pending, success, final; broadcasts after expiry',
  async (t) => {
    const slow = await startSvmRpcServer({ port: 0, confirmedDepth: 1, faucet: SVM_FAUCET.keypair })
    t.teardown(() => slow.stop())
    slow.ledger.requestAirdrop(SVM_SOLVER.keypair.publicKey, 10_000_000_000)
    slow.advanceSlots(1)
    const { filling, reading } = await devnet.adapter({}, slow.rpcUrl)
    const fill = (orderId: string, recipient: string) =>
      filling.signFill(
        { orderId, recipient, currencyId: NATIVE, amount: 1_000_000n, calls: [], topupNativeAmount: 0n },
        DEVNET_CREDENTIALS,
      )
    const orderId = randomId()
    const recipient = Keypair.generate().publicKey
    const signed = await fill(orderId, recipient.toBase58())
    await filling.broadcast(signed.raw)
    t.match(await filling.outcome(signed.transactionId), { state: 'pending', final: false, confirmations: 0 })
    t.match(await reading.readFills?.(signed.transactionId), { state: 'pending', facts: [] })
    slow.advanceSlots(1)
    t.match(await filling.outcome(signed.transactionId), { state: 'success', final: false })
    t.match((await reading.readFills?.(signed.transactionId))?.facts, [
      { orderId, recipient: recipient.toBase58() },
    ])
    slow.advanceSlots(1)
    t.match(await filling.outcome(signed.transactionId), { state: 'success', final: true })

    // As after a crash between broadcasting and recording it: the fill landed, its blockhash expired.
    const stale = await fill(randomId(), recipient.toBase58())
    slow.advanceSlots(MAX_BLOCKHASH_AGE + 1)
    await t.resolves(
      filling.broadcast(signed.raw),
      'a landed fill broadcast again after its blockhash expired',
    )
    t.equal(slow.ledger.getAccount(recipient)?.lamports, 1_000_000, 'paid once')
    // Signed but never sent before its blockhash expired: it can no longer land.
    await t.rejects(filling.broadcast(stale.raw), /blockhash not found/i)
    t.match(await filling.outcome(stale.transactionId), { state: 'not_found' })
  },
)

t.test('refunds out of the vault, signed by the vault owner', async (t) => {
  const { filling } = svm
  const recipient = Keypair.generate().publicKey.toBase58()
  const refundId = randomId()
  const vaultBefore = await lamports(VAULT)
  const signed = await filling.signRefund(
    { refundId, source: { kind: 'depository' }, recipient, currencyId: NATIVE, amount: 3_000_000n },
    DEVNET_CREDENTIALS,
  )
  const transaction = VersionedTransaction.deserialize(Buffer.from(signed.raw, 'base64'))
  t.equal(transaction.message.staticAccountKeys[0]?.toBase58(), VAULT, 'the vault pays its own fee')
  await filling.broadcast(signed.raw)
  await confirmed(connection, signed.transactionId)
  t.equal(await lamports(recipient), 3_000_000n)
  t.equal(await lamports(VAULT), vaultBefore - 3_000_000n - FEE)
  t.same((await svm.reading.readRefunds?.(signed.transactionId))?.facts, [
    { index: 0, orderId: refundId, recipient, currencyId: NATIVE, amount: 3_000_000n },
  ])

  // Tokens: the vault holds USDC from a deposit, the recipient gets a new token account.
  await deposit(t, depositRequest({ depositor: CAROL.address, currencyId: USDC, amount: 9_000_000n }), [
    CAROL.keypair,
  ])
  const vaultUsdc = await tokenBalance(VAULT, USDC)
  const tokenRefundId = randomId()
  const tokenRefund = await filling.signRefund(
    {
      refundId: tokenRefundId,
      source: { kind: 'depository' },
      recipient,
      currencyId: USDC,
      amount: 4_000_000n,
    },
    DEVNET_CREDENTIALS,
  )
  await filling.broadcast(tokenRefund.raw)
  await confirmed(connection, tokenRefund.transactionId)
  t.equal(await tokenBalance(recipient, USDC), 4_000_000n)
  t.equal(await tokenBalance(VAULT, USDC), vaultUsdc - 4_000_000n)
  t.same((await svm.reading.readRefunds?.(tokenRefund.transactionId))?.facts, [
    { index: 1, orderId: tokenRefundId, recipient, currencyId: USDC, amount: 4_000_000n },
  ])
  t.same((await svm.reading.readDeposits(tokenRefund.transactionId)).facts, [], 'a refund is no deposit')

  const request = {
    refundId: randomId(),
    source: { kind: 'depository' as const },
    recipient,
    currencyId: NATIVE,
    amount: 1n,
  }
  await t.rejects(
    filling.signRefund(request, {
      solverKey: DEVNET_CREDENTIALS.solverKey,
      allocatorKey: DEVNET_CREDENTIALS.solverKey,
    }),
    { code: 'UNSUPPORTED_EXECUTION_TYPE', message: /does not own the vault/ },
  )
  await t.rejects(filling.signRefund(request, { solverKey: DEVNET_CREDENTIALS.solverKey }), {
    code: 'UNSUPPORTED_EXECUTION_TYPE',
    message: /No vault key/,
  })
  await t.rejects(
    filling.signRefund(
      { ...request, source: { kind: 'depositAddress', requestId: randomId() } },
      DEVNET_CREDENTIALS,
    ),
    { code: 'UNSUPPORTED_EXECUTION_TYPE', message: /no deposit addresses/ },
  )
})

t.test('a repayment pays the solver back out of the vault: SOL and USDC in one transaction', async (t) => {
  const { filling } = svm
  // The vault holds USDC from a deposit.
  await deposit(t, depositRequest({ depositor: CAROL.address, currencyId: USDC, amount: 6_000_000n }), [
    CAROL.keypair,
  ])
  const solver = filling.solverAddress(DEVNET_CREDENTIALS)
  t.equal(solver, SVM_SOLVER.address)
  const [vaultSol, vaultUsdc, solverSol, solverUsdc] = await Promise.all([
    lamports(VAULT),
    tokenBalance(VAULT, USDC),
    lamports(solver),
    tokenBalance(solver, USDC),
  ])
  const repaymentId = randomId()
  const signed = await filling.signRepayment!(
    {
      repaymentId,
      recipient: solver,
      legs: [
        { currencyId: NATIVE, amount: 2_000_000n },
        { currencyId: USDC, amount: 5_000_000n },
      ],
    },
    DEVNET_CREDENTIALS,
  )
  const transaction = VersionedTransaction.deserialize(Buffer.from(signed.raw, 'base64'))
  t.equal(transaction.message.staticAccountKeys[0]?.toBase58(), VAULT, 'the vault pays its own fee')
  await filling.broadcast(signed.raw)
  await filling.broadcast(signed.raw)
  await confirmed(connection, signed.transactionId)
  t.equal(await lamports(solver), solverSol + 2_000_000n, 'SOL back to the solver, once')
  t.equal(await tokenBalance(solver, USDC), solverUsdc + 5_000_000n, 'USDC back to the solver, once')
  t.equal(await lamports(VAULT), vaultSol - 2_000_000n - FEE)
  t.equal(await tokenBalance(VAULT, USDC), vaultUsdc - 5_000_000n)
  t.ok((filling.maxRepaymentLegs ?? 1) >= 2, 'several legs per transaction')
  await t.rejects(filling.signRepayment!({ repaymentId, recipient: solver, legs: [] }, DEVNET_CREDENTIALS), {
    code: 'INVALID_REQUEST',
  })
  await t.rejects(
    filling.signRepayment!(
      { repaymentId, recipient: solver, legs: [{ currencyId: NATIVE, amount: 1n }] },
      { solverKey: DEVNET_CREDENTIALS.solverKey },
    ),
    { code: 'UNSUPPORTED_EXECUTION_TYPE', message: /No vault key/ },
  )
})

t.test('solver keys in the three accepted forms; a malformed one is refused without echo', async (t) => {
  const { filling } = svm
  const secret = SVM_SOLVER.keypair.secretKey
  const forms: SolverCredentials[] = [
    { solverKey: devnetSeedHex('solver') },
    { solverKey: bs58.encode(secret) },
    { solverKey: JSON.stringify([...secret]) },
  ]
  for (const credentials of forms) t.equal(filling.solverAddress(credentials), SVM_SOLVER.address)
  const secretText = 'not-a-key-at-all'
  t.throws(() => filling.solverAddress({ solverKey: secretText }), { code: 'INVALID_REQUEST' })
  try {
    filling.solverAddress({ solverKey: secretText })
  } catch (error) {
    t.notMatch((error as Error).message, secretText, 'the secret is not echoed')
  }
})

t.test(
  'a transaction tagged with two different ids gives no facts; bad signatures are refused',
  async (t) => {
    const [first, second] = [randomId(), randomId()]
    const toVault = (lamportsSent: number) =>
      SystemProgram.transfer({
        fromPubkey: ALICE.keypair.publicKey,
        toPubkey: new PublicKey(VAULT),
        lamports: lamportsSent,
      })
    const twoIds = await sendInstructions(connection, ALICE.keypair, [
      toVault(10_000),
      memo(first),
      memo(second),
    ])
    t.match(await svm.reading.readDeposits(twoIds), { state: 'success', facts: [] })
    const sameTwice = await sendInstructions(connection, ALICE.keypair, [
      toVault(20_000),
      memo(first),
      memo(first),
    ])
    t.match(
      (await svm.reading.readDeposits(sameTwice)).facts,
      [{ depositId: first, amount: 20_000n }],
      'one id, written twice',
    )

    const payee = Keypair.generate().publicKey
    const fillTwoIds = await sendInstructions(connection, SVM_SOLVER.keypair, [
      SystemProgram.transfer({
        fromPubkey: SVM_SOLVER.keypair.publicKey,
        toPubkey: payee,
        lamports: 1_000_000,
      }),
      memo(first),
      memo(second),
    ])
    t.match(await svm.reading.readFills?.(fillTwoIds), { state: 'success', facts: [] })
    t.match(await svm.reading.readRefunds?.(fillTwoIds), { state: 'success', facts: [] })

    const unknown = unknownSignature()
    t.match(await svm.reading.readDeposits(unknown), {
      transactionId: unknown,
      state: 'not_found',
      facts: [],
    })
    for (const bad of [
      'abc',
      `0x${'ab'.repeat(32)}`,
      Keypair.generate().publicKey.toBase58(),
      `${unknown}0`,
    ]) {
      await t.rejects(
        svm.reading.readDeposits(bad),
        { code: 'INVALID_REQUEST' },
        `readDeposits(${bad.slice(0, 12)}…)`,
      )
      await t.rejects(svm.reading.readFills?.(bad) as Promise<unknown>, { code: 'INVALID_REQUEST' })
      await t.rejects(svm.reading.readRefunds?.(bad) as Promise<unknown>, { code: 'INVALID_REQUEST' })
    }
  },
)
