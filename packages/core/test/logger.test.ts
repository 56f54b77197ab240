import t from 'tap'
import {
  createLogger,
  isSecretFieldName,
  type LogLevel,
  REDACTED,
  redactFields,
  withLogFields,
} from '../src/index.js'

function capture(level?: LogLevel | 'silent') {
  const lines: Array<{ level: LogLevel; entry: Record<string, unknown> }> = []
  const logger = createLogger('test', {
    ...(level === undefined ? {} : { level }),
    now: () => new Date('2026-01-02T03:04:05.000Z'),
    write: (line, lineLevel) => lines.push({ level: lineLevel, entry: JSON.parse(line) }),
  })
  return { logger, lines }
}

t.test('writes one JSON object per line with time, level, logger and message', async (t) => {
  const { logger, lines } = capture('info')
  logger.info('started', { port: 4000 })
  t.same(lines, [
    {
      level: 'info',
      entry: { time: '2026-01-02T03:04:05.000Z', level: 'info', logger: 'test', msg: 'started', port: 4000 },
    },
  ])
})

t.test('honours the level', async (t) => {
  const { logger, lines } = capture('warn')
  logger.debug('d')
  logger.info('i')
  logger.warn('w')
  logger.error('e')
  t.same(
    lines.map((line) => line.entry.msg),
    ['w', 'e'],
  )
  const silent = capture('silent')
  silent.logger.error('nothing')
  t.equal(silent.lines.length, 0)
  const verbose = capture('debug')
  verbose.logger.debug('d')
  t.equal(verbose.lines.length, 1)
})

t.test('never prints secret-named fields, at any depth', async (t) => {
  const { logger, lines } = capture('info')
  logger.info('config', {
    key: 'k1',
    privateKey: '0xdeadbeef',
    ECDSA_PRIVATE_KEY: '0xabc',
    apiKey: 'sk_live',
    'x-api-key': 'hdr-value',
    secret: 's',
    clientSecret: 's2',
    password: 'p',
    token: 't',
    accessToken: 'at',
    authorization: 'Bearer x',
    headers: { Authorization: 'Bearer y', accept: 'json' },
    peers: [{ url: 'http://peer', apiKey: 'pk' }],
    chainId: 1,
    tokenAddress: '0x1',
  })
  const entry = lines[0]?.entry ?? {}
  const text = JSON.stringify(entry)
  for (const secret of [
    'k1',
    'deadbeef',
    '0xabc',
    'sk_live',
    'hdr-value',
    '"s"',
    's2',
    '"p"',
    '"t"',
    'at"',
    'Bearer',
    'pk',
  ]) {
    t.notOk(text.includes(secret), `${secret} is not printed`)
  }
  t.equal(entry.privateKey, REDACTED)
  t.same(entry.headers, { Authorization: REDACTED, accept: 'json' })
  t.same(entry.peers, [{ url: 'http://peer', apiKey: REDACTED }])
  t.equal(entry.chainId, 1, 'ordinary fields are kept')
  t.equal(entry.tokenAddress, '0x1', 'a name that merely starts with token is kept')
})

t.test('a field cannot impersonate the reserved members', async (t) => {
  const { logger, lines } = capture('info')
  logger.warn('real', { msg: 'fake', level: 'debug', logger: 'other' })
  t.equal(lines[0]?.entry.msg, 'real')
  t.equal(lines[0]?.entry.level, 'warn')
  t.equal(lines[0]?.entry.logger, 'test')
})

t.test('prints bigints, errors (redacted too), dates and cycles', async (t) => {
  const { logger, lines } = capture('info')
  const error = Object.assign(new Error('boom', { cause: new Error('root') }), { apiKey: 'leak' })
  const cycle: Record<string, unknown> = { name: 'loop' }
  cycle.self = cycle
  logger.error('failed', { amount: 10n ** 30n, error, at: new Date(0), cycle })
  const entry = lines[0]?.entry ?? {}
  t.equal(entry.amount, '1000000000000000000000000000000')
  t.match(entry.error, { name: 'Error', message: 'boom', apiKey: REDACTED, cause: { message: 'root' } })
  t.equal(entry.at, '1970-01-01T00:00:00.000Z')
  t.same(entry.cycle, { name: 'loop', self: '[circular]' })
  t.equal(lines[0]?.level, 'error')
})

t.test('isSecretFieldName and redactFields', async (t) => {
  for (const name of [
    'key',
    'privateKey',
    'apiKey',
    'API_KEY',
    'secret',
    'password',
    'token',
    'Authorization',
    'mnemonic',
  ]) {
    t.ok(isSecretFieldName(name), name)
  }
  for (const name of ['chainId', 'tokenSupport', 'keys', 'currency', 'url'])
    t.notOk(isSecretFieldName(name), name)
  t.same(redactFields({ a: { password: 'x' } }), { a: { password: REDACTED } })
})

t.test('withLogFields and base fields tag every line', async (t) => {
  const lines: string[] = []
  const base = createLogger('svc', { fields: { service: 'oracle' }, write: (line) => lines.push(line) })
  withLogFields(base, { chainId: 1 }).info('hello', { extra: true })
  t.match(JSON.parse(lines[0] ?? '{}'), { service: 'oracle', chainId: 1, extra: true, msg: 'hello' })
})

t.test('LOG_LEVEL picks the default level; an explicit level wins', async (t) => {
  const saved = process.env.LOG_LEVEL
  t.teardown(() => {
    if (saved === undefined) delete process.env.LOG_LEVEL
    else process.env.LOG_LEVEL = saved
  })
  process.env.LOG_LEVEL = 'DEBUG'
  const fromEnv = capture()
  fromEnv.logger.debug('shown')
  t.equal(fromEnv.lines.length, 1)
  const explicit = capture('error')
  explicit.logger.warn('hidden')
  t.equal(explicit.lines.length, 0)
  process.env.LOG_LEVEL = 'loud'
  const invalid = capture()
  invalid.logger.debug('hidden')
  invalid.logger.info('shown')
  t.same(
    invalid.lines.map((line) => line.entry.msg),
    ['shown'],
    'an unknown LOG_LEVEL falls back to info',
  )
})
