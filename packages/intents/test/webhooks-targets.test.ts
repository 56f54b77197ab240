/**
 * Webhook URLs are checked when they are set, with the rules and the resolver of the delivery:
 * the admin API (`PUT /admin/keys/{id}/webhook`, `POST /admin/keys`) and the `pontis keys` CLI
 * answer every hostile URL (http to public hosts, loopback, private, link-local and metadata
 * addresses in all their spellings, localhost and metadata names) with 400 `INVALID_WEBHOOK_URL`
 * and the reason, and take the operator's development and private-network settings. URLs stored
 * before this check (or that stop resolving later) are dead-lettered at delivery with their
 * reason: localhost names at once, a name that does not exist after a few attempts. Everything
 * runs on the real resolver: every URL here is an IP literal or a name judged without DNS.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { silentLogger } from '@pontis/core'
import { createApiApp, listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient, errorDataOf } from '@pontis/http/testing'
import t from 'tap'
import { INTENTS_DOCUMENT_PATH } from '../src/app.js'
import { runCli } from '../src/keys/cli.js'
import {
  ApiKeyStore,
  createAdminHandlers,
  type WebhookTargetPolicy,
  type WebhookTargetReason,
} from '../src/keys/index.js'
import { openRequestStore, type RequestStore } from '../src/store/index.js'
import { UNRESOLVABLE_MAX_ATTEMPTS, WebhookDispatcher } from '../src/webhooks/index.js'

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef'
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` }
const PUBLIC = '93.184.215.14'
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)

/** The hostile URLs, each with the reason it must be refused for under the default policy. */
const HOSTILE: ReadonlyArray<readonly [string, WebhookTargetReason, string?]> = [
  [`http://${PUBLIC}/hook`, 'scheme'],
  ['http://hooks.acme.example/hook', 'scheme'],
  [`http://${PUBLIC}:8080/hook`, 'scheme'],
  [`https://user:secret@${PUBLIC}/hook`, 'credentials'],
  ['https://127.0.0.1/hook', 'address-denied', 'loopback'],
  ['https://127.1.2.3:8443/hook', 'address-denied', 'loopback'],
  ['https://10.0.0.1/hook', 'address-denied', 'private'],
  ['https://10.255.255.254/hook', 'address-denied', 'private'],
  ['https://172.16.0.1/hook', 'address-denied', 'private'],
  ['https://172.31.255.254/hook', 'address-denied', 'private'],
  ['https://192.168.0.1/hook', 'address-denied', 'private'],
  ['https://192.168.255.254/hook', 'address-denied', 'private'],
  ['https://100.64.0.1/hook', 'address-denied', 'private'],
  ['https://169.254.169.254/latest/meta-data/', 'address-denied', 'metadata'],
  ['https://169.254.170.2/v2/credentials', 'address-denied', 'metadata'],
  ['https://100.100.100.200/latest/meta-data', 'address-denied', 'metadata'],
  ['https://168.63.129.16/machine', 'address-denied', 'metadata'],
  ['https://169.254.1.1/hook', 'address-denied', 'link-local'],
  ['https://0.0.0.0/hook', 'address-denied', 'unspecified'],
  ['https://224.0.0.1/hook', 'address-denied', 'multicast'],
  ['https://255.255.255.255/hook', 'address-denied', 'broadcast'],
  ['https://192.0.2.1/hook', 'address-denied', 'documentation'],
  ['https://240.0.0.1/hook', 'address-denied', 'reserved'],
  ['https://[::1]/hook', 'address-denied', 'loopback'],
  ['https://[::]/hook', 'address-denied', 'unspecified'],
  ['https://[::ffff:127.0.0.1]/hook', 'address-denied', 'loopback'],
  ['https://[::ffff:7f00:1]/hook', 'address-denied', 'loopback'],
  ['https://[::ffff:169.254.169.254]/hook', 'address-denied', 'metadata'],
  ['https://[::ffff:10.0.0.1]/hook', 'address-denied', 'private'],
  ['https://[64:ff9b::127.0.0.1]/hook', 'address-denied', 'loopback'],
  ['https://[2002:7f00:1::]/hook', 'address-denied', 'loopback'],
  ['https://[fe80::1]/hook', 'address-denied', 'link-local'],
  ['https://[fc00::1]/hook', 'address-denied', 'private'],
  ['https://[fd00:ec2::254]/hook', 'address-denied', 'metadata'],
  ['https://[ff02::1]/hook', 'address-denied', 'multicast'],
  ['https://0x7f000001/hook', 'address-denied', 'loopback'],
  ['https://2130706433/hook', 'address-denied', 'loopback'],
  ['https://0177.0.0.1/hook', 'address-denied', 'loopback'],
  ['https://0x7f.0.0.1/hook', 'address-denied', 'loopback'],
  ['https://017700000001/hook', 'address-denied', 'loopback'],
  ['https://127.1/hook', 'address-denied', 'loopback'],
  ['https://localhost/hook', 'address-denied', 'loopback'],
  ['https://LOCALHOST:8443/hook', 'address-denied', 'loopback'],
  ['https://foo.localhost/hook', 'address-denied', 'loopback'],
  ['https://localhost./hook', 'address-denied', 'loopback'],
  ['https://a.b.localhost./hook', 'address-denied', 'loopback'],
  ['https://metadata.google.internal/computeMetadata/v1/', 'address-denied', 'metadata'],
  ['https://metadata/computeMetadata/v1/', 'address-denied', 'metadata'],
  ['https://service.internal/hook', 'address-denied', 'private'],
  ['https://printer.local/hook', 'address-denied', 'private'],
  ['https://router.home.arpa/hook', 'address-denied', 'private'],
  ['https://gone.invalid/hook', 'unresolvable'],
]

interface Admin {
  readonly url: string
  readonly keys: ApiKeyStore
}

const stores: RequestStore[] = []
t.teardown(() => Promise.all(stores.map((store) => store.close())))

/** The admin API over loopback HTTP, its key store under `policy` (as the service builds it). */
async function startAdmin(policy?: WebhookTargetPolicy): Promise<Admin> {
  const store = await openRequestStore()
  stores.push(store)
  const keys = new ApiKeyStore(store.client, policy === undefined ? {} : { webhookPolicy: policy })
  const { koa } = await createApiApp({
    loaded,
    logger: silentLogger,
    handlers: createAdminHandlers({ keys, adminToken: ADMIN_TOKEN }),
  })
  const server = await listen(koa, { port: 0 })
  t.teardown(() => server.close())
  return { url: server.url, keys }
}

type ErrorBody = { errorCode: string; message: string; errorData?: string }

const strict = await startAdmin()
const development = await startAdmin({ allowHttpLoopback: true })
const privateNetworks = await startAdmin({ allowHttpLoopback: false, allowPrivate: true })

t.test(
  'PUT /admin/keys/{id}/webhook refuses every hostile URL with INVALID_WEBHOOK_URL and the reason',
  async (t) => {
    t.ok(HOSTILE.length >= 49, `${HOSTILE.length} hostile URLs`)
    const api = createTestClient(t, strict.url, loaded.document)
    const created = await api.post('/admin/keys', { label: 'partner' }, { headers: auth })
    const keyId = (created.body as { key: { id: string } }).key.id
    for (const [url, reason, category] of HOSTILE) {
      const answer = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
        headers: auth,
        json: { enabled: true, url },
      })
      const body = answer.body as ErrorBody
      t.equal(answer.status, 400, `${url}: 400`)
      t.equal(body.errorCode, 'INVALID_WEBHOOK_URL', `${url}: INVALID_WEBHOOK_URL`)
      t.match(
        errorDataOf(body),
        { keyId, reason, ...(category ? { category } : {}) },
        `${url}: ${body.message}`,
      )
      t.match(body.message, reason, `${url}: the message says why`)
      t.notMatch(body.message, 'secret', `${url}: never echoes URL credentials`)
    }
    t.equal((await strict.keys.get(keyId))?.webhook, null, 'nothing was stored')
    // A paused hostile URL is refused too: enabling it later would go through this check anyway.
    const paused = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
      headers: auth,
      json: { enabled: false, url: 'https://169.254.169.254/' },
    })
    t.equal((paused.body as ErrorBody).errorCode, 'INVALID_WEBHOOK_URL', 'a disabled webhook with a new URL')
  },
)

t.test('POST /admin/keys refuses a hostile webhook and creates no key', async (t) => {
  const api = createTestClient(t, strict.url, loaded.document)
  const before = (await strict.keys.list()).length
  for (const [url, reason] of HOSTILE.filter((_, index) => index % 7 === 0)) {
    const answer = await api.post(
      '/admin/keys',
      { label: 'x', webhook: { enabled: true, url } },
      { headers: auth },
    )
    t.equal(answer.status, 400, url)
    t.match(answer.body, { errorCode: 'INVALID_WEBHOOK_URL' }, url)
    t.match(errorDataOf(answer.body), { reason }, url)
  }
  t.equal((await strict.keys.list()).length, before, 'no key was created')
})

t.test('a public https URL is taken; pausing and re-enabling it works', async (t) => {
  const api = createTestClient(t, strict.url, loaded.document)
  const created = await api.post(
    '/admin/keys',
    { label: 'ok', webhook: { enabled: true, url: `https://${PUBLIC}/hook` } },
    { headers: auth },
  )
  t.equal(created.status, 201)
  const keyId = (created.body as { key: { id: string } }).key.id
  const pause = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
    headers: auth,
    json: { enabled: false },
  })
  t.equal(pause.status, 200)
  t.match(pause.body, { webhook: { enabled: false, url: `https://${PUBLIC}/hook` } })
  const again = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
    headers: auth,
    json: { enabled: true, url: `https://[2606:4700:4700::1111]:8443/hook` },
  })
  t.equal(again.status, 200)
})

t.test('WEBHOOKS_ALLOW_HTTP_LOOPBACK admits http and loopback, nothing else', async (t) => {
  const api = createTestClient(t, development.url, loaded.document)
  const created = await api.post('/admin/keys', { label: 'dev' }, { headers: auth })
  const keyId = (created.body as { key: { id: string } }).key.id
  for (const url of [
    'http://127.0.0.1:8080/hook',
    'http://[::1]:8080/hook',
    'http://localhost:8080/hook',
    'http://foo.localhost/hook',
    'https://localhost./hook',
  ]) {
    const answer = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
      headers: auth,
      json: { enabled: true, url },
    })
    t.equal(answer.status, 200, `${url}: taken in development`)
  }
  for (const [url, reason] of [
    [`http://${PUBLIC}/hook`, 'scheme'],
    ['http://10.0.0.1/hook', 'address-denied'],
    ['https://169.254.169.254/', 'address-denied'],
    ['http://metadata.google.internal/', 'address-denied'],
  ] as const) {
    const answer = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
      headers: auth,
      json: { enabled: true, url },
    })
    t.match(answer.body, { errorCode: 'INVALID_WEBHOOK_URL' }, `${url}: still refused`)
    t.match(errorDataOf(answer.body), { reason }, `${url}: the reason`)
  }
})

t.test('WEBHOOKS_ALLOW_PRIVATE admits private networks, never metadata or loopback', async (t) => {
  const api = createTestClient(t, privateNetworks.url, loaded.document)
  const created = await api.post('/admin/keys', { label: 'private' }, { headers: auth })
  const keyId = (created.body as { key: { id: string } }).key.id
  const taken = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
    headers: auth,
    json: { enabled: true, url: 'https://10.1.2.3/hook' },
  })
  t.equal(taken.status, 200)
  for (const url of ['https://169.254.169.254/', 'https://127.0.0.1/', 'http://10.1.2.3/']) {
    const answer = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
      headers: auth,
      json: { enabled: true, url },
    })
    t.equal((answer.body as ErrorBody).errorCode, 'INVALID_WEBHOOK_URL', url)
  }
})

t.test('pontis keys create --webhook-url and keys webhook --url refuse hostile URLs', async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), 'pontis-targets-'))
  t.teardown(() => rm(scratch, { recursive: true, force: true }))
  const cli = async (argv: string[], env: Record<string, string> = {}) => {
    let stdout = ''
    let stderr = ''
    const code = await runCli(argv, {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      env: { PONTIS_DATA_DIR: join(scratch, 'db'), ...env },
    })
    return { code, stdout, stderr }
  }
  for (const [url, reason] of HOSTILE.filter((_, index) => index % 5 === 0)) {
    const created = await cli(['keys', 'create', '--label', 'x', '--webhook-url', url])
    t.equal(created.code, 1, `create ${url}: exit 1`)
    t.match(created.stderr, `webhook.url refused (${reason})`, `create ${url}: ${created.stderr.trim()}`)
  }
  t.same(JSON.parse((await cli(['keys', 'list', '--json'])).stdout), { keys: [] }, 'no key was created')
  const created = await cli(['keys', 'create', '--label', 'ok', '--json'])
  const keyId = (JSON.parse(created.stdout) as { key: { id: string } }).key.id
  const refused = await cli(['keys', 'webhook', keyId, '--url', 'https://foo.localhost/hook'])
  t.equal(refused.code, 1)
  t.match(
    refused.stderr,
    'webhook.url refused (address-denied): webhook host foo.localhost is a loopback name',
  )
  const metadata = await cli(['keys', 'webhook', keyId, '--url', 'https://[::ffff:169.254.169.254]/'])
  t.match(metadata.stderr, '(metadata)')
  const dev = await cli(['keys', 'webhook', keyId, '--url', 'http://127.0.0.1:9/hook'], {
    WEBHOOKS_ALLOW_HTTP_LOOPBACK: 'true',
  })
  t.equal(dev.code, 0, `development setting: ${dev.stderr}`)
  const badSetting = await cli(['keys', 'webhook', keyId, '--url', `https://${PUBLIC}/`], {
    WEBHOOKS_ALLOW_PRIVATE: 'yes',
  })
  t.equal(badSetting.code, 1)
  t.match(badSetting.stderr, 'WEBHOOKS_ALLOW_PRIVATE must be "true" or "false"')
})

t.test('URLs stored before the check are dead-lettered at delivery with their reason', async (t) => {
  let clock = 1_800_000_000_000
  const now = () => clock
  const store = await openRequestStore({ now })
  stores.push(store)
  const keys = new ApiKeyStore(store.client, { now })
  const dispatcher = new WebhookDispatcher({
    client: store.client,
    keys,
    logger: silentLogger,
    now,
    policy: { allowHttpLoopback: false },
    backoff: { random: () => 0.5 },
    timeoutMs: 5000,
  })
  const cases: ReadonlyArray<readonly [string, number, RegExp]> = [
    ['https://foo.localhost/hook', 1, /foo\.localhost is a loopback name/],
    ['https://localhost./hook', 1, /localhost\.? is a loopback name/],
    ['https://gone.invalid/hook', UNRESOLVABLE_MAX_ATTEMPTS, /gone\.invalid does not exist/],
  ]
  for (const [index, [url, attempts, reason]] of cases.entries()) {
    const { key } = await keys.create({ label: `old ${index}` })
    // As a database of an earlier version holds it: written without the check.
    await store.client.query('UPDATE api_keys SET webhook = $2 WHERE id = $1', [
      key.id,
      JSON.stringify({ enabled: true, url }),
    ])
    const requestId = `0x${(index + 1).toString(16).padStart(64, '0')}`
    await store.insertRequest({
      id: requestId,
      originChainId: 31337,
      destinationChainId: 31338,
      userAddress: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
      recipient: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
      refundTo: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
      originCurrency: '0x0000000000000000000000000000000000000000',
      destinationCurrency: '0x0000000000000000000000000000000000000000',
      tradeType: 'EXACT_INPUT',
      amountIn: 100n,
      amountOut: 90n,
      minimumAmountOut: 90n,
      apiKeyId: key.id,
      referrer: null,
      quote: {},
      expiresAt: clock + 600_000,
    })
    await store.client.query(
      `INSERT INTO webhook_events (event_id, request_id, api_key_id, body, next_attempt_at, created_at)
       VALUES ($1, $2, $3, '{}', $4, $4)`,
      [`evt_${index}`, requestId, key.id, clock],
    )
    const seen: string[] = []
    for (let pass = 0; pass < 20; pass++) {
      await dispatcher.tick()
      const state = await dispatcher.event(`evt_${index}`)
      seen.push(`${state?.state}/${state?.attempts}`)
      if (state?.state !== 'pending') break
      // Past the backoff: the next attempt is due.
      clock = (state?.nextAttemptAt ?? clock) + 1
    }
    const state = await dispatcher.event(`evt_${index}`)
    t.equal(state?.state, 'dead', `${url}: dead-lettered (${seen.join(' ')})`)
    t.equal(state?.attempts, attempts, `${url}: after ${attempts} attempt(s)`)
    t.match(state?.lastError, reason, `${url}: the reason is kept: ${state?.lastError}`)
  }
  t.match(
    (await dispatcher.deadLetters()).map((event) => event.eventId).sort(),
    ['evt_0', 'evt_1', 'evt_2'],
    'all three are listed for the operator',
  )
})

t.test('custom headers the delivery would drop or refuse are refused when they are set', async (t) => {
  const api = createTestClient(t, strict.url, loaded.document)
  const created = await api.post('/admin/keys', { label: 'headers' }, { headers: auth })
  const keyId = (created.body as { key: { id: string } }).key.id
  const url = `https://${PUBLIC}/hook`
  for (const [headers, phrase] of [
    // Every header the delivery sets itself or that controls the connection: it would be ignored.
    [{ 'User-Agent': 'partner/1' }, /set by the service/],
    [{ 'Proxy-Authorization': 'Basic eA==' }, /set by the service/],
    [{ Expect: '100-continue' }, /set by the service/],
    [{ TE: 'trailers' }, /set by the service/],
    // A value Node will not send: every delivery would be refused and dead-lettered.
    [{ 'X-Note': '10 €' }, /single-line value/],
  ] as const) {
    const answer = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
      headers: auth,
      json: { enabled: true, url, headers },
    })
    t.equal(answer.status, 400, `${JSON.stringify(headers)}: 400`)
    t.match(answer.body, { errorCode: 'INVALID_REQUEST', message: phrase }, JSON.stringify(headers))
  }
  const latin = await api.request('PUT', `/admin/keys/${keyId}/webhook`, {
    headers: auth,
    json: { enabled: true, url, headers: { 'X-Name': 'Zoë', Authorization: 'Bearer t\tx' } },
  })
  t.equal(latin.status, 200, 'Latin-1 and tabs are sendable, so they are taken')
})
