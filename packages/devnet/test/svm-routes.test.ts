import { SVM_TRANSACTION_SIZE_LIMIT } from '@pontis/plugin-svm'
import { ACCOUNT_SIZE } from '@solana/spl-token'
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js'
import t, { type Test } from 'tap'
import {
  SVM_ROUTE_AUTHORITY,
  SVM_ROUTE_TOKENS,
  SVM_STABLECOIN,
  SVM_USERS,
  SVM_VAULT_OWNER,
  SVM_WRAPPED_NATIVE_MINT,
  type SvmDevAccount,
} from '../src/svm/accounts.js'
import { svmAssociatedTokenAddress } from '../src/svm/devnet.js'
import {
  findBestRoute,
  planSwap,
  poolInputVault,
  poolOutputVault,
  type QuoteResponse,
  type RouteApiError,
  type RouteRequest,
  routeAccountCount,
  routeTokenByMint,
  SVM_CONSERVATIVE_LABEL,
  SVM_ROUTE_LABELS,
  SVM_ROUTE_POOLS,
  type SwapInstructionsResponse,
  startRouteSimulator,
  swapExactIn,
} from '../src/svm/routes/index.js'
import { LAMPORTS_PER_SIGNATURE } from '../src/svm/rpc.js'
import { ata, routeInstructions, startRouteChain, v0WireSize } from './fixtures/svm-routes-chain.js'

const [PBONK, PJUP, PRAY, PORCA] = SVM_ROUTE_TOKENS.map((token) => token.address) as [
  string,
  string,
  string,
  string,
]
const USDC = SVM_STABLECOIN.address
const SOL = SVM_WRAPPED_NATIVE_MINT
const [alice, bob, carol, dave] = SVM_USERS as [SvmDevAccount, SvmDevAccount, SvmDevAccount, SvmDevAccount]
const HEAVY_LABELS = ['SimCLMM', 'SimDLMM', 'SimBook']
const SIGNATURE_FEE = BigInt(LAMPORTS_PER_SIGNATURE)

const chain = await startRouteChain()
t.teardown(() => chain.stop())
const TOKEN_ACCOUNT_RENT = BigInt(chain.devnet.ledger.minimumBalanceForRentExemption(ACCOUNT_SIZE))
const simulator = await startRouteSimulator({ ledger: chain.ledger })
t.teardown(() => simulator.stop())

async function request(path: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${simulator.url}${path}`, init)
  return { status: response.status, body: await response.json() }
}

function quoteUrl(params: Record<string, string | number | bigint | boolean>): string {
  return `/quote?${new URLSearchParams(Object.entries(params).map(([key, value]) => [key, String(value)]))}`
}

async function quote(params: Record<string, string | number | bigint | boolean>): Promise<QuoteResponse> {
  const { status, body } = await request(quoteUrl(params))
  if (status !== 200) throw new Error(`quote ${JSON.stringify(params)}: ${status} ${JSON.stringify(body)}`)
  return body as QuoteResponse
}

async function quoteError(
  params: Record<string, string | number | bigint | boolean>,
): Promise<[number, string]> {
  const { status, body } = await request(quoteUrl(params))
  return [status, (body as RouteApiError).errorCode]
}

function postSwapInstructions(body: unknown): Promise<{ status: number; body: unknown }> {
  return request('/swap-instructions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

async function swapInstructions(body: Record<string, unknown>): Promise<SwapInstructionsResponse> {
  const { status, body: answer } = await postSwapInstructions(body)
  if (status !== 200) throw new Error(`swap-instructions: ${status} ${JSON.stringify(answer)}`)
  return answer as SwapInstructionsResponse
}

const labelsOf = (answer: QuoteResponse) => answer.routePlan.map((step) => step.swapInfo.label)
const hopsOf = (answer: QuoteResponse) => answer.routePlan.length
const balance = (owner: SvmDevAccount | PublicKey, mint: string) =>
  chain.tokenBalance(ata(owner instanceof PublicKey ? owner : owner.keypair.publicKey, mint)) ?? 0n

/** Quotes, asks for instructions, executes them as `user`; returns both answers and the execution. */
async function quoteAndSwap(
  t: Test,
  user: SvmDevAccount,
  params: Record<string, string | number | bigint | boolean>,
  options: Record<string, unknown> = {},
) {
  const answer = await quote(params)
  const instructions = await swapInstructions({
    quoteResponse: answer,
    userPublicKey: user.address,
    ...options,
  })
  const execution = chain.executeSwap(user.keypair, instructions)
  t.ok(
    execution.computeUnits <= instructions.computeUnitLimit,
    `${execution.computeUnits} CU within the limit ${instructions.computeUnitLimit}`,
  )
  return { answer, instructions, execution }
}

t.test('program-id-to-label lists every source once, also under /swap/v1', async (t) => {
  const { status, body } = await request('/program-id-to-label')
  t.equal(status, 200)
  t.same(body, Object.fromEntries(SVM_ROUTE_LABELS.map((label) => [label.programId, label.label])))
  t.equal(Object.keys(body as object).length, SVM_ROUTE_LABELS.length)
  t.ok(SVM_ROUTE_LABELS.length >= 5)
  t.same((await request('/swap/v1/program-id-to-label')).body, body)
  t.same(
    simulator.labels.map((label) => label.label),
    ['SimSwap', 'SimCPMM', 'SimOracle', 'SimCLMM', 'SimDLMM', 'SimBook'],
  )
})

t.test('the quote shape, ExactIn threshold and determinism', async (t) => {
  const params = { inputMint: PJUP, outputMint: USDC, amount: 1_000_000_000, slippageBps: 100 }
  const answer = await quote(params)
  t.equal(answer.inputMint, PJUP)
  t.equal(answer.outputMint, USDC)
  t.equal(answer.inAmount, '1000000000')
  t.equal(answer.swapMode, 'ExactIn')
  t.equal(answer.slippageBps, 100)
  t.equal(answer.platformFee, null)
  t.equal(answer.priceImpactPct, '0')
  t.type(answer.contextSlot, 'number')
  t.type(answer.timeTaken, 'number')
  t.equal(answer.otherAmountThreshold, ((BigInt(answer.outAmount) * 9_900n) / 10_000n).toString())
  t.equal(hopsOf(answer), 4)
  t.ok(
    labelsOf(answer).every((label) => HEAVY_LABELS.includes(label)),
    labelsOf(answer).join(' > '),
  )
  // The hops chain: each hop's output is the next hop's input, in the same amount.
  let mint = PJUP
  let amount = answer.inAmount
  for (const { swapInfo, percent } of answer.routePlan) {
    t.equal(percent, 100)
    t.equal(swapInfo.inputMint, mint)
    t.equal(swapInfo.inAmount, amount)
    t.equal(swapInfo.feeMint, swapInfo.inputMint)
    t.ok(BigInt(swapInfo.feeAmount) > 0n)
    t.ok(SVM_ROUTE_POOLS.some((pool) => pool.ammKey === swapInfo.ammKey && pool.label === swapInfo.label))
    mint = swapInfo.outputMint
    amount = swapInfo.outAmount
  }
  t.equal(mint, USDC)
  t.equal(amount, answer.outAmount)
  const again = await quote(params)
  t.same({ ...again, timeTaken: 0 }, { ...answer, timeTaken: 0 }, 'the same request gives the same route')
  const slippage = await quote({ inputMint: PJUP, outputMint: USDC, amount: 1_000_000_000 })
  t.equal(slippage.slippageBps, 50, 'default slippage')
  t.equal(slippage.otherAmountThreshold, ((BigInt(slippage.outAmount) * 9_950n) / 10_000n).toString())
  t.same((await request(`/swap/v1${quoteUrl(params)}`)).status, 200)
})

t.test('from every route token to USDC and SOL: 4 hops best, then 3, 2, direct, conservative', async (t) => {
  for (const input of SVM_ROUTE_TOKENS) {
    for (const output of [USDC, SOL]) {
      const base = {
        inputMint: input.address,
        outputMint: output,
        amount: 1_000n * 10n ** BigInt(input.decimals),
      }
      const [best, three, two, direct, conservative] = await Promise.all([
        quote(base),
        quote({ ...base, maxRouteLength: 3 }),
        quote({ ...base, maxRouteLength: 2 }),
        quote({ ...base, onlyDirectRoutes: true }),
        quote({ ...base, dexes: SVM_CONSERVATIVE_LABEL }),
      ])
      const name = `${input.symbol} to ${output === USDC ? 'USDC' : 'SOL'}`
      t.same([best, three, two, direct, conservative].map(hopsOf), [4, 3, 2, 1, 1], `${name}: hop counts`)
      const outs = [best, three, two, direct, conservative].map((answer) => BigInt(answer.outAmount))
      t.ok(
        outs.every((out, index) => index === 0 || out < (outs[index - 1] as bigint)),
        `${name}: each limit pays less (${outs.join(' > ')})`,
      )
      t.ok(
        labelsOf(best).every((label) => HEAVY_LABELS.includes(label)),
        `${name}: best route is heavy`,
      )
      t.same(labelsOf(conservative), [SVM_CONSERVATIVE_LABEL])
      const lengthOne = await quote({ ...base, maxRouteLength: 1 })
      t.same(
        { ...lengthOne, timeTaken: 0 },
        { ...direct, timeTaken: 0 },
        'maxRouteLength=1 is onlyDirectRoutes',
      )
    }
  }
})

t.test('dexes, excludeDexes and maxAccounts filter the sources deterministically', async (t) => {
  const base = { inputMint: PRAY, outputMint: USDC, amount: 100_000_000 }
  const medium = await quote({ ...base, excludeDexes: HEAVY_LABELS.join(',') })
  t.ok(
    labelsOf(medium).every((label) => !HEAVY_LABELS.includes(label)),
    labelsOf(medium).join(' > '),
  )
  t.same(labelsOf(medium), ['SimOracle'])
  const onlyBook = await quote({ ...base, dexes: 'SimBook' })
  t.ok(labelsOf(onlyBook).every((label) => label === 'SimBook'))
  t.same(labelsOf(await quote({ ...base, dexes: 'SimBook,SimSwap', excludeDexes: 'SimBook' })), ['SimSwap'])
  const best = await quote(base)
  const accountsOf = (answer: QuoteResponse) =>
    routeAccountCount(
      answer.routePlan.map((step) => SVM_ROUTE_POOLS.find((pool) => pool.ammKey === step.swapInfo.ammKey)!),
    )
  t.ok(accountsOf(best) > 40, `best route has ${accountsOf(best)} accounts`)
  let previous = best
  for (const maxAccounts of [40, 30, 20, 12]) {
    const limited = await quote({ ...base, maxAccounts })
    t.ok(accountsOf(limited) <= maxAccounts, `maxAccounts=${maxAccounts}: ${accountsOf(limited)} accounts`)
    t.ok(BigInt(limited.outAmount) < BigInt(previous.outAmount), `maxAccounts=${maxAccounts} pays less`)
    previous = limited
  }
  t.same(labelsOf(previous), [SVM_CONSERVATIVE_LABEL], 'the tightest budget leaves the conservative source')
})

t.test('errors: no route, untradable, circular, bad parameters', async (t) => {
  t.same(await quoteError({ inputMint: PBONK, outputMint: PJUP, amount: 1000, dexes: 'SimSwap' }), [
    400,
    'COULD_NOT_FIND_ANY_ROUTE',
  ])
  t.same(await quoteError({ inputMint: PJUP, outputMint: USDC, amount: 1000, maxAccounts: 9 }), [
    400,
    'COULD_NOT_FIND_ANY_ROUTE',
  ])
  t.same(await quoteError({ inputMint: PBONK, outputMint: USDC, amount: 1 }), [
    400,
    'COULD_NOT_FIND_ANY_ROUTE',
  ])
  const stranger = Keypair.generate().publicKey.toBase58()
  t.same(await quoteError({ inputMint: stranger, outputMint: USDC, amount: 1000 }), [
    400,
    'TOKEN_NOT_TRADABLE',
  ])
  t.same(await quoteError({ inputMint: USDC, outputMint: stranger, amount: 1000 }), [
    400,
    'TOKEN_NOT_TRADABLE',
  ])
  t.same(await quoteError({ inputMint: USDC, outputMint: USDC, amount: 1000 }), [
    400,
    'CIRCULAR_ARBITRAGE_IS_DISABLED',
  ])
  const good = { inputMint: PJUP, outputMint: USDC, amount: 1000 }
  for (const bad of [
    { ...good, amount: 0 },
    { ...good, amount: 'ten' },
    { ...good, amount: '18446744073709551616' },
    { ...good, inputMint: 'not-a-key' },
    { inputMint: PJUP, amount: 1000 },
    { ...good, slippageBps: 10_001 },
    { ...good, slippageBps: -1 },
    { ...good, swapMode: 'Both' },
    { ...good, maxRouteLength: 0 },
    { ...good, maxRouteLength: 5 },
    { ...good, maxAccounts: 'many' },
    { ...good, onlyDirectRoutes: 'yes' },
    { ...good, dexes: 'Raydium' },
    { ...good, excludeDexes: 'SimSwap,Nope' },
    { ...good, platformFeeBps: 20 },
  ])
    t.same(await quoteError(bad), [400, 'NOT_SUPPORTED'], JSON.stringify(bad))
  t.equal((await request('/nowhere')).status, 404)
  t.equal((await request('/quote', { method: 'POST' })).status, 405)

  const answer = await quote(good)
  const swap = (body: unknown) =>
    postSwapInstructions(body).then(({ status, body }) => [status, (body as RouteApiError).errorCode])
  t.same(await swap('{not json'), [400, 'NOT_SUPPORTED'])
  t.same(await swap({ userPublicKey: alice.address }), [400, 'NOT_SUPPORTED'])
  t.same(await swap({ quoteResponse: answer, userPublicKey: 'nobody' }), [400, 'NOT_SUPPORTED'])
  t.same(await swap({ quoteResponse: answer, userPublicKey: alice.address, useSharedAccounts: 'sure' }), [
    400,
    'NOT_SUPPORTED',
  ])
  const [step] = answer.routePlan
  t.same(
    await swap({
      quoteResponse: {
        ...answer,
        routePlan: [{ ...step, swapInfo: { ...step?.swapInfo, ammKey: stranger } }],
      },
      userPublicKey: alice.address,
    }),
    [400, 'MARKET_NOT_FOUND'],
  )
  t.same(
    await swap({ quoteResponse: { ...answer, outputMint: SOL }, userPublicKey: alice.address }),
    [400, 'NOT_SUPPORTED'],
    'a plan that does not end at outputMint',
  )
  t.same(await swap({ quoteResponse: { ...answer, inAmount: '-5' }, userPublicKey: alice.address }), [
    400,
    'NOT_SUPPORTED',
  ])
})

t.test('single hop on the conservative source executes with exact balances', async (t) => {
  const before = {
    pjup: balance(alice, PJUP),
    usdc: balance(alice, USDC),
    vault: chain.tokenBalance(poolInputVault(PJUP)) ?? 0n,
  }
  const { answer, instructions, execution } = await quoteAndSwap(t, alice, {
    inputMint: PJUP,
    outputMint: USDC,
    amount: 250_000_000,
    dexes: SVM_CONSERVATIVE_LABEL,
  })
  t.same(labelsOf(answer), [SVM_CONSERVATIVE_LABEL])
  t.equal(balance(alice, PJUP), before.pjup - 250_000_000n)
  t.equal(balance(alice, USDC), before.usdc + BigInt(answer.outAmount))
  t.equal(
    poolInputVault(PJUP).toBase58(),
    svmAssociatedTokenAddress(SVM_ROUTE_AUTHORITY.address, PJUP),
    "the input vault is the route authority's ATA",
  )
  t.equal(
    chain.tokenBalance(poolInputVault(PJUP)),
    before.vault + 250_000_000n,
    'the pool input vault got the input',
  )
  const outputVault = poolOutputVault(
    answer.routePlan[0]!.swapInfo.ammKey,
    USDC,
    alice.keypair.publicKey,
  ).publicKey
  t.equal(chain.tokenBalance(outputVault), 0n, 'the user moved exactly what the vault was funded with')
  t.same(chain.delegation(outputVault), { delegate: undefined, amount: 0n }, 'the approval is used up')
  t.equal(instructions.otherInstructions.length, 1, 'swap (input leg) and one other (output leg)')
  t.equal(instructions.cleanupInstruction, null)
  t.same(instructions.computeBudgetInstructions, [])
  t.same(instructions.addressLookupTableAddresses, [])
  t.equal(instructions.tokenLedgerInstruction, null)
  t.equal(instructions.prioritizationFeeLamports, 0)
  const pool = SVM_ROUTE_POOLS.find((candidate) => candidate.ammKey === answer.routePlan[0]!.swapInfo.ammKey)!
  t.same(
    instructions.swapInstruction.accounts.slice(4).map((account) => account.pubkey),
    [pool.programId, ...pool.accounts],
    'the first leg instruction carries the source program and pool accounts, read-only',
  )
  t.ok(
    instructions.swapInstruction.accounts
      .slice(4)
      .every((account) => !account.isWritable && !account.isSigner),
  )
  t.notOk(execution.usedLookupTable, `a direct route fits (${execution.wireSize} bytes)`)
})

t.test('four hops through user token accounts execute with exact balances', async (t) => {
  const before = { pray: balance(bob, PRAY), usdc: balance(bob, USDC) }
  const { answer, instructions, execution } = await quoteAndSwap(t, bob, {
    inputMint: PRAY,
    outputMint: USDC,
    amount: 40_000_000,
  })
  t.equal(hopsOf(answer), 4)
  const intermediates = answer.routePlan.slice(1).map((step) => step.swapInfo.inputMint)
  t.equal(balance(bob, PRAY), before.pray - 40_000_000n)
  t.equal(balance(bob, USDC), before.usdc + BigInt(answer.outAmount))
  for (const mint of intermediates)
    t.ok(chain.exists(ata(bob.keypair.publicKey, mint)), 'intermediate ATA created')
  t.equal(instructions.setupInstructions.length, 4, 'three intermediate ATAs and the output ATA')
  t.equal(instructions.otherInstructions.length, 7, 'two transfers per hop')
  const routeKeys = new Set(
    routeInstructions(instructions).flatMap((instruction) => [
      instruction.programId.toBase58(),
      ...instruction.keys.map((key) => key.pubkey.toBase58()),
    ]),
  )
  const pools = answer.routePlan.map(
    (step) => SVM_ROUTE_POOLS.find((pool) => pool.ammKey === step.swapInfo.ammKey)!,
  )
  t.equal(routeKeys.size, routeAccountCount(pools), 'maxAccounts counts exactly the distinct route accounts')
  t.ok(
    execution.wireSize > SVM_TRANSACTION_SIZE_LIMIT,
    `a heavy 4-hop route needs ${execution.wireSize} bytes`,
  )
  t.ok(execution.usedLookupTable)
})

t.test('four hops with shared accounts go vault to vault', async (t) => {
  const before = { porca: balance(carol, PORCA), usdc: balance(carol, USDC) }
  const { answer, instructions } = await quoteAndSwap(
    t,
    carol,
    { inputMint: PORCA, outputMint: USDC, amount: 30_000_000 },
    { useSharedAccounts: true },
  )
  t.equal(hopsOf(answer), 4)
  t.equal(balance(carol, PORCA), before.porca - 30_000_000n)
  t.equal(balance(carol, USDC), before.usdc + BigInt(answer.outAmount))
  t.equal(instructions.setupInstructions.length, 1, 'only the output ATA')
  t.equal(instructions.otherInstructions.length, 4, 'one input leg, then one transfer per hop')
  const routeKeys = new Set(
    routeInstructions(instructions).flatMap((ix) => ix.keys.map((key) => key.pubkey.toBase58())),
  )
  for (const step of answer.routePlan.slice(1)) {
    t.notOk(
      routeKeys.has(ata(carol.keypair.publicKey, step.swapInfo.inputMint).toBase58()),
      'no intermediate ATA',
    )
    t.ok(routeKeys.has(poolInputVault(step.swapInfo.inputMint).toBase58()), 'the next pool input vault')
  }
})

t.test('SOL in: wrapped in setup, the wrapped account closed in cleanup', async (t) => {
  const user = dave.keypair.publicKey
  const wrapped = ata(user, SOL)
  const before = { lamports: chain.lamports(user), usdc: balance(dave, USDC) }
  const { answer, instructions } = await quoteAndSwap(t, dave, {
    inputMint: SOL,
    outputMint: USDC,
    amount: 2_000_000_000,
    maxRouteLength: 1,
  })
  t.equal(answer.inputMint, SOL)
  t.notOk(chain.exists(wrapped), 'the wrapped SOL account is closed again')
  t.ok(instructions.cleanupInstruction)
  t.equal(chain.lamports(user), before.lamports - 2_000_000_000n - SIGNATURE_FEE)
  t.equal(balance(dave, USDC), before.usdc + BigInt(answer.outAmount))
})

t.test('SOL out: unwrapped in cleanup; without wrapping, the output stays wrapped', async (t) => {
  const user = alice.keypair.publicKey
  const wrapped = ata(user, SOL)
  const before = { lamports: chain.lamports(user), porca: balance(alice, PORCA) }
  const { answer, instructions } = await quoteAndSwap(
    t,
    alice,
    { inputMint: PORCA, outputMint: SOL, amount: 5_000_000 },
    { useSharedAccounts: true },
  )
  t.equal(hopsOf(answer), 4)
  t.notOk(chain.exists(wrapped))
  t.ok(instructions.cleanupInstruction)
  t.equal(balance(alice, PORCA), before.porca - 5_000_000n)
  t.equal(chain.lamports(user), before.lamports + BigInt(answer.outAmount) - SIGNATURE_FEE)

  const kept = await quoteAndSwap(
    t,
    alice,
    { inputMint: PORCA, outputMint: SOL, amount: 5_000_000, onlyDirectRoutes: true },
    { wrapAndUnwrapSol: false },
  )
  t.equal(kept.instructions.cleanupInstruction, null)
  t.equal(chain.tokenBalance(wrapped), BigInt(kept.answer.outAmount), 'the output is wrapped SOL in the ATA')
})

t.test('SOL through the middle of a route, and out of a wrapped balance', async (t) => {
  const user = bob.keypair.publicKey
  const before = { lamports: chain.lamports(user), pbonk: balance(bob, PBONK), usdc: balance(bob, USDC) }
  const { answer } = await quoteAndSwap(t, bob, {
    inputMint: PBONK,
    outputMint: USDC,
    amount: 10_000_000_000,
    dexes: 'SimDLMM,SimCLMM',
    maxRouteLength: 2,
  })
  t.same(
    answer.routePlan.map((step) => step.swapInfo.outputMint),
    [SOL, USDC],
    'PBONK > SOL > USDC',
  )
  t.equal(balance(bob, PBONK), before.pbonk - 10_000_000_000n)
  t.equal(balance(bob, USDC), before.usdc + BigInt(answer.outAmount))
  t.equal(chain.tokenBalance(ata(user, SOL)), 0n, 'the wrapped SOL passed through')
  t.equal(
    chain.lamports(user),
    before.lamports - SIGNATURE_FEE - TOKEN_ACCOUNT_RENT,
    'only the fee and the ATA rent',
  )
})

t.test('ExactOut pays exactly the output for the rounded-up input', async (t) => {
  const before = { pbonk: balance(carol, PBONK), usdc: balance(carol, USDC) }
  const { answer } = await quoteAndSwap(t, carol, {
    inputMint: PBONK,
    outputMint: USDC,
    amount: 5_000_000,
    swapMode: 'ExactOut',
    slippageBps: 30,
  })
  t.equal(answer.swapMode, 'ExactOut')
  t.equal(answer.outAmount, '5000000')
  const inAmount = BigInt(answer.inAmount)
  t.equal(
    answer.otherAmountThreshold,
    ((inAmount * 10_030n + 9_999n) / 10_000n).toString(),
    'max input, rounded up',
  )
  t.equal(balance(carol, USDC), before.usdc + 5_000_000n)
  t.equal(balance(carol, PBONK), before.pbonk - inAmount)
  // Minimal input: one unit less does not reach the output through the same pools.
  const pools = answer.routePlan.map(
    (step) => SVM_ROUTE_POOLS.find((pool) => pool.ammKey === step.swapInfo.ammKey)!,
  )
  const token = (mint: string) => routeTokenByMint(mint)!
  const replay = (amount: bigint) =>
    answer.routePlan.reduce(
      (carried, step, index) =>
        swapExactIn(pools[index]!, token(step.swapInfo.inputMint), token(step.swapInfo.outputMint), carried)
          .outAmount,
      amount,
    )
  t.ok(replay(inAmount) >= 5_000_000n)
  t.ok(replay(inAmount - 1n) < 5_000_000n, 'the input is the smallest that pays the output')

  const exactIn = await quote({ inputMint: PBONK, outputMint: USDC, amount: answer.inAmount })
  t.ok(BigInt(exactIn.outAmount) >= 5_000_000n, 'ExactIn of that input pays at least the output')
})

t.test('slippage: the threshold holds against an altered quote', async (t) => {
  const answer = await quote({ inputMint: PJUP, outputMint: USDC, amount: 100_000_000, slippageBps: 0 })
  const inflated = { ...answer, outAmount: (BigInt(answer.outAmount) + 1n).toString() }
  const refused = await postSwapInstructions({
    quoteResponse: { ...inflated, otherAmountThreshold: inflated.outAmount },
    userPublicKey: alice.address,
  })
  t.same([refused.status, (refused.body as RouteApiError).errorCode], [400, 'SLIPPAGE_TOLERANCE_EXCEEDED'])
  // Within the threshold, the route pays what the pools pay, not what the quote claims.
  const before = balance(alice, USDC)
  const instructions = await swapInstructions({ quoteResponse: inflated, userPublicKey: alice.address })
  chain.executeSwap(alice.keypair, instructions)
  t.equal(balance(alice, USDC), before + BigInt(answer.outAmount))

  const exactOut = await quote({
    inputMint: PJUP,
    outputMint: USDC,
    amount: 1_000_000,
    swapMode: 'ExactOut',
    slippageBps: 0,
  })
  const squeezed = { ...exactOut, otherAmountThreshold: (BigInt(exactOut.inAmount) - 1n).toString() }
  const refusedOut = await postSwapInstructions({ quoteResponse: squeezed, userPublicKey: alice.address })
  t.same(
    [refusedOut.status, (refusedOut.body as RouteApiError).errorCode],
    [400, 'SLIPPAGE_TOLERANCE_EXCEEDED'],
  )
})

t.test('destinationTokenAccount receives the output; no output ATA is created', async (t) => {
  const vaultOwner = SVM_VAULT_OWNER.keypair.publicKey
  const destination = ata(vaultOwner, USDC)
  t.ok(chain.exists(destination), "the devnet created the vault owner's USDC account")
  const before = { destination: chain.tokenBalance(destination) ?? 0n, usdc: balance(bob, USDC) }
  const { answer, instructions } = await quoteAndSwap(
    t,
    bob,
    { inputMint: PJUP, outputMint: USDC, amount: 10_000_000, maxRouteLength: 2 },
    { destinationTokenAccount: destination.toBase58() },
  )
  t.equal(chain.tokenBalance(destination), before.destination + BigInt(answer.outAmount))
  t.equal(balance(bob, USDC), before.usdc, 'the user ATA is untouched')
  t.notOk(
    instructions.setupInstructions.some((ix) =>
      ix.accounts.some((a) => a.pubkey === ata(bob.keypair.publicKey, USDC).toBase58()),
    ),
  )
})

t.test('concurrent users on the same route keep their own vaults and approvals', async (t) => {
  const params = { inputMint: PJUP, outputMint: USDC, amount: 20_000_000, maxRouteLength: 2 }
  const answer = await quote(params)
  const users = [carol, dave]
  const before = users.map((user) => balance(user, USDC))
  const answers = await Promise.all(
    users.map((user) => swapInstructions({ quoteResponse: answer, userPublicKey: user.address })),
  )
  // Executed in reverse order of request: neither approval overwrote the other.
  chain.executeSwap(dave.keypair, answers[1]!)
  chain.executeSwap(carol.keypair, answers[0]!)
  for (const [index, user] of users.entries())
    t.equal(balance(user, USDC), before[index]! + BigInt(answer.outAmount), user.name)
})

t.test('after a restart on the same chain; a failed transaction rejects', async (t) => {
  const { ledger } = chain
  const logs: string[] = []
  const restarted = await startRouteSimulator({ ledger, log: (message) => logs.push(message) })
  t.teardown(() => restarted.stop())
  // Carol's vaults for this route already exist (the first simulator made them): reused.
  const answer = await quote({ inputMint: PJUP, outputMint: USDC, amount: 20_000_000, maxRouteLength: 2 })
  const response = await fetch(`${restarted.url}/swap-instructions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ quoteResponse: answer, userPublicKey: carol.address }),
  })
  t.equal(response.status, 200)
  const before = balance(carol, USDC)
  chain.executeSwap(carol.keypair, (await response.json()) as SwapInstructionsResponse)
  t.equal(balance(carol, USDC), before + BigInt(answer.outAmount))
  t.equal(
    logs.filter((line) => line.includes('not created') && line.includes('already in use')).length,
    2,
    'both vaults existed: creation failed, funding and the swap went through',
  )

  const broke = Keypair.generate()
  const failing = new Transaction({
    feePayer: broke.publicKey,
    recentBlockhash: await ledger.latestBlockhash(),
  })
  failing.add(
    SystemProgram.transfer({ fromPubkey: broke.publicKey, toPubkey: alice.keypair.publicKey, lamports: 1 }),
  )
  failing.sign(broke)
  await t.rejects(ledger.send(failing), 'a failed transaction rejects')
})

t.test('wire sizes of the route instructions (v0, user pays, no lookup tables)', async (t) => {
  const user = alice.keypair.publicKey
  const cases: [string, RouteRequest][] = []
  const add = (
    name: string,
    request: Partial<RouteRequest> & Pick<RouteRequest, 'inputMint' | 'outputMint'>,
  ) => cases.push([name, { amount: 10n ** 8n, swapMode: 'ExactIn', ...request }])
  add('PJUP>USDC best', { inputMint: PJUP, outputMint: USDC })
  add('PJUP>USDC maxRouteLength=3', { inputMint: PJUP, outputMint: USDC, maxRouteLength: 3 })
  add('PJUP>USDC maxRouteLength=2', { inputMint: PJUP, outputMint: USDC, maxRouteLength: 2 })
  add('PORCA>SOL best', { inputMint: PORCA, outputMint: SOL })
  add('PORCA>SOL maxAccounts=30', { inputMint: PORCA, outputMint: SOL, maxAccounts: 30 })
  add('PJUP>SOL medium only', { inputMint: PJUP, outputMint: SOL, excludeDexes: HEAVY_LABELS })
  add('PBONK>PRAY SimCPMM', { inputMint: PBONK, outputMint: PRAY, dexes: ['SimCPMM'] })
  add('PJUP>USDC onlyDirect', { inputMint: PJUP, outputMint: USDC, maxRouteLength: 1 })
  add('PRAY>USDC onlyDirect', { inputMint: PRAY, outputMint: USDC, maxRouteLength: 1 })
  add('PBONK>USDC onlyDirect', { inputMint: PBONK, outputMint: USDC, maxRouteLength: 1, amount: 10n ** 12n })
  add('PJUP>USDC SimOracle', { inputMint: PJUP, outputMint: USDC, dexes: ['SimOracle'] })
  add('PBONK>PJUP SimCPMM', { inputMint: PBONK, outputMint: PJUP, dexes: ['SimCPMM'], amount: 10n ** 12n })
  add('PJUP>USDC SimSwap', { inputMint: PJUP, outputMint: USDC, dexes: ['SimSwap'] })
  t.comment('| route | hops | labels | accounts | swap only | swap only, shared | with setup+cleanup |')
  t.comment('|---|---|---|---|---|---|---|')
  const sizes: number[] = []
  for (const [name, routeRequest] of cases) {
    const route = findBestRoute(routeRequest)
    const plain = planSwap(route, { user, wrapAndUnwrapSol: true, useSharedAccounts: false })
    const shared = planSwap(route, { user, wrapAndUnwrapSol: true, useSharedAccounts: true })
    const size = v0WireSize(user, plain.routeInstructions)
    const sharedSize = v0WireSize(user, shared.routeInstructions)
    const full = v0WireSize(user, [
      ...plain.setupInstructions,
      ...plain.routeInstructions,
      ...(plain.cleanupInstruction ? [plain.cleanupInstruction] : []),
    ])
    t.ok(sharedSize <= size, `${name}: shared accounts are never larger`)
    t.ok(full > size, `${name}: setup adds bytes`)
    sizes.push(size)
    const labels = route.hops.map((hop) => hop.pool.label).join(' > ')
    t.comment(
      `| ${name} | ${route.hops.length} | ${labels} | ${route.accountCount} | ${size} | ${sharedSize} | ${full} |`,
    )
  }
  t.ok(
    sizes.slice(0, 3).every((size, index) => index === 0 || size < (sizes[index - 1] as number)),
    'fewer hops, fewer bytes',
  )
  t.ok((sizes[0] as number) > SVM_TRANSACTION_SIZE_LIMIT, 'the best route does not fit 1232 bytes')
  t.ok((sizes.at(-1) as number) < 700, 'the conservative direct route leaves room for the deposit')
  t.equal(Math.min(...sizes), sizes.at(-1), 'the conservative direct route is the smallest')
})
