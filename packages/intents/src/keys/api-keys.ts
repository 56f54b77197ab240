/**
 * Partner API keys on the service's database (table `api_keys`, migration 003).
 *
 * - A secret is `pk_` + 48 random bytes in base64url (67 characters). It is returned once, by
 *   {@link ApiKeyStore.create} and {@link ApiKeyStore.rotate}, and never stored, logged or cached:
 *   the table keeps its SHA-256 (hex) and its first 8 characters for display.
 * - {@link ApiKeyStore.authenticate} hashes the presented secret, looks the row up by that hash
 *   (which tells an attacker nothing about any stored secret) and compares the stored hash with
 *   `crypto.timingSafeEqual`, so no step's timing depends on how much of a real secret was guessed.
 * - Successful lookups are cached (keyed by hash, never by secret) for {@link DEFAULT_KEY_CACHE_TTL_MS}.
 *   `rotate` and `revoke` evict at once in this process and NOTIFY the others
 *   ({@link ApiKeyStore.watch}); without a listener, or while its connection is down, another
 *   process may accept an old secret for at most the cache TTL.
 * - Webhook signatures (HMAC-SHA256 keyed with the API key, per the spec) need no stored secret:
 *   HMAC hashes any key longer than SHA-256's 64-byte block first, so for these 67-character
 *   secrets HMAC(secret, m) = HMAC(sha256(secret), m). {@link ApiKeyStore.webhookTarget} hands the
 *   delivery side that digest as `signingKey`.
 */
import crypto from 'node:crypto'
import { type IncomingHttpHeaders, validateHeaderValue } from 'node:http'
import { PontisError } from '@pontis/core'
import { LRUCache } from 'lru-cache'
import type { SqlClient } from '../store/index.js'
import {
  type AddressCategory,
  checkTarget,
  PROTECTED_HEADERS,
  type WebhookLookup,
  WebhookTargetError,
  type WebhookTargetPolicy,
  type WebhookTargetReason,
} from './webhook-target.js'

/** Rate-limit tiers a key can have. `public` gets the anonymous limits (but counted per key). */
export const API_KEY_TIERS = ['public', 'standard', 'elevated'] as const
export type ApiKeyTier = (typeof API_KEY_TIERS)[number]

/** The tier of a key created without one. */
export const DEFAULT_API_KEY_TIER: ApiKeyTier = 'standard'

/** How long a successful lookup is trusted without asking the database: 5 seconds. */
export const DEFAULT_KEY_CACHE_TTL_MS = 5_000

/** The NOTIFY channel `rotate` and `revoke` announce a key id on. */
export const API_KEYS_CHANNEL = 'pontis_api_keys'

/** The request header carrying a partner's API key. */
export const API_KEY_HEADER = 'x-api-key'

/**
 * One key's webhook: where `request.status.updated` events go. The URL passes the delivery's
 * target rules ({@link checkTarget}) when it is set, and again at every delivery.
 */
export interface WebhookConfig {
  readonly enabled: boolean
  /** `https://` (`http://` only to loopback, with the operator's development flag). */
  readonly url: string
  /** Extra headers sent on every webhook request. */
  readonly headers?: Readonly<Record<string, string>>
}

/** A key as callers see it: everything but the secret and its hash. Timestamps are Unix ms. */
export interface ApiKeyRecord {
  readonly id: string
  readonly label: string
  readonly tier: ApiKeyTier
  /** First 8 characters of the current secret, to recognise it (`pk_Ab3x9`). */
  readonly keyPrefix: string
  readonly webhook: WebhookConfig | null
  readonly createdAt: number
  readonly rotatedAt: number | null
  readonly revokedAt: number | null
}

/** A key with its secret: the only time the secret is seen. */
export interface ApiKeyWithSecret {
  readonly key: ApiKeyRecord
  readonly secret: string
}

/** What {@link ApiKeyStore.create} takes. */
export interface NewApiKey {
  readonly label: string
  readonly tier?: ApiKeyTier
  readonly webhook?: WebhookConfig | null
}

/** Where and how to deliver a key's webhooks. */
export interface WebhookTarget {
  readonly keyId: string
  readonly webhook: WebhookConfig
  /** HMAC-SHA256 key equivalent to the API key itself (see the module comment). */
  readonly signingKey: Buffer
}

/** Why a key operation was refused. */
export type ApiKeyErrorReason = 'not_found' | 'revoked' | 'invalid' | 'webhook_target'

/** Why a webhook URL was refused when it was set: the target check's reason and address category. */
export interface WebhookTargetRefusal {
  readonly reason: WebhookTargetReason
  readonly category?: AddressCategory
}

/** Thrown by the store for an unknown or revoked key, or invalid input (label, tier, webhook). */
export class ApiKeyError extends Error {
  override readonly name = 'ApiKeyError'
  constructor(
    readonly reason: ApiKeyErrorReason,
    message: string,
    /** For `webhook_target`: what the target check found. */
    readonly target?: WebhookTargetRefusal,
  ) {
    super(message)
  }
}

export interface ApiKeyStoreOptions {
  /** Clock, Unix milliseconds. Default `Date.now`. */
  readonly now?: () => number
  /** Lifetime of a cached successful lookup. Default {@link DEFAULT_KEY_CACHE_TTL_MS}; 0 disables the cache. */
  readonly cacheTtlMs?: number
  /** Most lookups kept. Default 10000. */
  readonly cacheMax?: number
  /**
   * Where webhooks may go: the operator's policy, the same the delivery uses. Default: `https://`
   * to public addresses only.
   */
  readonly webhookPolicy?: WebhookTargetPolicy
  /** Resolver of the target check; defaults to `dns.promises.lookup`. */
  readonly webhookLookup?: WebhookLookup
}

const KEY_ID = /^key_[0-9a-f]{24}$/
const SECRET = /^pk_[A-Za-z0-9_-]{64}$/
const SECRET_BYTES = 48
const PREFIX_LENGTH = 8
const MAX_LABEL = 100
const MAX_URL = 2048
/** How long setting a webhook waits for its host to resolve (the delivery has its own budget). */
const TARGET_CHECK_TIMEOUT_MS = 10_000
const MAX_HEADERS = 20
const MAX_HEADER_VALUE = 1024
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const LABEL_FORBIDDEN = /[\u0000-\u001f\u007f]/

/**
 * True when Node will send `value` as a header value: tab, visible ASCII and Latin-1, no control
 * characters (the delivery refuses, and dead-letters, what it will not send).
 */
function sendableHeaderValue(name: string, value: string): boolean {
  try {
    validateHeaderValue(name, value)
    return true
  } catch {
    return false
  }
}

interface ApiKeyRow {
  id: string
  label: string
  tier: ApiKeyTier
  key_hash: string
  key_prefix: string
  webhook: WebhookConfig | null
  created_at: number
  rotated_at: number | null
  revoked_at: number | null
}

const COLUMNS = 'id, label, tier, key_hash, key_prefix, webhook, created_at, rotated_at, revoked_at'

function fromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    label: row.label,
    tier: row.tier,
    keyPrefix: row.key_prefix,
    webhook: row.webhook,
    createdAt: row.created_at,
    rotatedAt: row.rotated_at,
    revokedAt: row.revoked_at,
  }
}

function sha256(text: string): Buffer {
  return crypto.createHash('sha256').update(text, 'utf8').digest()
}

function newSecret(): { secret: string; hash: string; prefix: string } {
  const secret = `pk_${crypto.randomBytes(SECRET_BYTES).toString('base64url')}`
  return { secret, hash: sha256(secret).toString('hex'), prefix: secret.slice(0, PREFIX_LENGTH) }
}

function newKeyId(): string {
  return `key_${crypto.randomBytes(12).toString('hex')}`
}

/** True when `id` has the form of a key id (`key_` + 24 hex digits). */
export function isApiKeyId(id: string): boolean {
  return KEY_ID.test(id)
}

/** The tier, or an {@link ApiKeyError} naming the allowed ones. */
export function checkTier(tier: string): ApiKeyTier {
  if (!(API_KEY_TIERS as readonly string[]).includes(tier)) {
    throw new ApiKeyError('invalid', `tier must be one of ${API_KEY_TIERS.join(', ')}, got "${tier}"`)
  }
  return tier as ApiKeyTier
}

/** The trimmed label, or an {@link ApiKeyError}. */
export function checkLabel(label: string): string {
  const trimmed = label.trim()
  if (trimmed.length === 0 || trimmed.length > MAX_LABEL || LABEL_FORBIDDEN.test(trimmed)) {
    throw new ApiKeyError('invalid', `label must be 1 to ${MAX_LABEL} printable characters`)
  }
  return trimmed
}

/**
 * Checks a webhook configuration's shape and returns the normalised copy that is stored: `url` an
 * absolute URL of at most 2048 characters, `headers` at most 20 valid header names (not the ones
 * the delivery side sets) with single-line values. The URL's scheme, credentials and where it
 * points are the target check's decision ({@link checkTarget}, one rule for setting and
 * delivering), which {@link ApiKeyStore} runs with the operator's policy.
 */
export function checkWebhookConfig(webhook: WebhookConfig): WebhookConfig {
  if (typeof webhook !== 'object' || webhook === null)
    throw new ApiKeyError('invalid', 'webhook must be an object')
  if (typeof webhook.enabled !== 'boolean')
    throw new ApiKeyError('invalid', 'webhook.enabled must be a boolean')
  if (typeof webhook.url !== 'string' || webhook.url.length > MAX_URL) {
    throw new ApiKeyError('invalid', `webhook.url must be a URL of at most ${MAX_URL} characters`)
  }
  let url: URL
  try {
    url = new URL(webhook.url)
  } catch {
    throw new ApiKeyError('invalid', 'webhook.url is not an absolute URL')
  }
  const normalised: { enabled: boolean; url: string; headers?: Record<string, string> } = {
    enabled: webhook.enabled,
    url: url.toString(),
  }
  if (webhook.headers !== undefined) {
    if (typeof webhook.headers !== 'object' || webhook.headers === null || Array.isArray(webhook.headers)) {
      throw new ApiKeyError('invalid', 'webhook.headers must be an object of header names to values')
    }
    const entries = Object.entries(webhook.headers)
    if (entries.length > MAX_HEADERS) {
      throw new ApiKeyError('invalid', `webhook.headers may hold at most ${MAX_HEADERS} headers`)
    }
    const headers: Record<string, string> = {}
    const seen = new Set<string>()
    for (const [name, value] of entries) {
      const lower = name.toLowerCase()
      if (!HEADER_NAME.test(name))
        throw new ApiKeyError('invalid', `webhook header name "${name}" is not valid`)
      // The delivery's own list: what it sets itself or what controls the connection is never sent.
      if (PROTECTED_HEADERS.has(lower)) {
        throw new ApiKeyError(
          'invalid',
          `webhook header ${name} is set by the service and cannot be configured`,
        )
      }
      if (seen.has(lower)) throw new ApiKeyError('invalid', `webhook header ${name} is given twice`)
      seen.add(lower)
      if (typeof value !== 'string' || value.length > MAX_HEADER_VALUE || !sendableHeaderValue(name, value)) {
        throw new ApiKeyError(
          'invalid',
          `webhook header ${name} must be a single-line value of at most ${MAX_HEADER_VALUE} characters (visible ASCII, Latin-1 letters, spaces and tabs)`,
        )
      }
      headers[name] = value
    }
    normalised.headers = headers
  }
  return normalised
}

interface CachedKey {
  readonly record: ApiKeyRecord
  readonly expiresAt: number
}

/** API keys on the service's SQL client (PGlite or PostgreSQL); the migrations must have run. */
export class ApiKeyStore {
  readonly client: SqlClient
  readonly #now: () => number
  readonly #ttlMs: number
  /** Successful lookups by secret hash. */
  readonly #cache: LRUCache<string, CachedKey>
  readonly #webhookPolicy: WebhookTargetPolicy
  readonly #webhookLookup: WebhookLookup | undefined

  constructor(client: SqlClient, options: ApiKeyStoreOptions = {}) {
    this.client = client
    this.#now = options.now ?? Date.now
    this.#ttlMs = Math.max(0, options.cacheTtlMs ?? DEFAULT_KEY_CACHE_TTL_MS)
    this.#cache = new LRUCache({ max: Math.max(1, options.cacheMax ?? 10_000) })
    this.#webhookPolicy = options.webhookPolicy ?? { allowHttpLoopback: false, allowPrivate: false }
    this.#webhookLookup = options.webhookLookup
  }

  /**
   * The delivery's target check, when the URL is set: an operator hears at once that a URL can
   * never be delivered to, instead of finding its events dead-lettered later.
   * @throws ApiKeyError `webhook_target` with the check's reason.
   */
  async #checkTarget(url: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    try {
      // A resolver that hangs must not hang the admin call: past the bound it counts as unanswered.
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new WebhookTargetError('dns-failure', 'the webhook host did not resolve in time')),
          TARGET_CHECK_TIMEOUT_MS,
        )
      })
      await Promise.race([checkTarget(url, this.#webhookPolicy, this.#webhookLookup), timedOut])
    } catch (error) {
      if (!(error instanceof WebhookTargetError)) throw error
      throw new ApiKeyError('webhook_target', `webhook.url refused (${error.reason}): ${error.message}`, {
        reason: error.reason,
        ...(error.category === undefined ? {} : { category: error.category }),
      })
    } finally {
      clearTimeout(timer)
    }
  }

  /** Creates a key; the secret in the answer is never retrievable again. */
  async create(input: NewApiKey): Promise<ApiKeyWithSecret> {
    const label = checkLabel(input.label)
    const tier = checkTier(input.tier ?? DEFAULT_API_KEY_TIER)
    const webhook = input.webhook == null ? null : checkWebhookConfig(input.webhook)
    if (webhook !== null) await this.#checkTarget(webhook.url)
    const { secret, hash, prefix } = newSecret()
    const { rows } = await this.client.query<ApiKeyRow>(
      `INSERT INTO api_keys (id, label, tier, key_hash, key_prefix, webhook, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [newKeyId(), label, tier, hash, prefix, webhook === null ? null : JSON.stringify(webhook), this.#now()],
    )
    return { key: fromRow(rows[0]!), secret }
  }

  /** Every key, revoked ones included, oldest first. */
  async list(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.client.query<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`,
    )
    return rows.map(fromRow)
  }

  /** The key with this id (revoked or not), or undefined. */
  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.#row(this.client, id)
    return row === undefined ? undefined : fromRow(row)
  }

  /**
   * Replaces the key's secret; the old one stops working at once in this process and, on other
   * processes, when they hear the NOTIFY (at most the cache TTL later). Webhooks are signed with
   * the new secret from then on. Throws {@link ApiKeyError} for an unknown or revoked key.
   */
  async rotate(id: string): Promise<ApiKeyWithSecret> {
    const { secret, hash, prefix } = newSecret()
    const row = await this.client.transaction(async (tx) => {
      const { rows } = await tx.query<ApiKeyRow>(
        `UPDATE api_keys SET key_hash = $2, key_prefix = $3, rotated_at = $4
         WHERE id = $1 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
        [id, hash, prefix, this.#now()],
      )
      if (rows[0] === undefined) await this.#refuse(tx, id)
      await tx.query('SELECT pg_notify($1, $2)', [API_KEYS_CHANNEL, id])
      return rows[0]!
    })
    this.evict(id)
    return { key: fromRow(row), secret }
  }

  /**
   * Revokes the key: its secret is refused from now on (see {@link rotate} for other processes).
   * Idempotent: revoking again keeps the first `revokedAt`. Undefined for an unknown key.
   */
  async revoke(id: string): Promise<ApiKeyRecord | undefined> {
    if (!isApiKeyId(id)) return undefined
    const row = await this.client.transaction(async (tx) => {
      const { rows } = await tx.query<ApiKeyRow>(
        `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, this.#now()],
      )
      if (rows[0] !== undefined) await tx.query('SELECT pg_notify($1, $2)', [API_KEYS_CHANNEL, id])
      return rows[0]
    })
    this.evict(id)
    return row === undefined ? undefined : fromRow(row)
  }

  /**
   * Sets (or, with null, removes) the key's webhook. A URL is checked against the target rules
   * whenever it changes or the webhook is enabled; pausing the stored one (the same URL, disabled,
   * as a 410 answer does) needs no check. Throws {@link ApiKeyError} for an unknown or revoked key
   * or an invalid configuration.
   */
  async setWebhook(id: string, webhook: WebhookConfig | null): Promise<ApiKeyRecord> {
    const checked = webhook === null ? null : checkWebhookConfig(webhook)
    if (checked !== null) {
      // An unknown or revoked key is told so before its URL is looked at.
      const row = await this.#row(this.client, id)
      if (row === undefined || row.revoked_at !== null) await this.#refuse(this.client, id)
      if (checked.enabled || checked.url !== row?.webhook?.url) await this.#checkTarget(checked.url)
    }
    const row = await this.client.transaction(async (tx) => {
      const { rows } = await tx.query<ApiKeyRow>(
        `UPDATE api_keys SET webhook = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
        [id, checked === null ? null : JSON.stringify(checked)],
      )
      if (rows[0] === undefined) await this.#refuse(tx, id)
      await tx.query('SELECT pg_notify($1, $2)', [API_KEYS_CHANNEL, id])
      return rows[0]!
    })
    this.evict(id)
    return fromRow(row)
  }

  /**
   * The key a presented secret belongs to, or undefined when it is malformed, unknown or revoked.
   * Constant-time with respect to the secret: see the module comment.
   */
  async authenticate(secret: string): Promise<ApiKeyRecord | undefined> {
    // The format is public; checking it first leaks nothing and spares the database junk.
    if (typeof secret !== 'string' || !SECRET.test(secret)) return undefined
    const digest = sha256(secret)
    const hash = digest.toString('hex')
    const now = this.#now()
    const cached = this.#cache.get(hash)
    if (cached !== undefined) {
      if (cached.expiresAt > now) return cached.record
      this.#cache.delete(hash)
    }
    const { rows } = await this.client.query<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1`,
      [hash],
    )
    const row = rows[0]
    if (row === undefined) return undefined
    if (!crypto.timingSafeEqual(Buffer.from(row.key_hash, 'hex'), digest)) return undefined
    if (row.revoked_at !== null) return undefined
    const record = fromRow(row)
    if (this.#ttlMs > 0) this.#cache.set(hash, { record, expiresAt: now + this.#ttlMs })
    return record
  }

  /**
   * The key named by an `x-api-key` header: undefined when the header is absent or empty (an
   * anonymous call), the key when valid, and a 401 `UNAUTHORIZED` {@link PontisError} (which
   * never repeats the presented value) when it is unknown or revoked.
   */
  async authenticateHeader(headers: IncomingHttpHeaders): Promise<ApiKeyRecord | undefined> {
    const raw = headers[API_KEY_HEADER]
    const value = Array.isArray(raw) ? raw.join(', ') : raw
    if (value === undefined || value === '') return undefined
    const key = await this.authenticate(value)
    if (key === undefined) throw unauthorized()
    return key
  }

  /**
   * Where to deliver the key's webhooks and the HMAC key to sign them with; undefined when the key
   * is unknown or revoked or has no enabled webhook.
   */
  async webhookTarget(id: string): Promise<WebhookTarget | undefined> {
    const row = await this.#row(this.client, id)
    if (row === undefined || row.revoked_at !== null || row.webhook === null || !row.webhook.enabled) {
      return undefined
    }
    return { keyId: row.id, webhook: row.webhook, signingKey: Buffer.from(row.key_hash, 'hex') }
  }

  /** Forgets cached lookups of this key (all of them when `id` is omitted). */
  evict(id?: string): void {
    if (id === undefined) {
      this.#cache.clear()
      return
    }
    for (const [hash, cached] of this.#cache.entries()) {
      if (cached.record.id === id) this.#cache.delete(hash)
    }
  }

  /**
   * Evicts keys other processes rotate, revoke or change, as they announce it; after a lost
   * listening connection everything is evicted. Resolves to the function that stops listening.
   */
  watch(): Promise<() => Promise<void>> {
    return this.client.listen(API_KEYS_CHANNEL, (id) => this.evict(id), {
      onReconnect: () => this.evict(),
    })
  }

  async #row(client: SqlClient, id: string): Promise<ApiKeyRow | undefined> {
    if (!isApiKeyId(id)) return undefined
    const { rows } = await client.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1`, [id])
    return rows[0]
  }

  /** Throws why an update of `id` touched no row. */
  async #refuse(client: SqlClient, id: string): Promise<never> {
    const row = await this.#row(client, id)
    if (row === undefined) throw new ApiKeyError('not_found', `no API key ${id}`)
    throw new ApiKeyError('revoked', `API key ${id} is revoked`)
  }
}

/** The 401 for an unknown or revoked `x-api-key`. It never contains the presented value. */
export function unauthorized(): PontisError {
  return new PontisError(
    'UNAUTHORIZED',
    'Invalid API key: the x-api-key sent is unknown or revoked. Send a valid key, or none for the public limits.',
  )
}
