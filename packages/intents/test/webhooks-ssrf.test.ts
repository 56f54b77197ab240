/**
 * SSRF guard: a table of tricky webhook targets with an injected resolver (no real DNS), plus the
 * address classifier on its own.
 */
import t from 'tap'
import {
  type AddressCategory,
  checkTarget,
  classifyAddress,
  type ResolvedAddress,
  type WebhookLookup,
  WebhookTargetError,
  type WebhookTargetPolicy,
  type WebhookTargetReason,
} from '../src/keys/webhook-target.js'

const PUBLIC_V4 = '93.184.215.14'
const PUBLIC_V6 = '2606:4700:4700::1111'

const ZONE: Record<string, string[]> = {
  'hooks.example.com': [PUBLIC_V4],
  'v6.example.com': [PUBLIC_V6],
  'dual.example.com': [PUBLIC_V4, '2606:4700::6810:85e5'],
  'loop.example.com': ['127.0.0.1'],
  'loop6.example.com': ['::1'],
  'mixed.example.com': [PUBLIC_V4, '10.0.0.5'],
  'mixed-order.example.com': ['192.168.0.10', PUBLIC_V4],
  'meta.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'zone.example.com': ['fe80::1%eth0'],
  'ula.example.com': ['fd12:3456::1'],
  'nat64.example.com': ['64:ff9b::a9fe:a9fe'],
  'nat64-public.example.com': ['64:ff9b::5db8:d70e'],
  'cgnat.example.com': ['100.64.1.1'],
  'empty.example.com': [],
  'internal.corp': ['10.1.2.3'],
  'gateway.corp': ['169.254.169.254'],
  'loop-and-public.example.com': ['127.0.0.1', PUBLIC_V4],
  'private-public.internal': [PUBLIC_V4],
}

const lookups: string[] = []
const fakeLookup: WebhookLookup = async (hostname, options) => {
  lookups.push(hostname)
  t.equal(options.all, true, 'always asks for every address')
  // Like real DNS, a trailing dot (absolute name) resolves the same name.
  if (hostname === 'nodata.example.com')
    throw Object.assign(new Error(`queryA ENODATA ${hostname}`), { code: 'ENODATA' })
  if (hostname === 'flaky.example.com')
    throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}`), { code: 'EAI_AGAIN' })
  const addresses = ZONE[hostname.replace(/\.$/, '')]
  if (addresses === undefined)
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
  return addresses.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }))
}

const strict: WebhookTargetPolicy = { allowHttpLoopback: false }
const dev: WebhookTargetPolicy = { allowHttpLoopback: true }
const privateOk: WebhookTargetPolicy = { allowHttpLoopback: false, allowPrivate: true }

type Expectation =
  | { allow: string; family?: 4 | 6 }
  | { reason: WebhookTargetReason; category?: AddressCategory }

interface Case {
  url: string
  policy?: WebhookTargetPolicy
  expect: Expectation
  note?: string
}

const deny = (reason: WebhookTargetReason, category?: AddressCategory): Expectation =>
  category === undefined ? { reason } : { reason, category }
const denied = (category: AddressCategory): Expectation => deny('address-denied', category)

const CASES: Case[] = [
  // Plain, allowed targets.
  { url: 'https://hooks.example.com/webhook', expect: { allow: PUBLIC_V4, family: 4 } },
  { url: 'https://hooks.example.com:8443/a/b?c=d#e', expect: { allow: PUBLIC_V4 } },
  { url: 'https://v6.example.com/', expect: { allow: PUBLIC_V6, family: 6 } },
  {
    url: 'https://dual.example.com/',
    expect: { allow: PUBLIC_V4, family: 4 },
    note: 'first checked address',
  },
  { url: 'https://8.8.8.8/', expect: { allow: '8.8.8.8' } },
  { url: 'https://172.32.0.1/', expect: { allow: '172.32.0.1' }, note: 'just outside 172.16/12' },
  { url: `https://[${PUBLIC_V6}]/`, expect: { allow: PUBLIC_V6, family: 6 } },
  {
    url: 'https://nat64-public.example.com/',
    expect: { allow: '64:ff9b::5db8:d70e' },
    note: 'NAT64 of a public v4',
  },
  // Scheme and URL shape.
  { url: 'http://hooks.example.com/', expect: deny('scheme') },
  { url: 'http://hooks.example.com/', policy: dev, expect: deny('scheme'), note: 'dev flag: loopback only' },
  {
    url: 'http://loop-and-public.example.com/',
    policy: dev,
    expect: deny('scheme'),
    note: 'every address loopback',
  },
  { url: 'ftp://hooks.example.com/', expect: deny('scheme') },
  { url: 'file:///etc/passwd', policy: dev, expect: deny('scheme') },
  { url: 'gopher://127.0.0.1:6379/_INFO', expect: deny('scheme') },
  { url: 'hooks.example.com/webhook', expect: deny('invalid-url') },
  { url: 'https://user@hooks.example.com/', expect: deny('credentials') },
  { url: 'https://user:hunter2@hooks.example.com/', expect: deny('credentials') },
  { url: 'https://:hunter2@hooks.example.com/', expect: deny('credentials') },
  // Loopback in all its spellings.
  { url: 'https://127.0.0.1/', expect: denied('loopback') },
  { url: 'https://loop.example.com/', expect: denied('loopback'), note: 'name resolving to 127.0.0.1' },
  { url: 'https://loop.example.com/', policy: privateOk, expect: denied('loopback') },
  { url: 'http://loop.example.com:8080/', policy: dev, expect: { allow: '127.0.0.1' } },
  { url: 'https://loop.example.com/', policy: dev, expect: { allow: '127.0.0.1' } },
  { url: 'http://loop6.example.com/', policy: dev, expect: { allow: '::1', family: 6 } },
  { url: 'http://2130706433/', expect: deny('scheme') },
  { url: 'http://2130706433/', policy: dev, expect: { allow: '127.0.0.1' }, note: 'decimal IPv4' },
  { url: 'https://2130706433/', expect: denied('loopback') },
  { url: 'https://0x7f.0.0.1/', expect: denied('loopback'), note: 'hex IPv4' },
  { url: 'https://017700000001/', expect: denied('loopback'), note: 'octal IPv4' },
  { url: 'https://0177.0.0.01/', expect: denied('loopback') },
  { url: 'https://127.1/', expect: denied('loopback'), note: 'short IPv4' },
  { url: 'https://[::1]/', expect: denied('loopback') },
  { url: 'https://[::ffff:127.0.0.1]/', expect: denied('loopback'), note: 'IPv4-mapped' },
  { url: 'https://[::ffff:7f00:1]/', expect: denied('loopback'), note: 'IPv4-mapped, hex' },
  { url: 'https://[64:ff9b::127.0.0.1]/', expect: denied('loopback'), note: 'NAT64' },
  { url: 'https://[2002:7f00:1::]/', expect: denied('loopback'), note: '6to4' },
  { url: 'https://mapped.example.com/', expect: denied('loopback'), note: 'resolver answers mapped form' },
  { url: 'https://[::127.0.0.1]/', expect: denied('reserved'), note: 'IPv4-compatible' },
  // Unspecified.
  { url: 'https://0.0.0.0/', expect: denied('unspecified') },
  { url: 'https://0/', expect: denied('unspecified') },
  { url: 'https://[::]/', expect: denied('unspecified') },
  // Metadata: never, whatever the policy.
  { url: 'https://169.254.169.254/latest/meta-data/', expect: denied('metadata') },
  { url: 'https://[0:0:0:0:0:ffff:169.254.169.254]/', expect: denied('metadata') },
  { url: 'https://[::ffff:a9fe:a9fe]/', policy: privateOk, expect: denied('metadata') },
  { url: 'https://[fd00:ec2::254]/', policy: privateOk, expect: denied('metadata') },
  {
    url: 'https://meta.example.com/',
    policy: { ...privateOk, allowHttpLoopback: true },
    expect: denied('metadata'),
  },
  { url: 'https://nat64.example.com/', expect: denied('metadata'), note: 'NAT64 of 169.254.169.254' },
  { url: 'https://168.63.129.16/', expect: denied('metadata'), note: 'Azure wireserver' },
  { url: 'https://100.100.100.200/', policy: privateOk, expect: denied('metadata'), note: 'Alibaba' },
  {
    url: 'https://gateway.corp/',
    policy: { ...strict, allowedHosts: ['gateway.corp'] },
    expect: denied('metadata'),
  },
  // Private and link-local.
  { url: 'https://10.0.0.1/', expect: denied('private') },
  { url: 'https://10.0.0.1/', policy: privateOk, expect: { allow: '10.0.0.1' } },
  { url: 'http://10.0.0.1/', policy: privateOk, expect: deny('scheme') },
  { url: 'https://172.16.0.1/', expect: denied('private') },
  { url: 'https://172.31.255.255/', expect: denied('private') },
  { url: 'https://192.168.1.1/', expect: denied('private') },
  { url: 'https://cgnat.example.com/', expect: denied('private') },
  { url: 'https://ula.example.com/', expect: denied('private') },
  { url: 'https://ula.example.com/', policy: privateOk, expect: { allow: 'fd12:3456::1', family: 6 } },
  { url: 'https://mixed.example.com/', expect: denied('private'), note: 'ANY address refused' },
  { url: 'https://mixed-order.example.com/', expect: denied('private') },
  { url: 'https://169.254.1.1/', expect: denied('link-local') },
  { url: 'https://169.254.1.1/', policy: privateOk, expect: denied('link-local') },
  { url: 'https://[fe80::1]/', expect: denied('link-local') },
  { url: 'https://zone.example.com/', expect: denied('link-local'), note: 'zone id in the answer' },
  {
    url: 'https://internal.corp/',
    policy: { ...strict, allowedHosts: ['internal.corp'] },
    expect: { allow: '10.1.2.3' },
  },
  {
    url: 'https://INTERNAL.corp./',
    policy: { ...strict, allowedHosts: ['Internal.Corp'] },
    expect: { allow: '10.1.2.3' },
  },
  {
    url: 'https://internal.corp/',
    policy: { ...strict, allowedHosts: ['other.corp'] },
    expect: denied('private'),
  },
  {
    url: 'https://[::1]/',
    policy: { ...strict, allowedHosts: ['0:0:0:0:0:0:0:1'] },
    expect: { allow: '::1' },
  },
  // Multicast, broadcast, documentation, reserved.
  { url: 'https://224.0.0.1/', expect: denied('multicast') },
  { url: 'https://[ff02::1]/', expect: denied('multicast') },
  { url: 'https://255.255.255.255/', expect: denied('broadcast') },
  { url: 'https://192.0.2.10/', expect: denied('documentation') },
  { url: 'https://203.0.113.7/', expect: denied('documentation') },
  { url: 'https://[2001:db8::1]/', expect: denied('documentation') },
  { url: 'https://240.0.0.1/', expect: denied('reserved') },
  { url: 'https://198.18.0.1/', expect: denied('reserved') },
  { url: 'https://[2001::1]/', expect: denied('reserved'), note: 'Teredo' },
  // Resolution failures: a name that does not exist, a resolver that cannot answer now.
  { url: 'https://nosuch.example.com/', expect: deny('unresolvable') },
  { url: 'https://empty.example.com/', expect: deny('unresolvable') },
  { url: 'https://nodata.example.com/', expect: deny('unresolvable'), note: 'ENODATA' },
  { url: 'https://flaky.example.com/', expect: deny('dns-failure'), note: 'EAI_AGAIN' },
  // Names whose meaning is fixed, judged before any resolver is asked.
  { url: 'https://localhost/', expect: denied('loopback') },
  { url: 'https://foo.localhost/', expect: denied('loopback'), note: 'RFC 6761: every name under localhost' },
  { url: 'https://localhost./', expect: denied('loopback') },
  { url: 'https://A.B.LOCALHOST./', expect: denied('loopback') },
  { url: 'http://foo.localhost:8080/', policy: dev, expect: { allow: '127.0.0.1', family: 4 } },
  { url: 'https://gone.invalid/', expect: deny('unresolvable') },
  { url: 'https://gone.invalid/', policy: dev, expect: deny('unresolvable') },
  { url: 'https://metadata.google.internal/', expect: denied('metadata') },
  {
    url: 'https://metadata.google.internal/',
    policy: { ...privateOk, allowHttpLoopback: true },
    expect: denied('metadata'),
  },
  { url: 'https://metadata/', expect: denied('metadata') },
  { url: 'https://db.internal/', expect: denied('private') },
  { url: 'https://printer.local/', expect: denied('private') },
  { url: 'https://router.home.arpa/', expect: denied('private') },
  {
    url: 'https://private-public.internal/',
    policy: privateOk,
    expect: { allow: PUBLIC_V4 },
    note: 'allowed: DNS decides',
  },
]

t.test('target table', async (t) => {
  t.ok(CASES.length >= 25)
  for (const { url, policy = strict, expect, note } of CASES) {
    const name = `${url} ${JSON.stringify(policy)}${note === undefined ? '' : ` (${note})`}`
    if ('allow' in expect) {
      const target = await checkTarget(url, policy, fakeLookup)
      t.equal(target.address, expect.allow, `${name}: address`)
      if (expect.family !== undefined) t.equal(target.family, expect.family, `${name}: family`)
      t.equal(target.url.href, new URL(url).href, `${name}: url`)
    } else {
      const error = await checkTarget(url, policy, fakeLookup).then(
        () => undefined,
        (thrown: unknown) => thrown,
      )
      t.type(error, WebhookTargetError, name)
      if (!(error instanceof WebhookTargetError)) continue
      t.equal(error.reason, expect.reason, `${name}: reason (${error.message})`)
      if (expect.category !== undefined) t.equal(error.category, expect.category, `${name}: category`)
      t.notMatch(error.message, /hunter2|meta-data|_INFO/, `${name}: message leaks no credentials or path`)
    }
  }
})

t.test('IP literals are not resolved', async (t) => {
  lookups.length = 0
  await checkTarget('https://8.8.8.8/', strict, fakeLookup)
  await checkTarget(`https://[${PUBLIC_V6}]/`, strict, fakeLookup)
  await t.rejects(checkTarget('https://2130706433/', strict, fakeLookup), WebhookTargetError)
  t.same(lookups, [])
  await checkTarget('https://hooks.example.com/', strict, fakeLookup)
  t.same(lookups, ['hooks.example.com'])
})

t.test('WHATWG URL normalizes numeric IPv4 hosts before the check', async (t) => {
  for (const host of ['2130706433', '0x7f.0.0.1', '017700000001', '127.1', '0x7f000001']) {
    t.equal(new URL(`http://${host}/`).hostname, '127.0.0.1', host)
  }
  t.equal(new URL('http://[::ffff:127.0.0.1]/').hostname, '[::ffff:7f00:1]')
  t.equal(new URL('http://[0:0:0:0:0:ffff:169.254.169.254]/').hostname, '[::ffff:a9fe:a9fe]')
})

t.test('the error message omits the query and the credentials', async (t) => {
  const error = await checkTarget('https://10.0.0.1/hook?token=sekrit', strict, fakeLookup).catch(
    (e: unknown) => e,
  )
  t.type(error, WebhookTargetError)
  t.notMatch((error as Error).message, 'sekrit')
  t.match((error as Error).message, '10.0.0.1')
  const credentials = await checkTarget('https://admin:sekrit@8.8.8.8/', strict, fakeLookup).catch(
    (e: unknown) => e,
  )
  t.notMatch((credentials as Error).message, /sekrit|admin/)
})

t.test('classifyAddress', async (t) => {
  const table: Array<[string, AddressCategory]> = [
    ['1.1.1.1', 'public'],
    ['127.255.255.254', 'loopback'],
    ['0.1.2.3', 'unspecified'],
    ['100.127.255.255', 'private'],
    ['100.128.0.0', 'public'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['172.15.255.255', 'public'],
    ['192.0.0.8', 'reserved'],
    ['192.168.255.255', 'private'],
    ['198.19.255.255', 'reserved'],
    ['198.20.0.0', 'public'],
    ['198.51.100.1', 'documentation'],
    ['239.255.255.255', 'multicast'],
    ['223.255.255.255', 'public'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:0:a00:1', 'private'],
    ['64:ff9b::c0a8:101', 'private'],
    ['64:ff9b:1::1', 'private'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['FE80::ABCD', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'private'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2::253', 'private'],
    ['ff00::', 'multicast'],
    ['100::1', 'reserved'],
    ['3fff::1', 'documentation'],
    ['4000::1', 'reserved'],
    ['2a00:1450:4001::200e', 'public'],
    ['1:2:3:4:5:6:7:8', 'reserved'],
    ['not an address', 'reserved'],
  ]
  for (const [address, category] of table) t.equal(classifyAddress(address), category, address)
})
