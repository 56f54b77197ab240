/**
 * No `QuoteRequest` member is silently ignored (issue 21): every member the document lists (read
 * from openapi/intents.yaml, so a new member without a case fails here) either changes the answer
 * against a baseline that differs only in that member, or is refused with a catalogued code and a
 * message a person can act on. A member whose effect comes after the quote names the test that
 * proves it and is shown to be accepted here. The swap-source members belong to the swap work: their
 * cases assert today's behaviour and say so, for that work to update. Every answer is checked
 * against the document; the chains are the devnet's two anvil chains.
 */
import { readFileSync } from 'node:fs'
import { silentLogger } from '@pontis/core'
import { devnetEnvironment, STABLECOIN_ADDRESS, startDevnet, THIN_TOKEN_ADDRESS, USERS } from '@pontis/devnet'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient, type TestResponse } from '@pontis/http/testing'
import t from 'tap'
import { privateKeyToAccount } from 'viem/accounts'
import {
  createIntentsApp,
  createIntentsRuntime,
  INTENTS_DOCUMENT_PATH,
} from '../../packages/intents/src/index.js'

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const runtime = await createIntentsRuntime({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
  logger: silentLogger,
})
const { koa } = await createIntentsApp({ ...runtime, document: loaded })
const server = await listen(koa, { port: 0 })
t.teardown(async () => {
  await server.close()
  await runtime.store.close()
  await runtime.registry.close()
  await devnet.stop()
})

const NATIVE = '0x0000000000000000000000000000000000000000'
const [alice, bob, carol, dave] = USERS as [
  (typeof USERS)[0],
  (typeof USERS)[0],
  (typeof USERS)[0],
  (typeof USERS)[0],
]
type Body = Record<string, unknown>
type Json = Record<string, unknown> & {
  steps: Array<{
    id: string
    kind: string
    depositAddress?: string
    requestId?: string
    items: Array<{ data: Body }>
  }>
  fees: Record<string, { amount: string }>
  details: Record<string, unknown> & {
    sender: string
    recipient: string
    currencyIn: { amount: string; currency: { chainId: number; address: string } }
    currencyOut: { amount: string; minimumAmount: string; currency: { chainId: number; address: string } }
  }
  feeSponsorship?: { quoted?: { selectedComponents?: string[] } }
  protocol?: { v2: { orderData: Body & { inputs: Array<{ refunds: Array<{ recipient: string }> }> } } }
}

const base: Body = {
  user: alice.address,
  recipient: bob.address,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: NATIVE,
  destinationCurrency: NATIVE,
  amount: '100000000000000000',
  tradeType: 'EXACT_INPUT',
}
const stablecoin: Body = {
  ...base,
  originCurrency: STABLECOIN_ADDRESS,
  destinationCurrency: STABLECOIN_ADDRESS,
  amount: '100000000',
}
const call = { to: carol.address, value: '1000000000000000', data: '0x' }
const withProtocol: Body = { ...base, includeProtocolData: true }
// Input in whole micro-dollars, output in wei: the rounded-up input buys a little more than `amount`.
const exactOutputSwap: Body = {
  ...base,
  originCurrency: STABLECOIN_ADDRESS,
  tradeType: 'EXACT_OUTPUT',
  amount: '10000000000000001',
}

// A same-chain swap the user executes through the devnet's Uniswap v3 deployment.
const sameChainSwap: Body = { ...base, destinationChainId: 31337, destinationCurrency: STABLECOIN_ADDRESS }
// 0.2 ETH into the thin THIN/WETH pool moves its price past the impact limit.
const thinPoolSwap: Body = {
  ...sameChainSwap,
  destinationCurrency: THIN_TOKEN_ADDRESS,
  amount: '200000000000000000',
}
const statusAndCode = (a: TestResponse) => `${a.status} ${(a.body as { errorCode?: string }).errorCode ?? ''}`

/** A request history item of a quoted request (a lookup by id, which anyone may make). */
async function historyOf(
  api: TestClient,
  answer: TestResponse,
): Promise<Body & { data: Body; depositAddress: Body | null }> {
  const requestId = (answer.body as Json).steps.at(-1)?.requestId
  const page = await api.get(`/requests/v3?id=${requestId}`)
  return (page.body as { requests: Array<Body & { data: Body; depositAddress: Body | null }> }).requests[0]!
}

/** The delegation an account signs for itself: its next nonce on the destination is 0. */
const delegated = privateKeyToAccount(`0x${'5a'.repeat(32)}`)
const authorization = await delegated.signAuthorization({
  address: STABLECOIN_ADDRESS,
  chainId: 31338,
  nonce: 0,
})
const delegatedCall = { to: delegated.address, value: '0', data: '0xdeadbeef' }
const signedAuthorization = {
  chainId: authorization.chainId,
  address: authorization.address,
  nonce: authorization.nonce,
  yParity: authorization.yParity as number,
  r: authorization.r,
  s: authorization.s,
}

/**
 * How a member shows. `changes`: the answer to `body` differs from the answer to `baseline` (default
 * {@link base}) in what `observe` reads. `refused`: `body` answers 400 with `code`. `after`: the
 * member acts after the quote; `proof` is the test file that shows it, and `body` is accepted.
 */
type Case =
  | {
      readonly changes: Body
      readonly baseline?: Body
      readonly observe: (answer: TestResponse, api: TestClient) => unknown
    }
  | { readonly refused: Body; readonly code: string }
  | { readonly after: Body; readonly proof: string }

const json = (answer: TestResponse) => answer.body as Json
const relayerGas = (answer: TestResponse) => json(answer).fees.relayerGas?.amount

const cases: Record<string, Case> = {
  user: { changes: { ...base, user: carol.address }, observe: (a) => json(a).details.sender },
  recipient: { changes: { ...base, recipient: carol.address }, observe: (a) => json(a).details.recipient },
  originChainId: {
    changes: { ...base, originChainId: 31338, destinationChainId: 31337 },
    observe: (a) => json(a).details.currencyIn.currency.chainId,
  },
  destinationChainId: {
    changes: { ...base, originChainId: 31338, destinationChainId: 31337 },
    observe: (a) => json(a).details.currencyOut.currency.chainId,
  },
  originCurrency: {
    changes: { ...base, originCurrency: STABLECOIN_ADDRESS, amount: '100000000' },
    observe: (a) => json(a).details.currencyIn.currency.address,
  },
  destinationCurrency: {
    changes: { ...base, destinationCurrency: STABLECOIN_ADDRESS },
    observe: (a) => json(a).details.currencyOut.currency.address,
  },
  amount: {
    changes: { ...base, amount: '200000000000000000' },
    observe: (a) => json(a).details.currencyIn.amount,
  },
  tradeType: {
    changes: { ...base, tradeType: 'EXACT_OUTPUT' },
    observe: (a) => json(a).details.currencyIn.amount,
  },
  txs: {
    changes: { ...withProtocol, txs: [call] },
    baseline: withProtocol,
    observe: (a) => json(a).protocol?.v2.orderData.output,
  },
  txsGasLimit: {
    changes: { ...base, txs: [call], txsGasLimit: 400000 },
    baseline: { ...base, txs: [call] },
    observe: relayerGas,
  },
  // The call is priced against the delegated code: the stablecoin's, which has no such function, so
  // the simulation reverts (without the delegation the account has no code and the call succeeds).
  // The fill carries it as an EIP-7702 transaction: packages/intents/test/authorization-list-e2e.test.ts.
  authorizationList: {
    changes: { ...base, txs: [delegatedCall], authorizationList: [signedAuthorization] },
    baseline: { ...base, txs: [delegatedCall] },
    observe: statusAndCode,
  },
  additionalData: {
    refused: { ...base, additionalData: { userPublicKey: `02${'11'.repeat(32)}` } },
    code: 'UNSUPPORTED_ROUTE',
  },
  referrer: {
    changes: { ...base, referrer: 'walk-test' },
    observe: async (a, api) => (await historyOf(api, a)).data.referrer,
  },
  referrerAddress: {
    changes: { ...base, referrerAddress: dave.address },
    observe: async (a, api) => (await historyOf(api, a)).data.referrerAddress,
  },
  refundTo: {
    changes: { ...withProtocol, refundTo: carol.address },
    baseline: withProtocol,
    observe: (a) => json(a).protocol?.v2.orderData.inputs[0]?.refunds[0]?.recipient,
  },
  recoveryAddress: {
    after: { ...base, useDepositAddress: true, recoveryAddress: dave.address },
    proof: 'packages/intents/test/quote-members-lifecycle-e2e.test.ts',
  },
  refundOnOrigin: { refused: { ...base, refundOnOrigin: false }, code: 'UNSUPPORTED_ROUTE' },
  topupGas: {
    changes: { ...stablecoin, topupGas: true },
    baseline: stablecoin,
    observe: relayerGas,
  },
  topupGasAmount: {
    changes: { ...stablecoin, topupGas: true, topupGasAmount: '5000000' },
    baseline: { ...stablecoin, topupGas: true },
    observe: relayerGas,
  },
  // On an exact-output swap the recipient gets exactly `amount`; the surplus stays with the solver.
  enableTrueExactOutput: {
    changes: { ...exactOutputSwap, enableTrueExactOutput: true },
    baseline: exactOutputSwap,
    observe: (a) => json(a).details.currencyOut.amount,
  },
  explicitDeposit: {
    changes: { ...base, explicitDeposit: false },
    observe: (a) => json(a).steps[0]?.items[0]?.data.to,
  },
  useExternalLiquidity: { refused: { ...base, useExternalLiquidity: true }, code: 'UNSUPPORTED_ROUTE' },
  useFallbacks: { refused: { ...base, useFallbacks: true }, code: 'UNSUPPORTED_ROUTE' },
  usePermit: {
    changes: { ...stablecoin, usePermit: true },
    baseline: stablecoin,
    observe: (a) => json(a).steps.map((step) => step.kind),
  },
  permitExpiry: {
    changes: { ...stablecoin, usePermit: true, permitExpiry: 3600 },
    baseline: { ...stablecoin, usePermit: true },
    // Minutes: both quotes are priced within seconds of each other, the expiries 50 minutes apart.
    observe: (a) =>
      Math.floor(
        Number(
          (json(a).steps[0]?.items[0]?.data.sign as { value?: { validBefore?: string } } | undefined)?.value
            ?.validBefore,
        ) / 600,
      ),
  },
  includeProtocolData: { changes: withProtocol, observe: (a) => json(a).protocol !== undefined },
  useDepositAddress: {
    changes: { ...base, useDepositAddress: true },
    observe: (a) => Boolean(json(a).steps[0]?.depositAddress),
  },
  strict: {
    changes: { ...base, useDepositAddress: true, refundTo: alice.address, strict: true },
    baseline: { ...base, useDepositAddress: true, refundTo: alice.address },
    observe: async (a, api) => (await historyOf(api, a)).depositAddress?.type,
  },
  slippageTolerance: {
    changes: { ...base, slippageTolerance: '300' },
    observe: (a) => json(a).details.currencyOut.minimumAmount,
  },
  latePaymentSlippageTolerance: {
    after: { ...base, latePaymentSlippageTolerance: '100' },
    proof: 'packages/intents/test/quote-members-lifecycle-e2e.test.ts',
  },
  appFees: {
    changes: { ...base, appFees: [{ recipient: dave.address, fee: '100' }] },
    observe: (a) => json(a).fees.app?.amount,
  },
  gasLimitForDepositSpecifiedTxs: {
    refused: { ...base, gasLimitForDepositSpecifiedTxs: 100000 },
    code: 'INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS',
  },
  // Without it a same-chain request is refused.
  forceSolverExecution: {
    changes: { ...base, destinationChainId: 31337, forceSolverExecution: true },
    baseline: { ...base, destinationChainId: 31337 },
    observe: (a) => a.status,
  },
  subsidizeFees: {
    changes: { ...base, subsidizeFees: true },
    observe: (a) => json(a).fees.subsidized?.amount,
  },
  sponsoredFeeComponents: {
    changes: { ...base, subsidizeFees: true, sponsoredFeeComponents: ['execution'] },
    baseline: { ...base, subsidizeFees: true },
    observe: (a) => json(a).feeSponsorship?.quoted?.selectedComponents,
  },
  maxSubsidizationAmount: {
    changes: { ...base, subsidizeFees: true, maxSubsidizationAmount: '1' },
    baseline: { ...base, subsidizeFees: true },
    observe: (a) => json(a).fees.subsidized?.amount,
  },
  subsidizeRent: {
    changes: { ...base, subsidizeFees: true, subsidizeRent: true },
    baseline: { ...base, subsidizeFees: true },
    observe: (a) => json(a).feeSponsorship?.quoted?.selectedComponents,
  },
  // Swap sources filter the swap legs by name, on every family: a filter that leaves none refuses.
  includedSwapSources: {
    refused: { ...sameChainSwap, includedSwapSources: ['no-such-source'] },
    code: 'NO_SWAP_ROUTES_FOUND',
  },
  excludedSwapSources: {
    refused: { ...sameChainSwap, excludedSwapSources: ['uniswap-v3'] },
    code: 'NO_SWAP_ROUTES_FOUND',
  },
  includedOriginSwapSources: {
    refused: { ...sameChainSwap, includedOriginSwapSources: ['no-such-source'] },
    code: 'NO_SWAP_ROUTES_FOUND',
  },
  // Named for an output of another asset than the input (USDC in, ETH out), it asks for a destination
  // swap through those sources instead of the solver's own ETH (destination-swap-e2e.test.ts fills one).
  includedDestinationSwapSources: {
    changes: { ...stablecoin, destinationCurrency: NATIVE, includedDestinationSwapSources: ['uniswap-v3'] },
    baseline: { ...stablecoin, destinationCurrency: NATIVE },
    observe: (a) =>
      (json(a).details.route as { destination?: { router?: string } } | undefined)?.destination?.router,
  },
  originGasOverhead: {
    changes: { ...stablecoin, usePermit: true, originGasOverhead: 500000 },
    baseline: { ...stablecoin, usePermit: true },
    observe: (a) => json(a).fees.relayer?.amount,
  },
  // Options of SVM origins (plugins/svm tests show their effect there); EVM origins refuse them.
  depositFeePayer: { refused: { ...base, depositFeePayer: alice.address }, code: 'UNSUPPORTED_ROUTE' },
  maxRouteLength: { refused: { ...base, maxRouteLength: 3 }, code: 'UNSUPPORTED_ROUTE' },
  useSharedAccounts: { refused: { ...base, useSharedAccounts: true }, code: 'UNSUPPORTED_ROUTE' },
  includeComputeUnitLimit: { refused: { ...base, includeComputeUnitLimit: true }, code: 'UNSUPPORTED_ROUTE' },
  // Lifts the impact limit: the thin-pool swap is refused without it (SWAP_IMPACT_TOO_HIGH).
  overridePriceImpact: {
    changes: { ...thinPoolSwap, overridePriceImpact: true },
    baseline: thinPoolSwap,
    observe: statusAndCode,
  },
  disableOriginSwaps: {
    refused: { ...sameChainSwap, disableOriginSwaps: true },
    code: 'NO_SWAP_ROUTES_FOUND',
  },
  disableSwapProviderPreference: {
    refused: { ...base, disableSwapProviderPreference: true },
    code: 'UNSUPPORTED_ROUTE',
  },
  fixedRate: { changes: { ...base, fixedRate: '0.99' }, observe: (a) => json(a).details.isFixedRate },
  ttl: {
    changes: { ...withProtocol, ttl: 60 },
    baseline: withProtocol,
    observe: (a) => (json(a).protocol?.v2.orderData.output as { deadline: number } | undefined)?.deadline,
  },
}

const schemas = (
  loaded.document as unknown as { components: { schemas: Record<string, { properties: Body }> } }
).components.schemas
const members = Object.keys(schemas.QuoteRequest!.properties)

t.test('every QuoteRequest member of the document has a case', async (t) => {
  t.same(Object.keys(cases).sort(), [...members].sort(), 'one case per member, no more, no less')
})

t.test('each member changes the answer or is refused with a catalogued code', async (t) => {
  const api = createTestClient(t, server.url, loaded.document)
  const catalogue = (schemas.ErrorCode as unknown as { enum: string[] }).enum
  for (const member of members) {
    const test = cases[member]
    if (!test) continue
    if ('changes' in test) {
      const answer = await api.post('/quote/v2', test.changes)
      const baseline = await api.post('/quote/v2', test.baseline ?? base)
      if (answer.status !== 200 && member !== 'authorizationList') {
        t.fail(`${member}: answered ${answer.status} ${JSON.stringify(answer.body)}`)
        continue
      }
      const [seen, seenWithout] = [await test.observe(answer, api), await test.observe(baseline, api)]
      t.not(seen, undefined, `${member}: the answer shows it`)
      t.notSame(
        seen,
        seenWithout,
        `${member}: changes the answer (${JSON.stringify(seenWithout)} → ${JSON.stringify(seen)})`,
      )
    } else if ('refused' in test) {
      const answer = await api.post('/quote/v2', test.refused)
      const body = answer.body as { errorCode?: string; message?: string }
      t.equal(answer.status, 400, `${member}: 400`)
      t.equal(body.errorCode, test.code, `${member}: refused with ${test.code}`)
      t.ok(catalogue.includes(body.errorCode ?? ''), `${member}: the code is catalogued`)
      t.ok((body.message ?? '').includes(member), `${member}: the message names the member: ${body.message}`)
    } else {
      const answer = await api.post('/quote/v2', test.after)
      t.equal(answer.status, 200, `${member}: accepted ${JSON.stringify(answer.body).slice(0, 200)}`)
      t.ok(
        readFileSync(new URL(`../../${test.proof}`, import.meta.url), 'utf8').includes(member),
        `${member}: ${test.proof} shows its effect`,
      )
    }
  }
})
