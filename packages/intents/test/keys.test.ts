/**
 * The API key store, one suite run on both backends: embedded PGlite in memory, and PostgreSQL in a
 * schema of its own (dropped at the end) on `TEST_DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/test. PostgreSQL being unreachable fails the suite.
 */
import crypto from 'node:crypto'
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import {
  API_KEY_HEADER,
  ApiKeyError,
  ApiKeyStore,
  checkWebhookConfig,
  DEFAULT_KEY_CACHE_TTL_MS,
  type WebhookConfig,
} from '../src/keys/index.js'
import { createPgClient, createPgliteClient, RequestStore, type SqlClient } from '../src/store/index.js'
import { openTestSchema, TEST_DATABASE_URL } from './fixtures/postgres.js'

const T0 = 1_767_225_600_000

function manualClock(start = T0) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

interface Database {
  /** A client on this database: a new pool for PostgreSQL, the one embedded database for PGlite. */
  connect(): Promise<SqlClient>
}

interface Backend {
  readonly name: string
  create(t: { teardown(fn: () => unknown): void }): Promise<Database>
}

const pgliteMemory: Backend = {
  name: 'pglite-memory',
  async create(t) {
    const client = await createPgliteClient()
    t.teardown(() => client.close())
    await new RequestStore(client).migrate()
    return { connect: async () => client }
  },
}

const postgres: Backend = {
  name: 'postgres',
  async create(t) {
    const database = await openTestSchema(t, 'keys')
    const connect = async () =>
      database.own(await createPgClient({ databaseUrl: TEST_DATABASE_URL, schema: database.schema }))
    await new RequestStore(await connect()).migrate()
    return { connect }
  },
}

const WEBHOOK: WebhookConfig = {
  enabled: true,
  // A public address: the store checks where a webhook URL points, and names would need public DNS.
  url: 'https://93.184.215.14/pontis',
  headers: { Authorization: 'Bearer receiver-token' },
}

for (const backend of [pgliteMemory, postgres]) {
  t.test(backend.name, async (t) => {
    let db: Database
    try {
      db = await backend.create(t)
    } catch (error) {
      t.fail((error as Error).message)
      return
    }
    const clock = manualClock()
    const client = await db.connect()
    const keys = new ApiKeyStore(client, { now: clock.now })

    t.test('create: a secret shown once, only its hash stored', async (t) => {
      const { key, secret } = await keys.create({ label: '  Acme wallet ', webhook: WEBHOOK })
      t.match(secret, /^pk_[A-Za-z0-9_-]{64}$/, 'pk_ + 48 random bytes in base64url')
      t.match(key, {
        id: /^key_[0-9a-f]{24}$/,
        label: 'Acme wallet',
        tier: 'standard',
        keyPrefix: secret.slice(0, 8),
        webhook: WEBHOOK,
        createdAt: clock.now(),
        rotatedAt: null,
        revokedAt: null,
      })
      t.notOk('secret' in key, 'the record has no secret')
      const { rows } = await client.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [
        key.id,
      ])
      t.equal(
        rows[0]?.key_hash,
        crypto.createHash('sha256').update(secret).digest('hex'),
        'sha256 hex stored',
      )
      t.notOk(JSON.stringify(rows).includes(secret), 'the secret is nowhere in the row')
      t.notOk(JSON.stringify(rows).includes(secret.slice(8)), 'not even its unseen part')
      t.same(await keys.get(key.id), key)
      t.same(await keys.authenticate(secret), key)
    })

    t.test('create: tiers and invalid input', async (t) => {
      const elevated = await keys.create({ label: 'fast', tier: 'elevated' })
      t.equal(elevated.key.tier, 'elevated')
      t.equal(elevated.key.webhook, null)
      await t.rejects(keys.create({ label: '' }), { name: 'ApiKeyError', reason: 'invalid' })
      await t.rejects(keys.create({ label: 'x'.repeat(101) }), ApiKeyError)
      await t.rejects(keys.create({ label: 'x', tier: 'gold' as 'public' }), /tier must be one of/)
      await t.rejects(
        keys.create({ label: 'x', webhook: { enabled: true, url: 'not a url' } }),
        /not an absolute URL/,
      )
    })

    t.test('two keys never share a secret or an id', async (t) => {
      const a = await keys.create({ label: 'a' })
      const b = await keys.create({ label: 'b' })
      t.not(a.secret, b.secret)
      t.not(a.key.id, b.key.id)
      t.equal((await keys.authenticate(a.secret))?.id, a.key.id)
      t.equal((await keys.authenticate(b.secret))?.id, b.key.id)
    })

    t.test('authenticate: unknown, malformed and near-miss secrets', async (t) => {
      const { secret } = await keys.create({ label: 'near' })
      const flipped = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`
      t.equal(await keys.authenticate(flipped), undefined, 'one character off')
      t.equal(
        await keys.authenticate(`pk_${crypto.randomBytes(48).toString('base64url')}`),
        undefined,
        'unknown',
      )
      t.equal(await keys.authenticate(''), undefined, 'empty')
      t.equal(await keys.authenticate(secret.slice(0, 40)), undefined, 'truncated')
      t.equal(await keys.authenticate(`${secret}x`), undefined, 'extended')
      t.equal(await keys.authenticate(`sk_${secret.slice(3)}`), undefined, 'wrong prefix')
      t.equal(await keys.authenticate('x'.repeat(100_000)), undefined, 'huge')
    })

    t.test('authenticate compares hashes with crypto.timingSafeEqual', async (t) => {
      const fresh = new ApiKeyStore(client, { now: clock.now })
      const { secret } = await fresh.create({ label: 'timing' })
      const calls = t.capture(crypto, 'timingSafeEqual', crypto.timingSafeEqual)
      t.ok(await fresh.authenticate(secret))
      const args = calls().map((call) => call.args as [Buffer, Buffer])
      t.equal(args.length, 1, 'one constant-time comparison for a database lookup')
      t.same(
        args[0]?.map((buffer) => buffer.toString('hex')),
        [
          crypto.createHash('sha256').update(secret).digest('hex'),
          crypto.createHash('sha256').update(secret).digest('hex'),
        ],
        'stored hash against presented hash, never the secret itself',
      )
    })

    t.test('rotate: new secret works, the old one is refused at once', async (t) => {
      const { key, secret: old } = await keys.create({ label: 'rotating', webhook: WEBHOOK })
      t.ok(await keys.authenticate(old), 'old secret cached as valid')
      clock.advance(1000)
      const rotated = await keys.rotate(key.id)
      t.not(rotated.secret, old)
      t.match(rotated.key, {
        id: key.id,
        label: 'rotating',
        tier: 'standard',
        webhook: WEBHOOK,
        keyPrefix: rotated.secret.slice(0, 8),
        rotatedAt: clock.now(),
        revokedAt: null,
      })
      t.equal(await keys.authenticate(old), undefined, 'the cached old secret is refused immediately')
      t.equal((await keys.authenticate(rotated.secret))?.id, key.id)
      await t.rejects(keys.rotate('key_000000000000000000000000'), {
        name: 'ApiKeyError',
        reason: 'not_found',
      })
      await t.rejects(keys.rotate('nonsense'), { name: 'ApiKeyError', reason: 'not_found' })
    })

    t.test('revoke: refused at once, idempotent, cannot be rotated or changed', async (t) => {
      const { key, secret } = await keys.create({ label: 'revoking' })
      t.ok(await keys.authenticate(secret))
      clock.advance(1000)
      const revoked = await keys.revoke(key.id)
      t.equal(revoked?.revokedAt, clock.now())
      t.equal(await keys.authenticate(secret), undefined, 'the cached secret is refused immediately')
      clock.advance(1000)
      t.equal(
        (await keys.revoke(key.id))?.revokedAt,
        revoked?.revokedAt,
        'revoking again keeps the first time',
      )
      await t.rejects(keys.rotate(key.id), { name: 'ApiKeyError', reason: 'revoked' })
      await t.rejects(keys.setWebhook(key.id, WEBHOOK), { name: 'ApiKeyError', reason: 'revoked' })
      t.equal(await keys.revoke('key_000000000000000000000000'), undefined)
      t.equal((await keys.get(key.id))?.revokedAt, revoked?.revokedAt, 'revoked keys stay listed')
      t.ok((await keys.list()).some((listed) => listed.id === key.id))
    })

    t.test('setWebhook: replace, pause, remove', async (t) => {
      const { key } = await keys.create({ label: 'hooks' })
      const set = await keys.setWebhook(key.id, { enabled: true, url: 'https://[2606:4700:4700::1111]/x' })
      t.same(set.webhook, { enabled: true, url: 'https://[2606:4700:4700::1111]/x' })
      const replaced = await keys.setWebhook(key.id, { ...WEBHOOK, enabled: false })
      t.same(replaced.webhook, { ...WEBHOOK, enabled: false })
      t.same((await keys.get(key.id))?.webhook, { ...WEBHOOK, enabled: false })
      t.equal((await keys.setWebhook(key.id, null)).webhook, null)
      await t.rejects(keys.setWebhook('key_000000000000000000000000', WEBHOOK), {
        name: 'ApiKeyError',
        reason: 'not_found',
      })
    })

    t.test('webhook target: the signing key is HMAC-equivalent to the secret', async (t) => {
      const { key, secret } = await keys.create({ label: 'signing', webhook: WEBHOOK })
      const target = await keys.webhookTarget(key.id)
      t.same(target?.webhook, WEBHOOK)
      const body = '{"event":"request.status.updated"}'
      const bySecret = crypto.createHmac('sha256', secret).update(`1767225600123.${body}`).digest('hex')
      const byStored = crypto
        .createHmac('sha256', target!.signingKey)
        .update(`1767225600123.${body}`)
        .digest('hex')
      t.equal(byStored, bySecret, 'receivers verify with the secret, the service signs with its hash')
      await keys.setWebhook(key.id, { ...WEBHOOK, enabled: false })
      t.equal(await keys.webhookTarget(key.id), undefined, 'a paused webhook has no target')
      const rotated = await keys.rotate(key.id)
      await keys.setWebhook(key.id, WEBHOOK)
      const after = await keys.webhookTarget(key.id)
      t.equal(
        crypto.createHmac('sha256', after!.signingKey).update('m').digest('hex'),
        crypto.createHmac('sha256', rotated.secret).update('m').digest('hex'),
        'after rotation webhooks are signed with the new secret',
      )
      await keys.revoke(key.id)
      t.equal(await keys.webhookTarget(key.id), undefined, 'a revoked key has no target')
    })

    t.test('authenticateHeader: anonymous, valid, unknown', async (t) => {
      const { key, secret } = await keys.create({ label: 'header' })
      t.equal(await keys.authenticateHeader({}), undefined, 'no header: anonymous')
      t.equal(await keys.authenticateHeader({ [API_KEY_HEADER]: '' }), undefined, 'empty header: anonymous')
      t.equal((await keys.authenticateHeader({ [API_KEY_HEADER]: secret }))?.id, key.id)
      const wrong = `pk_${crypto.randomBytes(48).toString('base64url')}`
      const error = await keys
        .authenticateHeader({ [API_KEY_HEADER]: wrong })
        .catch((caught: unknown) => caught)
      t.match(error, { name: 'PontisError', code: 'UNAUTHORIZED' })
      t.notOk((error as Error).message.includes(wrong.slice(3, 12)), 'the message does not echo the key')
    })

    t.test('cache: another process sees a rotation within the TTL, or at once with watch()', async (t) => {
      const otherClient = await db.connect()
      const other = new ApiKeyStore(otherClient, { now: clock.now })
      const { key, secret } = await keys.create({ label: 'shared' })
      t.equal((await other.authenticate(secret))?.id, key.id, 'the other process caches it')
      await keys.revoke(key.id)
      t.ok(await other.authenticate(secret), 'without a listener the other process may still accept it...')
      clock.advance(DEFAULT_KEY_CACHE_TTL_MS)
      t.equal(await other.authenticate(secret), undefined, '...for at most the cache TTL')

      const unwatch = await other.watch()
      t.teardown(unwatch)
      const second = await keys.create({ label: 'watched' })
      t.ok(await other.authenticate(second.secret))
      await keys.rotate(second.key.id)
      // The NOTIFY arrives asynchronously; the clock stands still, so only it can evict the key.
      await waitFor('the rotation NOTIFY to evict the old secret', () => other.authenticate(second.secret), {
        until: (key) => key === undefined,
        describe: (key) => (key ? `the old secret still authenticates key ${key.id}` : key),
      })
      t.equal(
        await other.authenticate(second.secret),
        undefined,
        'with watch() the NOTIFY evicts it without waiting for the TTL',
      )
    })

    t.test('list: every key, oldest first', async (t) => {
      const listed = await keys.list()
      t.ok(listed.length >= 10)
      const times = listed.map((key) => key.createdAt)
      t.same(
        times,
        [...times].sort((a, b) => a - b),
      )
      t.notOk(JSON.stringify(listed).includes('key_hash'), 'no hashes in records')
    })
  })
}

t.test('webhook configuration checks', async (t) => {
  t.same(checkWebhookConfig({ enabled: true, url: 'https://a.example' }), {
    enabled: true,
    url: 'https://a.example/',
  })
  t.same(
    checkWebhookConfig({ enabled: false, url: 'http://127.0.0.1:8080/hook' }).url,
    'http://127.0.0.1:8080/hook',
  )
  const bad: Array<[unknown, RegExp]> = [
    [{ enabled: 'yes', url: 'https://a.example' }, /enabled must be a boolean/],
    [{ enabled: true, url: 'a.example/hook' }, /not an absolute URL/],
    [{ enabled: true, url: `https://a.example/${'x'.repeat(2100)}` }, /at most 2048/],
    [{ enabled: true, url: 'https://a.example', headers: { 'Bad Name': 'x' } }, /not valid/],
    [
      { enabled: true, url: 'https://a.example', headers: { 'X-Signature-SHA256': 'x' } },
      /set by the service/,
    ],
    [{ enabled: true, url: 'https://a.example', headers: { 'X-A': 'line\r\nInjected: 1' } }, /single-line/],
    [{ enabled: true, url: 'https://a.example', headers: { 'x-a': '1', 'X-A': '2' } }, /given twice/],
    [
      {
        enabled: true,
        url: 'https://a.example',
        headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-${i}`, 'v'])),
      },
      /at most 20/,
    ],
  ]
  for (const [config, message] of bad) {
    t.throws(() => checkWebhookConfig(config as WebhookConfig), message, JSON.stringify(config).slice(0, 80))
  }
})

t.test(
  'the store runs the target check on a new URL: scheme and credentials are its to refuse',
  async (t) => {
    const client = await createPgliteClient()
    t.teardown(() => client.close())
    await new RequestStore(client).migrate()
    const keys = new ApiKeyStore(client)
    for (const [url, reason] of [
      ['ftp://93.184.215.14/', 'scheme'],
      ['http://93.184.215.14/', 'scheme'],
      ['https://user:pw@93.184.215.14/', 'credentials'],
    ] as const) {
      const error = await keys
        .create({ label: 'x', webhook: { enabled: true, url } })
        .catch((e: unknown) => e)
      t.match(error, { name: 'ApiKeyError', reason: 'webhook_target', target: { reason } }, url)
      t.notMatch((error as Error).message, 'pw@', `${url}: credentials are not echoed`)
    }
  },
)
