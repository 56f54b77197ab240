/**
 * The dashboard (`/dashboard`, issue 25) against the stack `npm start` serves, in headless Chromium,
 * driven as its users would: the operator signs in with the admin token `npm start` printed,
 * creates a key with a webhook and a custom header (the secret is shown once, with a copy button),
 * and signs out; the partner signs in with that key, a bridge quoted with it runs on the devnet
 * (the partner client and a viem wallet), the page shows it reach `success` over the status
 * stream, and the delivery of its webhook (the receiver is a real HTTP server on loopback, and
 * checks the custom header and the signature). The receiver then fails: a test event is retried
 * and dead-lettered (`WEBHOOK_MAX_ATTEMPTS=3`, `WEBHOOK_RETRY_BASE_MS=200`), and the partner
 * redelivers it once the receiver answers again.
 *
 * Every answer the page got is checked against openapi/intents.yaml, no request leaves loopback,
 * and no credential appears in a URL, a cookie or browser storage. Screenshots of each step go to
 * .tap/screenshots/dashboard/ (also after a failure); with `PONTIS_UPDATE_SCREENSHOTS=1` a passing
 * run also copies them to docs/screenshots/ (the README's).
 */
import { createHmac } from 'node:crypto'
import { copyFile, mkdir } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { join } from 'node:path'
import { createPontisClient, viemWalletAdapter } from '@pontis/client'
import { type Logger, silentLogger } from '@pontis/core'
import { STABLECOIN_ADDRESS, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { ConformanceChecker } from '@pontis/http/testing'
import { INTENTS_DOCUMENT_PATH } from '@pontis/intents'
import type { Locator, Page } from 'playwright-core'
import t from 'tap'
import { createWalletClient, defineChain, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { startLocalStack } from '../../scripts/local-stack.js'
import { describeExchange, launchChromium, type PageTraffic, recordTraffic } from '../helpers/browser.js'
import { PROCESS_START_BOUND_MS, WAIT_BOUND_MS } from '../helpers/wait.js'
import { stackEnvironment } from '../relay-sdk/fixtures/sdk-stack.js'

// The stack (15–40 s on a busy 2-core machine), Chromium, and a bridge that waits for blocks and the fill.
t.setTimeout(900_000)

const SCREENSHOTS = join('.tap', 'screenshots', 'dashboard')
const README_SCREENSHOTS = join('docs', 'screenshots')
const CUSTOM_HEADER = { name: 'X-Partner-Route', value: 'dashboard-test' }
/** The bridge's deposit block, the indexer, the solver's fill and the stream: generous on a busy machine. */
const BRIDGE_BOUND_MS = 240_000

/** A Playwright wait bounded by `timeoutMs`, failing with what it waited for and the non-2xx answers so far. */
async function until(
  what: string,
  locator: Locator,
  traffic: PageTraffic,
  timeoutMs = WAIT_BOUND_MS,
): Promise<void> {
  try {
    await locator.waitFor({ state: 'visible', timeout: timeoutMs })
  } catch (error) {
    await traffic.settled()
    const refused = traffic.api.filter((exchange) => exchange.status < 200 || exchange.status >= 300)
    throw new Error(
      `timed out after ${timeoutMs / 1000} s waiting for ${what}; non-2xx answers so far: ${
        refused.length === 0 ? 'none' : `\n  ${refused.map(describeExchange).join('\n  ')}`
      }\n(${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
    )
  }
}

/** The page's short form of a hash: `0x1234…cdef`. */
const short = (value: string) => `${value.slice(0, 6)}…${value.slice(-4)}`

/** One webhook request the receiver got. */
interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly answered: number
}

t.test(
  'the dashboard: operator creates a key with a webhook, partner follows a bridge, its delivery, a dead letter and its redelivery',
  async (t) => {
    // What `npm start` prints, captured to find the admin token it made for this run.
    const printed: string[] = []
    const printing: Logger = { ...silentLogger, info: (message) => printed.push(message) }
    const stack = await startLocalStack({
      env: { ...stackEnvironment(), WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_RETRY_BASE_MS: '200' },
      loggers: { pontis: printing, intents: silentLogger, oracle: silentLogger },
    })
    t.teardown(() => stack.stop())
    const devnet = stack.devnet
    if (!devnet) throw new Error('the local stack started no devnet')
    const origin = new URL(stack.intents.url).origin
    const signInLine = printed.find((line) => line.startsWith('dashboard sign-in:'))
    const adminToken = /admin token (\S+)/.exec(signInLine ?? '')?.[1]
    if (!adminToken) throw new Error(`npm start printed no admin token:\n${printed.join('\n')}`)
    t.ok(
      printed.some((line) => line.includes(`${stack.intents.url}/dashboard`)),
      'npm start prints the dashboard URL',
    )

    // The partner's webhook receiver: answers `answer` (200 or 500) and records every request.
    const received: Received[] = []
    let answer = 200
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks).toString(), answered: answer })
        response.writeHead(answer).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
    const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/pontis`

    const browser = await launchChromium()
    t.teardown(() => browser.close())
    const context = await browser.newContext({ viewport: { width: 1180, height: 900 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    const page = await context.newPage()
    const traffic = recordTraffic(page, [origin])
    const pageErrors: string[] = []
    page.on('pageerror', (error) => pageErrors.push(error.message))
    const socketUrls: string[] = []
    page.on('websocket', (socket) => socketUrls.push(socket.url()))

    await mkdir(SCREENSHOTS, { recursive: true })
    const shots: string[] = []
    const screenshot = async (name: string, target: Page = page) => {
      const file = `dashboard-${shots.length + 1}-${name}.png`
      await target.screenshot({ path: join(SCREENSHOTS, file), fullPage: true })
      shots.push(file)
    }

    let secret = ''
    let flowPassed = false
    try {
      // ---- operator: sign in with the printed token, create a key with a webhook and a custom header
      await page.goto(`${origin}/dashboard`)
      const signInButton = page.getByRole('button', { name: 'Sign in' })
      await until('the sign-in form', signInButton, traffic, PROCESS_START_BOUND_MS)
      await screenshot('sign-in')
      await page.getByLabel('the operator (ADMIN_TOKEN)').check()
      await page.getByLabel('Admin token', { exact: true }).fill(adminToken)
      await signInButton.click()
      await until('the operator view', page.getByRole('heading', { name: 'Create an API key' }), traffic)

      await page.getByLabel('Label (who the key is for)').fill('Acme wallet')
      await page.getByLabel('Tier', { exact: true }).selectOption('standard')
      await page.getByLabel('Webhook URL (optional)').fill(hookUrl)
      await page.getByLabel('Custom header name (optional)').fill(CUSTOM_HEADER.name)
      await page.getByLabel('Custom header value').fill(CUSTOM_HEADER.value)
      await page.getByRole('button', { name: 'Create key' }).click()
      const secretField = page.getByLabel('Secret', { exact: true })
      await until('the new key’s secret', secretField, traffic)
      secret = await secretField.inputValue()
      t.match(secret, /^pk_[A-Za-z0-9_-]{64}$/, 'the secret is shown once')
      await page.getByRole('button', { name: 'Copy', exact: true }).click()
      await until('the copy confirmation', page.getByText('Copied to the clipboard.'), traffic)
      t.equal(
        await page.evaluate(() => navigator.clipboard.readText()),
        secret,
        'Copy puts the secret on the clipboard',
      )
      const keyRow = page.locator('#keys tr', { hasText: 'Acme wallet' })
      await until('the key in the list', keyRow, traffic)
      t.match(await keyRow.innerText(), /http:\/\/127\.0\.0\.1:\d+\/pontis/, 'the list shows its webhook')
      t.match(await keyRow.innerText(), /X-Partner-Route/, 'and its custom header’s name')
      t.notMatch(await keyRow.innerText(), secret, 'the list never shows the secret')
      await until('the tiers and limits', page.locator('#limits').getByText('tier elevated'), traffic)
      await screenshot('operator-key-created')
      await page.getByRole('button', { name: 'I have stored it' }).click()
      await page.getByRole('button', { name: 'Sign out' }).click()

      // ---- partner: sign in with the key
      await page.getByLabel('a partner (API key)').check()
      await page.getByLabel('API key', { exact: true }).fill(secret)
      await page.getByRole('button', { name: 'Sign in' }).click()
      const webhookUrl = page.getByLabel('Webhook URL', { exact: true })
      await until('the partner view', webhookUrl, traffic)
      t.equal(await webhookUrl.inputValue(), hookUrl, 'the partner sees its webhook URL')
      t.equal(
        await page.getByLabel('Header 1 name').inputValue(),
        CUSTOM_HEADER.name,
        'and its custom header',
      )
      await until('the status stream', page.getByText('Live: status updates arrive as they happen.'), traffic)
      await until('the empty request list', page.getByText('No requests yet.'), traffic)

      // ---- a bridge quoted with the partner's key, executed by a wallet on the devnet
      const user = USERS[0]
      if (!user) throw new Error('the devnet has no users')
      const rpcUrl = devnet.chains.find((chain) => chain.chainId === 31337)?.rpcUrl ?? ''
      const wallet = createWalletClient({
        account: privateKeyToAccount(user.privateKey),
        chain: defineChain({
          id: 31337,
          name: 'devnet 31337',
          nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
          rpcUrls: { default: { http: [rpcUrl] } },
        }),
        transport: http(rpcUrl),
      })
      const pontis = createPontisClient({ baseUrl: stack.intents.url, apiKey: secret })
      const quote = await pontis.getQuote({
        user: user.address,
        recipient: USERS[1]?.address ?? user.address,
        originChainId: 31337,
        destinationChainId: 31338,
        originCurrency: STABLECOIN_ADDRESS,
        destinationCurrency: STABLECOIN_ADDRESS,
        amount: '25000000',
        tradeType: 'EXACT_INPUT',
      })
      const requestId = quote.steps[0]?.requestId
      if (!requestId) throw new Error('the quote has no request id')
      const execution = pontis.executeQuote(quote, [viemWalletAdapter(wallet)], {
        timeoutMs: BRIDGE_BOUND_MS,
      })
      // Failures surface below; an unobserved rejection would end the process first.
      execution.catch(() => {})

      const card = page.locator(`li[data-request-id="${requestId}"]`)
      await until(`request ${requestId} in the list`, card, traffic)
      await until(
        `request ${requestId} to reach success on the page`,
        page.locator(`li[data-request-id="${requestId}"][data-status="success"]`),
        traffic,
        BRIDGE_BOUND_MS,
      )
      t.equal((await execution).status.status, 'success', 'the bridge succeeded')
      await until('the fill in the timeline', card.getByText(/^Fill /), traffic)
      const cardText = await card.innerText()
      t.match(cardText, /Deposit 0x[0-9a-f]{4}…[0-9a-f]{4} on /, 'the timeline shows the deposit')
      t.match(cardText, /Execution fee/, 'and the fees')
      // A transaction links to its chain's explorer where the chain record names one (the devnet's
      // chains name none: there the hash is shown as text).
      const { chains } = (await (await fetch(`${stack.intents.url}/chains`)).json()) as {
        chains: Array<{ id: number; explorerUrl?: string }>
      }
      type Tx = { txHash: string; chainId: number }
      const { requests } = (await (
        await fetch(`${stack.intents.url}/requests/v3?id=${requestId}`)
      ).json()) as { requests: Array<{ data: { inTxs: Tx[]; outTxs: Tx[] } }> }
      const txs = [...(requests[0]?.data.inTxs ?? []), ...(requests[0]?.data.outTxs ?? [])]
      t.ok(txs.length >= 2, 'the history has the deposit and the fill')
      const expectedLinks = txs.flatMap((tx) => {
        const explorer = chains.find((chain) => chain.id === tx.chainId)?.explorerUrl
        return explorer ? [`${explorer.replace(/\/$/, '')}/tx/${tx.txHash}`] : []
      })
      const links = await card
        .getByRole('link')
        .evaluateAll((anchors) => anchors.map((anchor) => anchor.getAttribute('href')))
      t.same(links, expectedLinks, 'each transaction on a chain with an explorer links to it')
      for (const tx of txs) t.match(cardText, short(tx.txHash), `the timeline names ${tx.txHash}`)
      t.ok(
        socketUrls.some((url) => url.endsWith('/intents/ws')),
        'the page follows the request over the status stream',
      )
      const delivered = page.locator('#deliveries tr[data-state="delivered"]', {
        hasText: requestId.slice(0, 6),
      })
      await until('a delivered webhook of the bridge', delivered.first(), traffic)
      const statusEvents = received.filter((event) => event.body.includes(requestId))
      t.ok(statusEvents.length > 0, 'the receiver got the request’s status events')
      for (const event of statusEvents) {
        t.equal(
          event.headers[CUSTOM_HEADER.name.toLowerCase()],
          CUSTOM_HEADER.value,
          'with the custom header',
        )
        const signed = createHmac('sha256', secret)
          .update(`${String(event.headers['x-signature-timestamp'])}.${event.body}`)
          .digest('hex')
        t.equal(event.headers['x-signature-sha256'], signed, 'signed with the partner’s key')
      }
      await screenshot('partner-bridge-success')

      // ---- the receiver fails: a test event is retried, then dead-lettered; redelivered once it answers
      answer = 500
      await page.getByRole('button', { name: 'Send a test event' }).click()
      await until('the test event to be queued', page.getByText(/^Test event evt_/), traffic)
      const deadRow = page.locator('#partner-dead-letters tr[data-state="dead"]').first()
      await until('the test event in the dead letters', deadRow, traffic)
      const eventId = await deadRow.getAttribute('data-event-id')
      if (!eventId) throw new Error('the dead letter row names no event')
      t.equal(
        received.filter((event) => event.headers['x-event-id'] === eventId && event.answered === 500).length,
        3,
        'the test event was tried 3 times (WEBHOOK_MAX_ATTEMPTS) before it was given up',
      )
      t.match(await deadRow.innerText(), /HTTP 500/, 'the dead letter shows the last response')
      await screenshot('partner-dead-letter')

      answer = 200
      await deadRow.getByRole('button', { name: /Redeliver/ }).click()
      await until(
        'the redelivered event to be delivered',
        page.locator(`#deliveries tr[data-event-id="${eventId}"][data-state="delivered"]`),
        traffic,
      )
      t.ok(
        received.some((event) => event.headers['x-event-id'] === eventId && event.answered === 200),
        'the receiver got the redelivered event, with the same X-Event-Id',
      )
      await until('the dead letters to be empty', page.getByText('No dead letters yet.'), traffic)
      await screenshot('partner-redelivered')

      // ---- phone width: nothing wider than the screen
      await page.setViewportSize({ width: 390, height: 844 })
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
      t.ok(overflow <= 0, `at phone width the page is no wider than the screen (${overflow} px over)`)
      await screenshot('partner-phone')
      flowPassed = true
    } catch (error) {
      await page
        .screenshot({ path: join(SCREENSHOTS, 'dashboard-failure.png'), fullPage: true })
        .catch(() => {})
      t.fail(error instanceof Error ? error.message : String(error))
    } finally {
      await traffic.settled()
      t.comment(`screenshots in ${SCREENSHOTS}: ${shots.join(', ')}`)
    }

    // ---- safety and conformance of everything the page did
    const storage = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }))
    const cookies = await context.cookies()
    for (const credential of [adminToken, secret].filter((value) => value !== '')) {
      t.notOk(
        traffic.api.some((exchange) => exchange.url.includes(credential)),
        'no credential in any URL the page asked for',
      )
      t.notOk(storage.includes(credential), 'no credential in browser storage')
    }
    t.same(cookies, [], 'no cookie at all: nothing for another site to ride on')
    const expectedFailures = traffic.api.filter((exchange) => exchange.status >= 400)
    t.same(expectedFailures.map(describeExchange), [], 'every answer to the page is a success')
    t.same(traffic.apiFailures, [], 'every request of the page got an answer')
    const checker = new ConformanceChecker((await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)).document)
    const nonConforming = traffic.api.flatMap((exchange) =>
      checker.check(exchange).problems.map((problem) => `${exchange.method} ${exchange.url}: ${problem}`),
    )
    t.same(nonConforming, [], 'every answer to the page conforms to openapi/intents.yaml')
    t.same(traffic.offsite, [], 'nothing is loaded from outside the deployment (no CDN)')
    t.same(pageErrors, [], 'the page threw no uncaught error')

    if (flowPassed && process.env.PONTIS_UPDATE_SCREENSHOTS === '1') {
      await mkdir(README_SCREENSHOTS, { recursive: true })
      for (const file of shots) await copyFile(join(SCREENSHOTS, file), join(README_SCREENSHOTS, file))
    }
  },
)
