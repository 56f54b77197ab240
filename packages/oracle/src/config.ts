/**
 * The oracle's configuration: every environment variable of the service is parsed and checked
 * here, once, at start-up, so a misconfigured instance stops before it serves anything. Messages
 * name the variable, the offending value (never a secret's value) and what is expected.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import {
  checkLogLevel,
  DEFAULT_ENVIRONMENT,
  DEFAULT_READINESS_TIMEOUT_MS,
  type Logger,
  readMetricsToken,
} from '@pontis/core'
import { type Address, getAddress, type Hex, isAddress, isAddressEqual, zeroAddress } from 'viem'

/** How the instance's single signer is built. */
export type SigningConfig =
  | { readonly module: 'raw-private-key'; readonly privateKey: Hex }
  | { readonly module: 'aws-kms'; readonly keyId: string; readonly region: string }

/** What a peer request sends as `x-api-key`: a fixed key, or the caller's own key. */
export type PeerCredential =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'pass-through' }

export interface PeerConfig {
  /** Base URL without a trailing slash; routes are appended to it. */
  readonly url: string
  readonly credential: PeerCredential
}

/**
 * Everything the oracle reads from its environment except the chain configuration: the chain
 * files of `environment` and their `<CHAIN>_RPC_URL` placeholders are resolved and checked by
 * `loadRegistry` of `@pontis/core`.
 */
export interface OracleConfig {
  /** `ENVIRONMENT`, default `local`: selects the chain config files. */
  readonly environment: string
  readonly signing: SigningConfig
  /** `API_KEYS`: key → label (the label is metadata for logs). */
  readonly apiKeys: ReadonlyMap<string, string>
  /** `HTTP_PORT`, then `PORT`, then 3000. */
  readonly port: number
  /** `HOST`, default 127.0.0.1. */
  readonly host: string
  /** Unauthenticated fixed-window limit per client IP. */
  readonly rateLimit: { readonly max: number; readonly windowMs: number }
  readonly peers: readonly PeerConfig[]
  readonly peerTimeoutMs: number
  /** `ORACLE_SIGNERS`: unique, checksummed; `undefined` when no allowlist is configured. */
  readonly signers: readonly Address[] | undefined
  /** `ORACLE_SIGNERS_THRESHOLD`: only meaningful with `signers`. */
  readonly threshold: number
  /** `TRUST_PROXY=true`: take the client IP from forwarding headers. */
  readonly trustProxy: boolean
  /** `TRUST_PROXY_HOPS`: how many reverse proxies sit in front of the instance. */
  readonly proxyHops: number
  /**
   * `METRICS_TOKEN`: the bearer token `GET /metrics` asks for. Unset: the route answers only direct
   * loopback connections (no forwarding header) and is 404 to everything else.
   */
  readonly metricsToken: string | undefined
  /** `READINESS_TIMEOUT_MS`: how long `GET /readyz` waits for each chain's node. Default 3000. */
  readonly readinessTimeoutMs: number
}

/** A start-up problem an operator must fix; the process prints it and stops. */
export class OracleConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'OracleConfigError'
  }
}

export const DEFAULT_VAULT_SECRETS_DIR = '/vault/secrets'

const DEFAULT_PORT = 3000
const DEFAULT_HOST = '127.0.0.1'
const DEFAULT_RATE_LIMIT_MAX = 2
const DEFAULT_RATE_LIMIT_WINDOW_MS = 1000
const DEFAULT_PEER_TIMEOUT_MS = 10_000
const DEFAULT_THRESHOLD = 1
const DEFAULT_PROXY_HOPS = 1
// Node's timers treat longer delays as 1 ms, so a bigger timeout or window would silently misbehave.
const MAX_TIMER_MS = 2_147_483_647

const SIGNING_MODULES = ['raw-private-key', 'aws-kms'] as const
/**
 * Anvil's published test account #9. Only the `local` environment falls back to it, so the
 * embedded devnet starts with no set-up; every other environment must name its own key.
 */
const LOCAL_DEVELOPMENT_KEY: Hex = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6'
// A private key must be a scalar in [1, n-1] of secp256k1.
const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const PASS_THROUGH = 'pass-through'
const ENVIRONMENT_VARIABLE_NAME = /^[A-Z_][A-Z0-9_]*$/
const DIGITS = /^[0-9]+$/

/** As the intent service's ADMIN_TOKEN: long enough that guessing it is hopeless. */
export { MIN_METRICS_TOKEN_LENGTH } from '@pontis/core'

/** True when the variable is set to nothing but whitespace. */
const isBlank = (value: string | undefined): boolean => value !== undefined && value.trim() === ''

/**
 * The value of a variable, trimmed; `undefined` when unset. A variable set to an empty or blank
 * value stops start-up: `X=` is a half-made setting (a mistyped template, a secret that did not
 * arrive), and taking the default instead would hide it.
 */
function readVariable(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]
  if (value === undefined) return undefined
  if (isBlank(value)) {
    throw new OracleConfigError(`${name} is set but empty; give it a value, or unset it for the default`)
  }
  return value.trim()
}

/**
 * `;`-separated entries, trimmed; positions are 1-based for messages. An empty entry (`A;;B`, or a
 * leading or trailing `;`) stops start-up: it usually is an entry that went missing.
 */
function splitEntries(
  name: string,
  raw: string,
): Array<{ readonly position: number; readonly text: string }> {
  return raw.split(';').map((entry, index) => {
    const text = entry.trim()
    if (text === '') {
      throw new OracleConfigError(
        `${name} entry ${index + 1} is empty; remove the extra ';' or put the missing entry there`,
      )
    }
    return { position: index + 1, text }
  })
}

/** What an HTTP header value may hold here: visible ASCII, no spaces (fetch refuses the rest). */
const HEADER_TOKEN = /^[\x21-\x7e]+$/

function parsePositiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number, max: number): number {
  const raw = readVariable(env, name)
  if (raw === undefined) return fallback
  const value = DIGITS.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new OracleConfigError(`${name} must be a whole number from 1 to ${max}, got "${raw}"`)
  }
  return value
}

/** The spec's order: `HTTP_PORT`, then `PORT`, then 3000. A set value that is not a port is an error. */
export function resolveOraclePort(env: NodeJS.ProcessEnv): number {
  for (const name of ['HTTP_PORT', 'PORT'] as const) {
    const raw = readVariable(env, name)
    if (raw === undefined) continue
    // Digits only: `Number()` would also accept " ", "0x50" or "1e3" (a blank one even as port 0).
    const port = DIGITS.test(raw) ? Number(raw) : Number.NaN
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new OracleConfigError(`${name} must be a port number (0-65535), got "${raw}"`)
    }
    return port
  }
  return DEFAULT_PORT
}

function parseSigning(env: NodeJS.ProcessEnv, environment: string, logger: Logger): SigningConfig {
  const module = readVariable(env, 'SIGNING_MODULE') ?? 'raw-private-key'
  if (module === 'aws-kms') {
    const keyId = readVariable(env, 'AWS_KMS_KEY_ID')
    const region = readVariable(env, 'AWS_REGION')
    if (keyId === undefined || region === undefined) {
      const missing = [
        keyId === undefined ? 'AWS_KMS_KEY_ID' : [],
        region === undefined ? 'AWS_REGION' : [],
      ].flat()
      throw new OracleConfigError(`SIGNING_MODULE=aws-kms requires ${missing.join(' and ')} to be set`)
    }
    return { module: 'aws-kms', keyId, region }
  }
  if (module !== 'raw-private-key') {
    throw new OracleConfigError(
      `SIGNING_MODULE must be one of ${SIGNING_MODULES.join(', ')}, got "${module}"`,
    )
  }
  const raw = readVariable(env, 'ECDSA_PRIVATE_KEY')
  if (raw === undefined) {
    if (environment !== DEFAULT_ENVIRONMENT) {
      throw new OracleConfigError(
        `ECDSA_PRIVATE_KEY is required with SIGNING_MODULE=raw-private-key (ENVIRONMENT "${environment}")`,
      )
    }
    logger.warn(
      'ECDSA_PRIVATE_KEY is not set: signing with the public anvil development key (account #9); local environment only, never use it for real funds',
    )
    return { module: 'raw-private-key', privateKey: LOCAL_DEVELOPMENT_KEY }
  }
  // The value is a secret: the message says what is wrong with it, never what it is.
  const hex = raw.startsWith('0x') || raw.startsWith('0X') ? raw.slice(2) : raw
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new OracleConfigError(
      `ECDSA_PRIVATE_KEY must be 32 bytes of hex (64 hex characters, optional 0x prefix); the value set has ${hex.length} characters after any 0x prefix${/^[0-9a-fA-F]*$/.test(hex) ? '' : ' and contains non-hex characters'}`,
    )
  }
  const scalar = BigInt(`0x${hex}`)
  if (scalar === 0n || scalar >= SECP256K1_ORDER) {
    throw new OracleConfigError(
      'ECDSA_PRIVATE_KEY is not a valid secp256k1 private key (zero or not below the curve order)',
    )
  }
  return { module: 'raw-private-key', privateKey: `0x${hex.toLowerCase()}` }
}

function parseApiKeys(env: NodeJS.ProcessEnv): ReadonlyMap<string, string> {
  const apiKeys = new Map<string, string>()
  const raw = readVariable(env, 'API_KEYS')
  if (raw === undefined) return apiKeys
  const positions = new Map<string, number>()
  // Keys are secrets: messages point at an entry by position, never by content.
  for (const { position, text } of splitEntries('API_KEYS', raw)) {
    const separator = text.indexOf(':')
    if (separator === -1) {
      throw new OracleConfigError(
        `API_KEYS entry ${position} must have the form <API_KEY>:<label> (no ':' found)`,
      )
    }
    const key = text.slice(0, separator).trim()
    const label = text.slice(separator + 1).trim()
    if (!HEADER_TOKEN.test(key)) {
      throw new OracleConfigError(
        `API_KEYS entry ${position} has an empty key or a key with whitespace or characters other than visible ASCII (it could never be sent as x-api-key)`,
      )
    }
    if (label === '') {
      throw new OracleConfigError(`API_KEYS entry ${position} has an empty label; use <API_KEY>:<label>`)
    }
    const earlier = positions.get(key)
    if (earlier !== undefined) {
      throw new OracleConfigError(
        `API_KEYS entries ${earlier} and ${position} have the same key; each key must be unique`,
      )
    }
    positions.set(key, position)
    apiKeys.set(key, label)
  }
  return apiKeys
}

function parsePeerUrl(text: string, position: number): string {
  // The URL is not printed when invalid: a swapped entry would put the peer key there.
  const invalid = (reason: string) =>
    new OracleConfigError(`PEERS entry ${position}: the base URL ${reason}; use <base_url>|<peer_api_key>`)
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw invalid('is not an absolute URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('must use http or https')
  // fetch refuses URLs with credentials, and a query or fragment would break appending routes.
  if (url.username !== '' || url.password !== '') throw invalid('must not contain a user name or password')
  if (url.search !== '' || url.hash !== '') throw invalid('must not have a query or fragment')
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

function parsePeers(env: NodeJS.ProcessEnv): PeerConfig[] {
  const raw = readVariable(env, 'PEERS')
  if (raw === undefined) return []
  const peers: PeerConfig[] = []
  const positions = new Map<string, number>()
  for (const { position, text } of splitEntries('PEERS', raw)) {
    // A URL cannot contain a literal '|', so the first one separates URL from key.
    const separator = text.indexOf('|')
    if (separator === -1) {
      throw new OracleConfigError(
        `PEERS entry ${position} must have the form <base_url>|<peer_api_key> (no '|' found)`,
      )
    }
    const url = parsePeerUrl(text.slice(0, separator).trim(), position)
    const secret = text.slice(separator + 1).trim()
    if (secret === '') {
      throw new OracleConfigError(
        `PEERS entry ${position} (${url}) has an empty credential; give the peer's API key or "${PASS_THROUGH}"`,
      )
    }
    // The peer key is a secret: the messages below never print it.
    if (secret.toLowerCase() === PASS_THROUGH && secret !== PASS_THROUGH) {
      throw new OracleConfigError(
        `PEERS entry ${position} (${url}): write the credential "${PASS_THROUGH}" in lower case; any other spelling would be sent as a literal key`,
      )
    }
    if (!HEADER_TOKEN.test(secret)) {
      throw new OracleConfigError(
        `PEERS entry ${position} (${url}) has a credential with whitespace or characters other than visible ASCII; give the peer's API key or "${PASS_THROUGH}"`,
      )
    }
    const earlier = positions.get(url)
    if (earlier !== undefined) {
      throw new OracleConfigError(
        `PEERS entries ${earlier} and ${position} both name ${url}; list each peer once`,
      )
    }
    positions.set(url, position)
    const credential: PeerCredential =
      secret === PASS_THROUGH ? { kind: 'pass-through' } : { kind: 'key', key: secret }
    peers.push({ url, credential })
  }
  return peers
}

function parseSigners(env: NodeJS.ProcessEnv): Address[] | undefined {
  // Every entry is checked below, so a set ORACLE_SIGNERS always yields at least one signer.
  const raw = readVariable(env, 'ORACLE_SIGNERS')
  if (raw === undefined) return undefined
  const signers: Address[] = []
  for (const { position, text } of splitEntries('ORACLE_SIGNERS', raw)) {
    if (!isAddress(text, { strict: false })) {
      throw new OracleConfigError(`ORACLE_SIGNERS entry ${position} is not a valid address: "${text}"`)
    }
    const address = getAddress(text)
    // Mixed case claims an EIP-55 checksum: a wrong one is a mistyped signer, whose signatures would
    // never count (the threshold unreachable without notice). One case throughout claims nothing.
    if (hasMixedCase(text) && text !== address) {
      throw new OracleConfigError(
        `ORACLE_SIGNERS entry ${position} has a wrong EIP-55 checksum: "${text}" (checksummed it would read ${address}); check the address, or write it in lower case`,
      )
    }
    if (address === zeroAddress) {
      throw new OracleConfigError(`ORACLE_SIGNERS entry ${position} is the zero address, which cannot sign`)
    }
    // "Unique allowlist entries": a repeated address (in any letter case) counts once.
    if (!signers.includes(address)) signers.push(address)
  }
  return signers
}

const hasMixedCase = (address: string): boolean =>
  /[a-f]/.test(address.slice(2)) && /[A-F]/.test(address.slice(2))

function parseThreshold(env: NodeJS.ProcessEnv): { readonly threshold: number; readonly explicit: boolean } {
  const raw = readVariable(env, 'ORACLE_SIGNERS_THRESHOLD')
  if (raw === undefined) return { threshold: DEFAULT_THRESHOLD, explicit: false }
  const threshold = DIGITS.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(threshold) || threshold < 1) {
    throw new OracleConfigError(`ORACLE_SIGNERS_THRESHOLD must be an integer of at least 1, got "${raw}"`)
  }
  return { threshold, explicit: true }
}

function parseTrustProxy(env: NodeJS.ProcessEnv): boolean {
  const raw = readVariable(env, 'TRUST_PROXY')
  if (raw === undefined || raw === 'false') return false
  if (raw === 'true') return true
  // Refused rather than read as false: "1" or "yes" would otherwise silently not trust the proxy.
  throw new OracleConfigError(`TRUST_PROXY must be "true" or "false", got "${raw}"`)
}

/** Core's `readMetricsToken`, its problem reported as the oracle's start-up error. */
function parseMetricsToken(env: NodeJS.ProcessEnv): string | undefined {
  // The oracle's own reading first: a blank value is an error here, not "unset".
  const token = readVariable(env, 'METRICS_TOKEN')
  if (token === undefined) return undefined
  try {
    return readMetricsToken({ METRICS_TOKEN: token })
  } catch (error) {
    throw new OracleConfigError((error as Error).message)
  }
}

/** Parses and validates everything that does not need the signer. Logs warnings (threshold without allowlist, local development key fallback). */
export function loadOracleConfig(env: NodeJS.ProcessEnv, logger: Logger): OracleConfig {
  checkLogLevel(env)
  const environment = readVariable(env, 'ENVIRONMENT') ?? DEFAULT_ENVIRONMENT
  const signing = parseSigning(env, environment, logger)
  const apiKeys = parseApiKeys(env)
  const port = resolveOraclePort(env)
  const host = readVariable(env, 'HOST') ?? DEFAULT_HOST
  const rateLimit = {
    max: parsePositiveInteger(
      env,
      'UNAUTHENTICATED_RATE_LIMIT_MAX',
      DEFAULT_RATE_LIMIT_MAX,
      Number.MAX_SAFE_INTEGER,
    ),
    windowMs: parsePositiveInteger(
      env,
      'UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS',
      DEFAULT_RATE_LIMIT_WINDOW_MS,
      MAX_TIMER_MS,
    ),
  }
  const peers = parsePeers(env)
  const peerTimeoutMs = parsePositiveInteger(
    env,
    'PEER_REQUEST_TIMEOUT_MS',
    DEFAULT_PEER_TIMEOUT_MS,
    MAX_TIMER_MS,
  )
  const signers = parseSigners(env)
  const { threshold, explicit } = parseThreshold(env)
  if (signers === undefined) {
    if (explicit) {
      logger.warn('ORACLE_SIGNERS_THRESHOLD is set but ORACLE_SIGNERS is not: the threshold is ignored', {
        threshold,
      })
    }
  } else if (threshold > signers.length) {
    throw new OracleConfigError(
      `ORACLE_SIGNERS_THRESHOLD ${threshold} exceeds the ${signers.length} unique ORACLE_SIGNERS entr${signers.length === 1 ? 'y' : 'ies'}`,
    )
  }
  const trustProxy = parseTrustProxy(env)
  const proxyHops = parsePositiveInteger(env, 'TRUST_PROXY_HOPS', DEFAULT_PROXY_HOPS, Number.MAX_SAFE_INTEGER)
  if (!trustProxy && env.TRUST_PROXY_HOPS !== undefined) {
    logger.warn('TRUST_PROXY_HOPS is set but TRUST_PROXY is not "true": forwarding headers are ignored', {
      proxyHops,
    })
  }
  return {
    environment,
    signing,
    apiKeys,
    port,
    host,
    rateLimit,
    peers,
    peerTimeoutMs,
    signers,
    threshold,
    trustProxy,
    proxyHops,
    metricsToken: parseMetricsToken(env),
    readinessTimeoutMs: parsePositiveInteger(
      env,
      'READINESS_TIMEOUT_MS',
      DEFAULT_READINESS_TIMEOUT_MS,
      MAX_TIMER_MS,
    ),
  }
}

/** Startup check that needs the signer's address: with an allowlist, the local signer must be in it. */
export function assertSignerAllowed(config: OracleConfig, signerAddress: Address): void {
  if (config.signers === undefined) return
  if (config.signers.some((allowed) => isAddressEqual(allowed, signerAddress))) return
  throw new OracleConfigError(
    `the local signer ${getAddress(signerAddress)} is not in ORACLE_SIGNERS (${config.signers.join(', ')}); add it or sign with a listed key`,
  )
}

const SINGLE_QUOTED = /^'([^']*)'\s*(?:#.*)?$/
const DOUBLE_QUOTED = /^"((?:[^"\\]|\\.)*)"\s*(?:#.*)?$/
const DOUBLE_QUOTED_ESCAPES: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t' }

/** Strips the quotes of a dotenv value (only a comment may follow them); `undefined` when malformed. */
function unquoteDotenvValue(raw: string): string | undefined {
  if (raw.startsWith("'")) return SINGLE_QUOTED.exec(raw)?.[1]
  if (raw.startsWith('"')) {
    const inner = DOUBLE_QUOTED.exec(raw)?.[1]
    return inner?.replace(/\\(.)/g, (_, escaped: string) => DOUBLE_QUOTED_ESCAPES[escaped] ?? escaped)
  }
  // Unquoted: a '#' starts a comment only after whitespace, so values may contain '#'.
  return raw.replace(/\s+#.*$/, '').trim()
}

/** `KEY=value` / `export KEY=value` lines; blank lines and `#` comments are skipped. */
function parseDotenvFile(content: string, file: string): Map<string, string> {
  const variables = new Map<string, string>()
  const lines = content.split(/\r?\n/)
  for (const [index, line] of lines.entries()) {
    const trimmed = line.trim()
    if (trimmed === '' || trimmed.startsWith('#')) continue
    // Line numbers only: the line itself holds a secret.
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(trimmed)
    const value = match?.[2] === undefined ? undefined : unquoteDotenvValue(match[2])
    if (match?.[1] === undefined || value === undefined) {
      throw new OracleConfigError(
        `vault secrets file ${file}, line ${index + 1}: expected KEY=value, export KEY=value or a # comment`,
      )
    }
    variables.set(match[1], value)
  }
  return variables
}

function readSecretsFile(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new OracleConfigError(`vault secrets file ${path} cannot be read`, { cause: error })
  }
}

/**
 * Reads secrets files from `dir` (default: env.VAULT_SECRETS_DIR ?? DEFAULT_VAULT_SECRETS_DIR) when that directory exists, and returns env with them added.
 *
 * A file named like an environment variable (`ECDSA_PRIVATE_KEY`) holds that variable's value
 * (trailing newlines trimmed); any other file (`oracle.env`, `config`) holds dotenv lines.
 * Hidden entries (Kubernetes' `..data` links) are skipped; symlinks to files are followed.
 * Precedence: a variable already set (non-blank) in `env` wins over the files, so explicit
 * configuration can always override a mounted secret. Two files giving one variable different
 * values is an error rather than a silent pick. `env` itself is not modified.
 */
export function loadVaultSecrets(env: NodeJS.ProcessEnv, dir?: string): NodeJS.ProcessEnv {
  const directory = dir ?? readVariable(env, 'VAULT_SECRETS_DIR') ?? DEFAULT_VAULT_SECRETS_DIR
  let names: string[]
  try {
    if (!statSync(directory).isDirectory()) {
      throw new OracleConfigError(`vault secrets path ${directory} is not a directory`)
    }
    names = readdirSync(directory).sort()
  } catch (error) {
    if (error instanceof OracleConfigError) throw error
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return env
    throw new OracleConfigError(`vault secrets directory ${directory} cannot be read`, { cause: error })
  }
  const found = new Map<string, { readonly value: string; readonly file: string }>()
  for (const name of names) {
    if (name.startsWith('.')) continue
    const path = join(directory, name)
    let isFile: boolean
    try {
      isFile = statSync(path).isFile()
    } catch (error) {
      throw new OracleConfigError(`vault secrets file ${path} cannot be read`, { cause: error })
    }
    if (!isFile) continue
    const content = readSecretsFile(path)
    const variables = ENVIRONMENT_VARIABLE_NAME.test(name)
      ? new Map([[name, content.replace(/(\r?\n)+$/, '')]])
      : parseDotenvFile(content, path)
    for (const [variable, value] of variables) {
      const earlier = found.get(variable)
      if (earlier !== undefined && earlier.value !== value) {
        throw new OracleConfigError(
          `vault secrets files ${earlier.file} and ${path} give ${variable} different values; keep one`,
        )
      }
      found.set(variable, { value, file: path })
    }
  }
  const merged: NodeJS.ProcessEnv = { ...env }
  for (const [variable, { value }] of found) {
    if (env[variable] === undefined || isBlank(env[variable])) merged[variable] = value
  }
  return merged
}
