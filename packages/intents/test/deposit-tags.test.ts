/**
 * Memo-less deposits across instances: two intent services on one PostgreSQL, their clocks frozen
 * at the same millisecond, quote a Hyperliquid withdrawal for the same user. Each adapter hands out
 * the same first nonce; the second service's insert finds the tag taken and quotes again with its
 * next nonce, so both requests stand, each with its own tag (never a 500, never a shared tag).
 */
import type { IntentsApi } from '@pontis/core'
import {
  devnetEnvironment,
  HYPERLIQUID_PERPS_USDC_ID,
  HYPERLIQUID_USERS,
  STABLECOIN_ADDRESS,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import { encodePacked, keccak256 } from 'viem'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './fixtures/postgres.js'

const schema = uniqueSchema('tags')
t.teardown(() => dropSchema(schema))
const devnet = await startDevnet({ chains: [{ chainId: 31337, port: 0 }], hyperliquid: { port: 0 } })
t.teardown(() => devnet.stop())
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const FROZEN = Date.now()
const env = {
  ...devnetEnvironment(devnet),
  DATABASE_URL: TEST_DATABASE_URL,
  DATABASE_SCHEMA: schema,
  RATE_LIMITS: 'off',
}
const start = () => startIntentsService({ env, port: 0, document: loaded, workers: false, now: () => FROZEN })
// One first, so migrations run once.
const first = await start()
t.teardown(() => first.close())
const second = await start()
t.teardown(() => second.close())

const alice = HYPERLIQUID_USERS.alice.address
const withdrawal = {
  user: alice,
  recipient: USERS[1]?.address,
  originChainId: 1337,
  destinationChainId: 31337,
  originCurrency: HYPERLIQUID_PERPS_USDC_ID,
  destinationCurrency: STABLECOIN_ADDRESS,
  amount: '2000000000',
  tradeType: 'EXACT_INPUT',
}
const tagOf = (nonce: number) => keccak256(encodePacked(['address', 'uint64'], [alice, BigInt(nonce)]))

t.test('a nonce another instance took is not served again: the quote moves to the next one', async (t) => {
  const answers = []
  for (const service of [first, second]) {
    const res = await createTestClient(t, service.url, loaded.document).post('/quote/v2', withdrawal)
    t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
    answers.push(res.body as IntentsApi.QuoteResponse)
  }
  const nonces = answers.map(
    (quote) => (quote.steps[0]?.items[0]?.data as { nonce?: number } | undefined)?.nonce,
  )
  t.equal(nonces[0], FROZEN, 'the first service served the frozen millisecond')
  t.equal(nonces[1], FROZEN + 1, 'the second one found that tag taken and served the next nonce')
  for (const [index, quote] of answers.entries()) {
    const requestId = quote.steps[0]?.requestId as string
    const stored = await first.store.findByDepositTag(1337, tagOf(Number(nonces[index])))
    t.equal(stored?.id, requestId, `request ${index + 1} is found by its own tag`)
  }
})
