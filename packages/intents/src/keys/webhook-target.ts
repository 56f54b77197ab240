/**
 * The rules a key's webhook target must pass, when it is set and again at every delivery.
 *
 * SSRF guard for webhook targets. A webhook URL is chosen by an API key holder, so before the
 * service connects anywhere it resolves the host itself, refuses addresses inside the operator's
 * network (private, loopback, link-local, cloud metadata, ...) and hands back the checked address so
 * the connection can be pinned to it (no second resolution an attacker could rebind).
 */
import { promises as dnsPromises } from 'node:dns'
import { isIP } from 'node:net'
import { type EnvironmentVariables, readFlag } from '@pontis/core'

/**
 * Headers a custom header may not set (case-insensitive): the signature, event id and content
 * headers that receivers rely on, and the ones that control framing or the connection.
 */
export const PROTECTED_HEADERS: ReadonlySet<string> = new Set([
  'x-signature-timestamp',
  'x-signature-sha256',
  'x-event-id',
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'user-agent',
  'host',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
])

/** Where webhooks may be sent. */
export interface WebhookTargetPolicy {
  /**
   * Development only: allow loopback targets, and plain `http:` to them. `http:` is accepted only
   * when every resolved address is loopback.
   */
  allowHttpLoopback: boolean
  /** Allow private-network addresses (RFC 1918, CGNAT 100.64/10, IPv6 ULA fc00::/7, ...). */
  allowPrivate?: boolean
  /**
   * Host names (or IP literals) trusted by the operator, e.g. an internal webhook gateway: their
   * private, loopback and link-local addresses are allowed. Exact match, case-insensitive.
   * Metadata, multicast, unspecified and reserved addresses stay refused for every host.
   */
  allowedHosts?: string[]
}

/**
 * Where webhooks may go, as the operator set it; the same rules apply when a URL is set (admin
 * API, `pontis keys`) and at every delivery. `WEBHOOKS_ALLOW_HTTP_LOOPBACK=true` is for
 * development only: plain `http://` and loopback receivers (127.0.0.0/8, ::1, `localhost`).
 */
export function webhookPolicyFromEnv(env: EnvironmentVariables): WebhookTargetPolicy {
  return {
    allowHttpLoopback: readFlag(env, 'WEBHOOKS_ALLOW_HTTP_LOOPBACK'),
    allowPrivate: readFlag(env, 'WEBHOOKS_ALLOW_PRIVATE'),
  }
}

/** One resolved address, as `dns.promises.lookup(host, { all: true })` returns it. */
export interface ResolvedAddress {
  address: string
  family: number
}

/** Resolves a host name to all of its addresses (`dns.promises.lookup` fits; tests inject fakes). */
export type WebhookLookup = (hostname: string, options: { all: true }) => Promise<ResolvedAddress[]>

/** A target that passed {@link checkTarget}: connect to `address`, send `url`'s host as Host/SNI. */
export interface CheckedTarget {
  url: URL
  address: string
  family: 4 | 6
}

/**
 * Why a target was refused. `dns-failure` (the resolver could not answer now) may be transient;
 * `unresolvable` (the name does not exist) usually is not; the others need a config change.
 */
export type WebhookTargetReason =
  | 'invalid-url'
  | 'scheme'
  | 'credentials'
  | 'unresolvable'
  | 'dns-failure'
  | 'address-denied'

/** What an IP address is, as far as the SSRF guard cares. */
export type AddressCategory =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'reserved'

/**
 * A webhook target was refused. The message names the host and the offending address, never the
 * full URL (it may carry credentials or tokens in its path or query).
 */
export class WebhookTargetError extends Error {
  override readonly name = 'WebhookTargetError'
  /** Machine-readable reason. */
  readonly reason: WebhookTargetReason
  /** For `address-denied`: the category of the refused address. */
  readonly category: AddressCategory | undefined

  constructor(reason: WebhookTargetReason, message: string, category?: AddressCategory) {
    super(message)
    this.reason = reason
    this.category = category
  }
}

const defaultLookup: WebhookLookup = (hostname, options) => dnsPromises.lookup(hostname, options)

// --- address parsing -------------------------------------------------------------------------

/** Dotted-quad IPv4 (already validated by `isIP`) as an unsigned 32-bit number. */
function ipv4ToNumber(address: string): number {
  let value = 0
  for (const part of address.split('.')) value = value * 256 + Number(part)
  return value
}

/**
 * IPv6 (validated by `isIP`, zone id removed) as eight 16-bit groups. Handles `::` compression and
 * a trailing dotted quad (`::ffff:127.0.0.1`).
 */
function ipv6ToGroups(address: string): number[] {
  let text = address.toLowerCase()
  const lastColon = text.lastIndexOf(':')
  const last = text.slice(lastColon + 1)
  if (last.includes('.')) {
    // Rewrite the dotted quad as two hex groups, then parse as plain IPv6.
    const v4 = ipv4ToNumber(last)
    text = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`
  }
  const parse = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((h) => Number.parseInt(h, 16))
  const doubleColon = text.indexOf('::')
  if (doubleColon === -1) return parse(text)
  const head = parse(text.slice(0, doubleColon))
  const rest = parse(text.slice(doubleColon + 2))
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest]
}

// --- classification --------------------------------------------------------------------------

interface V4Range {
  base: number
  bits: number
  category: AddressCategory
}

function v4(cidr: string, category: AddressCategory): V4Range {
  const [base = '', bits = '32'] = cidr.split('/')
  return { base: ipv4ToNumber(base), bits: Number(bits), category }
}

// Most specific first: the first match wins.
const V4_RANGES: readonly V4Range[] = [
  v4('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, OpenStack, ... instance metadata
  v4('169.254.170.2/32', 'metadata'), // AWS ECS task metadata
  v4('168.63.129.16/32', 'metadata'), // Azure wireserver (a public-looking address)
  v4('100.100.100.200/32', 'metadata'), // Alibaba Cloud metadata
  v4('0.0.0.0/8', 'unspecified'), // "this network"; 0.0.0.0 reaches the local host on Linux
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'private'), // CGNAT shared address space
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  v4('192.0.2.0/24', 'documentation'),
  v4('192.88.99.0/24', 'reserved'), // deprecated 6to4 relay anycast
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'reserved'), // benchmarking
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('255.255.255.255/32', 'broadcast'),
  v4('240.0.0.0/4', 'reserved'),
]

function classifyV4Number(value: number): AddressCategory {
  for (const range of V4_RANGES) {
    const size = 2 ** (32 - range.bits)
    if (Math.floor(value / size) === Math.floor(range.base / size)) return range.category
  }
  return 'public'
}

/** True when the first `bits` bits of `groups` equal those of `prefix` (both eight 16-bit groups). */
function v6Matches(groups: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const take = Math.min(16, bits)
    const mask = (0xffff << (16 - take)) & 0xffff
    if (((groups[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false
  }
  return true
}

function embeddedV4(high: number | undefined, low: number | undefined): number {
  return (high ?? 0) * 65536 + (low ?? 0)
}

function classifyV6Groups(g: readonly number[]): AddressCategory {
  const is = (prefix: string, bits: number): boolean => v6Matches(g, ipv6ToGroups(prefix), bits)
  if (is('fd00:ec2::254', 128)) return 'metadata' // AWS IMDS over IPv6
  if (is('::', 128)) return 'unspecified'
  if (is('::1', 128)) return 'loopback'
  // Forms that carry an IPv4 address: judge the IPv4 address, or they would be a bypass.
  if (is('::ffff:0:0', 96)) return classifyV4Number(embeddedV4(g[6], g[7])) // IPv4-mapped
  if (is('::ffff:0:0:0', 96)) return classifyV4Number(embeddedV4(g[6], g[7])) // IPv4-translated
  if (is('64:ff9b::', 96)) return classifyV4Number(embeddedV4(g[6], g[7])) // NAT64 well-known prefix
  if (is('2002::', 16)) return classifyV4Number(embeddedV4(g[1], g[2])) // 6to4
  if (is('64:ff9b:1::', 48)) return 'private' // local-use NAT64
  if (is('::', 96)) return 'reserved' // deprecated IPv4-compatible (::a.b.c.d)
  if (is('100::', 64)) return 'reserved' // discard-only
  if (is('2001:db8::', 32)) return 'documentation'
  if (is('3fff::', 20)) return 'documentation'
  if (is('2001::', 23)) return 'reserved' // IETF protocol assignments, incl. Teredo (hides an IPv4)
  if (is('fc00::', 7)) return 'private' // unique local
  if (is('fe80::', 10)) return 'link-local'
  if (is('fec0::', 10)) return 'private' // deprecated site-local
  if (is('ff00::', 8)) return 'multicast'
  if (!is('2000::', 3)) return 'reserved' // outside global unicast
  return 'public'
}

/** Drops an IPv6 zone id (`fe80::1%eth0`) and URL brackets. */
function bareAddress(address: string): string {
  const unbracketed = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  const zone = unbracketed.indexOf('%')
  return zone === -1 ? unbracketed : unbracketed.slice(0, zone)
}

/**
 * Classifies an IP address (IPv4 dotted quad or any IPv6 text form, with or without brackets or
 * zone id). IPv4 embedded in IPv6 (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4) is judged by
 * the embedded IPv4 address. Anything that is not an IP address is `reserved` (refused).
 */
export function classifyAddress(address: string): AddressCategory {
  const bare = bareAddress(address)
  const family = isIP(bare)
  if (family === 4) return classifyV4Number(ipv4ToNumber(bare))
  if (family === 6) return classifyV6Groups(ipv6ToGroups(bare))
  return 'reserved'
}

// --- policy --------------------------------------------------------------------------------

function normalizeHost(host: string): string {
  const lower = bareAddress(host.trim().toLowerCase())
  return lower.endsWith('.') ? lower.slice(0, -1) : lower
}

function hostIsAllowed(hostname: string, allowedHosts: readonly string[] | undefined): boolean {
  if (allowedHosts === undefined || allowedHosts.length === 0) return false
  const host = normalizeHost(hostname)
  // Compare IP literals in canonical form, so "::1" matches "0:0:0:0:0:0:0:1".
  const canonical = (value: string): string => (isIP(value) === 6 ? ipv6ToGroups(value).join(':') : value)
  return allowedHosts.some((entry) => canonical(normalizeHost(entry)) === canonical(host))
}

function categoryAllowed(
  category: AddressCategory,
  policy: WebhookTargetPolicy,
  trustedHost: boolean,
): boolean {
  switch (category) {
    case 'public':
      return true
    case 'loopback':
      return policy.allowHttpLoopback || trustedHost
    case 'private':
      return policy.allowPrivate === true || trustedHost
    case 'link-local':
      return trustedHost
    default:
      return false
  }
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : 'lookup failed'
}

/** Resolver answers that mean "no such name" (NXDOMAIN, no address records), not "cannot ask now". */
const NAME_DOES_NOT_EXIST = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME'])

/** Cloud metadata services by name (GCP, AWS): refused whatever they resolve to. */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
])

/** Special-use suffixes of private networks: `.internal` (ICANN), `.local` (mDNS), `.home.arpa` (RFC 8375). */
const PRIVATE_NAME_SUFFIXES = ['.internal', '.local', '.home.arpa', '.localdomain']

/**
 * What a host name is before any resolution, for names whose meaning is fixed: `localhost` and
 * every name under it are loopback (RFC 6761 6.3, whatever a resolver says: glibc answers
 * `foo.localhost` with ENOTFOUND), `.invalid` never exists (RFC 6761 6.4), metadata and private
 * network names are what they say. Undefined for ordinary names, which DNS decides.
 */
export function classifyHostName(host: string): AddressCategory | 'unresolvable' | undefined {
  const name = normalizeHost(host)
  if (name === 'localhost' || name.endsWith('.localhost')) return 'loopback'
  if (name === 'invalid' || name.endsWith('.invalid')) return 'unresolvable'
  if (METADATA_NAMES.has(name)) return 'metadata'
  if (PRIVATE_NAME_SUFFIXES.some((suffix) => name.endsWith(suffix))) return 'private'
  return undefined
}

/** The addresses of a host name, or why there are none. */
async function resolveHost(host: string, lookup: WebhookLookup): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[]
  try {
    addresses = await lookup(host, { all: true })
  } catch (error) {
    const code = errorCode(error)
    if (NAME_DOES_NOT_EXIST.has(code))
      throw new WebhookTargetError('unresolvable', `webhook host ${host} does not resolve: ${code}`)
    throw new WebhookTargetError('dns-failure', `could not resolve webhook host ${host}: ${code}`)
  }
  if (addresses.length === 0) {
    throw new WebhookTargetError('unresolvable', `webhook host ${host} has no addresses`)
  }
  return addresses
}

/**
 * Checks a webhook URL against the SSRF policy and resolves it to the address to connect to.
 *
 * Rules: the scheme is `https:` (`http:` only with `allowHttpLoopback` and only when every resolved
 * address is loopback); no user name or password in the URL; the host (an IP literal, or a name
 * resolved with `lookup(host, { all: true })`) must not have ANY address in a refused category
 * (private, loopback, link-local, metadata, multicast, unspecified, broadcast, documentation,
 * reserved — IPv4, IPv6 and IPv4-in-IPv6 forms), except as `policy` allows. Names whose meaning is
 * fixed are judged by name first (see {@link classifyHostName}). Numeric IPv4 spellings
 * (`2130706433`, `0x7f.0.0.1`, `017700000001`) are normalized to dotted quads by the WHATWG URL
 * parser before the check.
 *
 * @param url - The configured webhook URL.
 * @param policy - What the operator allows (see {@link WebhookTargetPolicy}).
 * @param lookup - Resolver; defaults to `dns.promises.lookup`.
 * @returns The parsed URL and the first resolved address (all were checked); connect to that
 *   address only, keeping the URL's host name for Host and TLS SNI.
 * @throws WebhookTargetError with a `reason` when the target is refused or cannot be resolved
 *   (`unresolvable`: the name does not exist; `dns-failure`: the resolver failed, try later).
 */
export async function checkTarget(
  url: string,
  policy: WebhookTargetPolicy,
  lookup: WebhookLookup = defaultLookup,
): Promise<CheckedTarget> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new WebhookTargetError('invalid-url', 'webhook URL is not a valid absolute URL')
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowHttpLoopback)) {
    throw new WebhookTargetError(
      'scheme',
      `webhook URL scheme ${parsed.protocol} is not allowed; use https:` +
        (parsed.protocol === 'http:' ? ' (plain http: is allowed only to loopback in development)' : ''),
    )
  }
  // Never echo them: they are secrets.
  if (parsed.username !== '' || parsed.password !== '') {
    throw new WebhookTargetError('credentials', 'webhook URL must not contain a user name or password')
  }
  const host = bareAddress(parsed.hostname)
  if (host === '') throw new WebhookTargetError('invalid-url', 'webhook URL has no host')

  const trustedHost = hostIsAllowed(host, policy.allowedHosts)
  let addresses: ResolvedAddress[]
  const literalFamily = isIP(host)
  const named = literalFamily === 0 ? classifyHostName(host) : undefined
  if (literalFamily !== 0) {
    addresses = [{ address: host, family: literalFamily }]
  } else if (named === 'unresolvable') {
    throw new WebhookTargetError(
      'unresolvable',
      `webhook host ${host} does not exist (.invalid names never resolve)`,
    )
  } else if (named !== undefined && !categoryAllowed(named, policy, trustedHost)) {
    throw new WebhookTargetError(
      'address-denied',
      `webhook host ${host} is a ${named} name, which is not an allowed webhook target`,
      named,
    )
  } else if (named === 'loopback') {
    // Allowed (development): a localhost name is the loopback address, asked of no resolver.
    addresses = [{ address: '127.0.0.1', family: 4 }]
  } else {
    addresses = await resolveHost(host, lookup)
  }

  const checked: Array<{ address: string; family: 4 | 6; category: AddressCategory }> = []
  for (const { address } of addresses) {
    const bare = bareAddress(address)
    const family = isIP(bare)
    const category = classifyAddress(bare)
    if ((family !== 4 && family !== 6) || !categoryAllowed(category, policy, trustedHost)) {
      throw new WebhookTargetError(
        'address-denied',
        `webhook host ${host} resolves to ${bare} (${category}), which is not an allowed webhook target`,
        category,
      )
    }
    checked.push({ address: bare, family, category })
  }

  if (parsed.protocol === 'http:' && checked.some((entry) => entry.category !== 'loopback')) {
    throw new WebhookTargetError(
      'scheme',
      `plain http: is allowed only to loopback addresses in development; ${host} is not loopback`,
    )
  }
  const [first] = checked
  if (first === undefined)
    throw new WebhookTargetError('dns-failure', `webhook host ${host} has no addresses`)
  return { url: parsed, address: first.address, family: first.family }
}
