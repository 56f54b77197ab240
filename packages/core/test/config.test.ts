// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the config files' placeholders are written like template strings
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import {
  ConfigError,
  findConfigDir,
  hubSigningDomain,
  listEnvironments,
  loadChainsConfig,
  loadEnvironmentFile,
  readChoice,
  readFlag,
  readInteger,
  readPort,
  resolvePlaceholders,
  startupFailure,
  toPublicChainRecord,
} from '../src/index.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const fixtureConfigs = join(here, 'fixtures', 'configs')

/** A minimal valid chain entry for files written by tests. */
const chain = (overrides: Record<string, unknown> = {}) => ({
  id: 7001,
  name: 'alpha',
  displayName: 'Alpha',
  vmType: 'testvm',
  currency: { id: 'alp', symbol: 'ALP', name: 'Alpha coin', address: 'native', decimals: 9 },
  rpc: { url: 'http://127.0.0.1:9001' },
  ...overrides,
})
const hub = {
  hub: {
    chainId: 7001,
    name: 'alpha',
    oracleContract: '0x00000000000000000000000000000000000000aa',
    domain: { name: 'PontisOracle', version: '1' },
  },
}
const files = (environment: string, chains: unknown, hubFile: unknown = hub) => ({
  [`chains.${environment}.json`]: typeof chains === 'string' ? chains : JSON.stringify(chains, null, 2),
  [`chains.hub.${environment}.json`]: typeof hubFile === 'string' ? hubFile : JSON.stringify(hubFile),
})

/** The ConfigError a promise rejects with; anything else fails the test. */
async function configError(promise: Promise<unknown>): Promise<ConfigError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`)
  return error
}

t.test('loads the fixture environment with defaults applied and placeholders resolved', async (t) => {
  const config = await loadChainsConfig({ configDir: fixtureConfigs, environment: 'dev', env: {} })
  t.equal(config.environment, 'dev')
  t.equal(config.chainsFile, join(fixtureConfigs, 'chains.dev.json'))
  t.equal(config.hubFile, join(fixtureConfigs, 'chains.hub.dev.json'))
  t.same(config.plugins, { testvm: '../plugins/test-family.ts' })
  t.same(
    config.chains.map((entry) => entry.id),
    [7001, 7002],
  )
  const [alpha, beta] = config.chains
  t.equal(alpha?.rpc.url, 'http://127.0.0.1:9001', 'default used')
  t.same(alpha?.rpc.headers, { 'x-api-key': 'none' })
  t.equal(alpha?.depositEnabled, true, 'depositEnabled defaults to true')
  t.equal(alpha?.disabled, false, 'disabled defaults to false')
  t.equal(beta?.disabled, true, 'explicit value kept')
  t.equal(config.hub.oracleContract, '0x00000000000000000000000000000000000000aa')
  t.ok(Object.isFrozen(config.chains[0]), 'the loaded config is frozen')
})

t.test('ENVIRONMENT picks the files; variables override defaults', async (t) => {
  const config = await loadChainsConfig({
    configDir: fixtureConfigs,
    env: {
      ENVIRONMENT: 'dev',
      ALPHA_RPC_URL: 'https://alpha.example/rpc',
      DEV_ORACLE: `0x${'b'.repeat(40)}`,
    },
  })
  t.equal(config.environment, 'dev')
  t.equal(config.chains[0]?.rpc.url, 'https://alpha.example/rpc')
  t.equal(config.hub.oracleContract, `0x${'b'.repeat(40)}`)
})

t.test('the environment defaults to local', async (t) => {
  const dir = t.testdir(files('local', { plugins: {}, chains: [] }))
  const config = await loadChainsConfig({ configDir: dir, env: {} })
  t.equal(config.environment, 'local')
  t.same(config.chains, [])
})

t.test('every missing variable is named, with the file, the JSON path and the chain', async (t) => {
  const error = await configError(
    loadChainsConfig({ configDir: fixtureConfigs, environment: 'staging', env: {} }),
  )
  t.same([...error.missingVariables].sort(), [
    'DELTA_RPC_URL',
    'GAMMA_FALLBACK_RPC_URL',
    'GAMMA_RPC_URL',
    'STAGING_ORACLE_ADDRESS',
  ])
  t.match(error.message, "environment 'staging': 4 environment variables are not set")
  t.match(
    error.message,
    /chains\.staging\.json: GAMMA_RPC_URL is not set \(used at chains\[0\]\.rpc\.url \(chain 7101 gamma\)\)/,
  )
  t.match(
    error.message,
    'GAMMA_FALLBACK_RPC_URL is not set (used at chains[0].rpc.fallbackUrls[0] (chain 7101 gamma))',
  )
  t.match(error.message, 'DELTA_RPC_URL is not set (used at chains[1].rpc.url (chain 7102 delta))')
  t.match(
    error.message,
    /chains\.hub\.staging\.json: STAGING_ORACLE_ADDRESS is not set \(used at hub\.oracleContract\)/,
  )
  const issue = error.issues.find((item) => item.message.startsWith('DELTA_RPC_URL'))
  t.equal(issue?.file, join(fixtureConfigs, 'chains.staging.json'))
  t.equal(issue?.path, 'chains[1].rpc.url')
})

t.test('a variable used in several places lists every place; empty counts as unset', async (t) => {
  const dir = t.testdir(
    files('dev', {
      plugins: {},
      chains: [chain({ rpc: { url: '${SHARED_URL}', wsUrl: '${SHARED_URL}' } })],
    }),
  )
  const error = await configError(
    loadChainsConfig({ configDir: dir, environment: 'dev', env: { SHARED_URL: '' } }),
  )
  t.same(error.missingVariables, ['SHARED_URL'])
  t.match(
    error.message,
    'SHARED_URL is not set (used at chains[0].rpc.url (chain 7001 alpha), chains[0].rpc.wsUrl (chain 7001 alpha))',
  )
})

t.test('resolvePlaceholders: defaults, embedding, escapes and malformed placeholders', async (t) => {
  const env = { HOST: 'rpc.example', EMPTY: '' }
  const { value, problems } = resolvePlaceholders(
    {
      a: 'https://${HOST}/v1',
      b: '${MISSING:-fallback}',
      c: '${EMPTY:-used}',
      d: '${HOST:-unused}',
      e: 'cost $5 and $${LITERAL}',
      f: ['${HOST}', 7, true, null],
      g: '${MISSING:-}',
      h: 'http://${HOST}:${PORT:-8545}',
    },
    env,
  )
  t.same(problems, [])
  t.same(value, {
    a: 'https://rpc.example/v1',
    b: 'fallback',
    c: 'used',
    d: 'rpc.example',
    e: 'cost $5 and ${LITERAL}',
    f: ['rpc.example', 7, true, null],
    g: '',
    h: 'http://rpc.example:8545',
  })
  const malformed = resolvePlaceholders({ x: '${1BAD}', y: 'abc ${UNTERMINATED', z: '${A-B}' }, {})
  t.same(
    malformed.problems.map((problem) => problem.path),
    ['x', 'y', 'z'],
  )
  t.match(malformed.problems[0]?.message, "x has a malformed placeholder '${1BAD}'")
  t.match(malformed.problems[1]?.message, 'y has an unterminated placeholder')
})

t.test('malformed placeholders stop start-up with the file and path', async (t) => {
  const dir = t.testdir(files('dev', { plugins: {}, chains: [chain({ rpc: { url: '${not valid}' } })] }))
  const error = await configError(loadChainsConfig({ configDir: dir, environment: 'dev', env: {} }))
  t.match(
    error.message,
    /chains\.dev\.json: chains\[0\]\.rpc\.url has a malformed placeholder '\$\{not valid\}'/,
  )
  t.match(error.message, '(chain 7001 alpha)')
})

t.test('an unknown environment names the file and lists the environments found', async (t) => {
  const error = await configError(
    loadChainsConfig({ configDir: fixtureConfigs, environment: 'prod', env: {} }),
  )
  t.match(error.message, "unknown environment 'prod'")
  t.match(error.message, 'chains.prod.json does not exist')
  t.match(error.message, 'environments found in')
  t.match(error.message, 'dev, staging')
  t.same(await listEnvironments(fixtureConfigs), ['dev', 'staging'])
})

t.test('an environment without its hub file is refused', async (t) => {
  const dir = t.testdir({ 'chains.dev.json': JSON.stringify({ plugins: {}, chains: [] }) })
  const error = await configError(loadChainsConfig({ configDir: dir, environment: 'dev', env: {} }))
  t.match(error.message, 'no ')
  t.match(error.message, 'chains.hub.dev.json')
})

t.test('environment names cannot walk out of the directory', async (t) => {
  const error = await configError(
    loadChainsConfig({ configDir: fixtureConfigs, environment: '../dev', env: {} }),
  )
  t.match(error.message, "invalid environment name '../dev'")
})

t.test('malformed JSON names the file and the position', async (t) => {
  const broken = '{\n  "plugins": {},\n  "chains": [\n    { "id": 1, }\n  ]\n}\n'
  const dir = t.testdir(files('dev', broken))
  const error = await configError(loadChainsConfig({ configDir: dir, environment: 'dev', env: {} }))
  t.match(error.message, /chains\.dev\.json is not valid JSON: .+ at line 4, column 16 \(position 48\)/)
  const emptyDir = t.testdir(files('dev', { plugins: {}, chains: [] }, ''))
  const empty = await configError(loadChainsConfig({ configDir: emptyDir, environment: 'dev', env: {} }))
  t.match(empty.message, /chains\.hub\.dev\.json is not valid JSON/)
})

t.test('shape errors name the chain and the field; every error is reported', async (t) => {
  const dir = t.testdir(
    files(
      'dev',
      {
        plugins: {},
        chains: [
          chain({
            currency: { id: 'alp', symbol: 'ALP', name: 'Alpha', address: 'native', decimals: 1.5 },
            depositEnabled: 'yes',
          }),
          chain({ id: 0, name: 'Beta Chain', rpc: {} }),
          chain({ id: 7003, name: 'gamma', displayName: undefined, rpcUrl: 'http://typo' }),
        ],
      },
      { hub: { ...hub.hub, oracleContract: '0x1234', domain: { name: 'PontisOracle' } } },
    ),
  )
  const error = await configError(loadChainsConfig({ configDir: dir, environment: 'dev', env: {} }))
  const messages = error.issues.map((issue) => issue.message)
  t.match(
    messages,
    [
      'chains[0].depositEnabled must be a boolean (chain 7001 alpha)',
      'chains[0].currency.decimals must be an integer (chain 7001 alpha)',
    ].map((text) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))),
  )
  t.ok(messages.includes('chains[0].currency.decimals must be an integer (chain 7001 alpha)'))
  t.ok(messages.includes('chains[0].depositEnabled must be a boolean (chain 7001 alpha)'))
  t.ok(messages.includes('chains[1].rpc.url is required (chain 0 Beta Chain)'))
  t.ok(messages.some((message) => /^chains\[1\]\.id must be >= 1/.test(message)))
  t.ok(messages.some((message) => /^chains\[1\]\.name does not match/.test(message)))
  t.ok(messages.includes('chains[2].displayName is required (chain 7003 gamma)'))
  t.ok(messages.includes('chains[2].rpcUrl is not a known field (chain 7003 gamma)'))
  t.ok(messages.some((message) => /^hub\.oracleContract does not match/.test(message)))
  t.ok(messages.includes('hub.domain.version is required'))
  t.match(error.message, /chains\.hub\.dev\.json: hub\.domain\.version is required/)
})

t.test('the old erc20Currencies key stops start-up in one line naming the new key', async (t) => {
  const token = { id: 'tok', symbol: 'TOK', name: 'Token', address: 'tok', decimals: 6 }
  const dir = t.testdir(
    files('dev', {
      plugins: {},
      chains: [
        chain({ erc20Currencies: [token] }),
        chain({ id: 7002, name: 'beta', erc20Currencies: [token] }),
      ],
    }),
  )
  const error = await configError(loadChainsConfig({ configDir: dir, environment: 'dev', env: {} }))
  t.match(
    error.message,
    /chains\.dev\.json: chains\[0\]\.erc20Currencies, chains\[1\]\.erc20Currencies: 'erc20Currencies' was renamed to 'currencies' \(the same key for every family\); rename it$/,
  )
  t.notMatch(error.message, /\n/, 'one line')
})

t.test('required fields of a chain', async (t) => {
  const dir = t.testdir(files('dev', { plugins: {}, chains: [{ name: 'alpha' }] }))
  const error = await configError(loadChainsConfig({ configDir: dir, environment: 'dev', env: {} }))
  const messages = error.issues.map((issue) => issue.message)
  for (const field of ['id', 'displayName', 'vmType', 'currency', 'rpc']) {
    t.ok(messages.includes(`chains[0].${field} is required (chain alpha)`), field)
  }
})

t.test('findConfigDir walks up to the nearest configs/ with chains files', async (t) => {
  const root = t.testdir({
    configs: files('local', { plugins: {}, chains: [] }),
    packages: { service: { src: {} } },
    empty: { configs: { 'readme.txt': 'no chains here' } },
  })
  t.equal(await findConfigDir(join(root, 'packages', 'service', 'src')), join(root, 'configs'))
  t.equal(
    await findConfigDir(join(root, 'empty')),
    join(root, 'configs'),
    'skips a configs/ without chains files',
  )
  const config = await loadChainsConfig({ cwd: join(root, 'packages', 'service'), env: {} })
  t.equal(config.configDir, resolve(root, 'configs'))
  // The repository's own configs/ is found from this package.
  t.equal(await findConfigDir(here), resolve(here, '..', '..', '..', 'configs'))
})

t.test('toPublicChainRecord drops rpc and plugin and keeps the rest', async (t) => {
  const config = await loadChainsConfig({
    configDir: fixtureConfigs,
    environment: 'dev',
    env: { ALPHA_RPC_URL: 'https://secret.example/v2/KEY123', ALPHA_API_KEY: 'k-999' },
  })
  const entry = config.chains[0]
  t.ok(entry)
  if (entry === undefined) return
  const record = toPublicChainRecord(entry)
  t.notOk('rpc' in record)
  t.notOk('plugin' in record)
  t.equal(record.id, 7001)
  t.same(record.protocol, { v2: { chainId: 'alpha', depository: 'tv1depository' } })
  t.same(record.erc20Currencies, entry.currencies, "the tokens are served as Relay's erc20Currencies")
  t.notOk('currencies' in record)
  const text = JSON.stringify(record)
  t.notOk(text.includes('KEY123'), 'no rpc secret')
  t.notOk(text.includes('k-999'), 'no header secret')
  const operational = toPublicChainRecord({
    ...entry,
    finality: { confirmations: 3 },
    indexer: { startBlock: '100' },
  })
  t.notOk('finality' in operational, 'the confirmation policy is private')
  t.notOk('indexer' in operational, 'so is the start block')
})

t.test('hubSigningDomain carries every EIP-712 domain member', async (t) => {
  const config = await loadChainsConfig({ configDir: fixtureConfigs, environment: 'dev', env: {} })
  t.same(hubSigningDomain(config.hub), {
    name: 'PontisOracle',
    version: '1',
    chainId: 7001,
    verifyingContract: '0x00000000000000000000000000000000000000aa',
  })
})

t.test('resolvePlaceholders tells which set variables each value came from', async (t) => {
  const { sources } = resolvePlaceholders(
    { a: 'https://${HOST}:${PORT:-1}/x', b: ['${HOST}', '${UNSET:-d}'], c: { d: 'plain' } },
    { HOST: 'rpc.example' },
  )
  t.same(sources, { a: ['HOST'], 'b[0]': ['HOST'] }, 'defaults and plain strings name no variable')
})

t.test('a bad value from a placeholder names its variable, in the file and on one line', async (t) => {
  const dir = t.testdir(files('dev', { plugins: {}, chains: [chain({ rpc: { url: '${ALPHA_RPC_URL}' } })] }))
  const error = await configError(
    loadChainsConfig({ configDir: dir, environment: 'dev', env: { ALPHA_RPC_URL: 'not-a-url' } }),
  )
  t.same(error.issues[0]?.variables, ['ALPHA_RPC_URL'])
  t.match(
    error.message,
    /chains\.dev\.json: chains\[0\]\.rpc\.url does not match .* \(the value comes from ALPHA_RPC_URL\)/,
  )
  const line = startupFailure(error)
  t.notMatch(line, /\n/, 'one line')
  t.match(line, /^environment 'dev': the chain config is invalid; .*ALPHA_RPC_URL/)
})

t.test('loadEnvironmentFile runs its extra check and names the variable behind a field', async (t) => {
  const dir = t.testdir({
    ...files('dev', { plugins: {}, chains: [chain()] }),
    'keys.dev.json': JSON.stringify({ key: '${THE_KEY}', other: 'x' }),
  })
  const error = await configError(
    loadEnvironmentFile({
      name: 'keys',
      configDir: dir,
      environment: 'dev',
      env: { THE_KEY: 'secret-value' },
      schema: { type: 'object' },
      check: () => [{ path: 'key', message: 'key is not usable' }],
    }),
  )
  t.match(
    error.oneLine(),
    /keys\.dev\.json is invalid; .*keys\.dev\.json: key is not usable \(the value comes from THE_KEY\)/,
  )
  t.notMatch(error.message, 'secret-value', 'the value itself is not shown')
})

t.test('startupFailure puts any error on one line', async (t) => {
  t.equal(startupFailure(new Error('first\n  second\n')), 'first; second')
  t.equal(startupFailure('plain'), 'plain')
  t.equal(
    startupFailure(new ConfigError('summary', [{ message: 'a' }, { file: '/x/y.json', message: 'b' }])),
    'summary; a; /x/y.json: b',
  )
})

t.test('environment readers: flags, choices, whole numbers and ports name the variable', async (t) => {
  t.equal(readFlag({}, 'F'), false)
  t.equal(readFlag({ F: ' ' }, 'F', true), true, 'blank is unset')
  t.equal(readFlag({ F: 'true' }, 'F'), true)
  t.equal(readFlag({ F: 'false' }, 'F', true), false)
  for (const bad of ['1', 'yes', 'TRUE', 'on'])
    t.throws(() => readFlag({ F: bad }, 'F'), {
      name: 'ConfigError',
      message: `F must be "true" or "false", got "${bad}"`,
    })
  t.equal(readChoice({ C: 'off' }, 'C', ['on', 'off']), 'off')
  t.equal(readChoice({}, 'C', ['on', 'off']), undefined)
  t.throws(() => readChoice({ C: 'no' }, 'C', ['on', 'off']), {
    message: 'C must be one of on, off, got "no"',
  })
  t.equal(readInteger({ N: '250' }, 'N', { min: 1, max: 1000 }), 250)
  for (const bad of ['0', '1001', '-5', '1e3', '0x10', '2.5', 'abc', '99999999999999999999'])
    t.throws(() => readInteger({ N: bad }, 'N', { min: 1, max: 1000, unit: ' of ms' }), {
      name: 'ConfigError',
      message: `N must be a whole number of ms from 1 to 1000, got "${bad}"`,
    })
  t.equal(readPort({ P: '0' }, 'P'), 0)
  t.throws(() => readPort({ P: '65536' }, 'P'), /P must be a whole number from 0 to 65535/)
  const long = 'x'.repeat(500)
  const error = t.throws(() => readFlag({ F: long }, 'F')) as Error
  t.ok(error.message.length < 150, 'a long value is not echoed in full')
})
