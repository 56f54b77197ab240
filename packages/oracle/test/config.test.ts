import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLogger, type LogFields, type Logger, silentLogger } from '@pontis/core'
import t, { type Test } from 'tap'
import { privateKeyToAccount } from 'viem/accounts'
import {
  assertSignerAllowed,
  DEFAULT_VAULT_SECRETS_DIR,
  loadOracleConfig,
  loadVaultSecrets,
  OracleConfigError,
  resolveOraclePort,
} from '../src/config.js'

// Anvil's published accounts #0 and #1: test keys with known addresses.
const KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const SIGNER_0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
const SIGNER_1 = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const SIGNER_2 = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'
const ANVIL_ACCOUNT_9 = '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720'
const PEER_KEY = 'peer-secret-3f9a'
const API_KEY = 'api-secret-77c1'

/** A logger that keeps every call, to assert on warnings. */
function recordingLogger() {
  const calls: Array<{ level: string; message: string; fields: LogFields | undefined }> = []
  const record =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      calls.push({ level, message, fields })
    }
  const logger: Logger = {
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
  }
  return { logger, calls }
}

/** Runs `load`, asserts it fails with OracleConfigError and returns the message. */
function failure(t: Test, load: () => unknown): string {
  try {
    load()
  } catch (error) {
    t.ok(error instanceof OracleConfigError, 'fails with OracleConfigError')
    t.equal((error as Error).name, 'OracleConfigError')
    return (error as Error).message
  }
  t.fail('expected an OracleConfigError')
  return ''
}

/** A production-like environment that passes, so each test changes one variable. */
const VALID: NodeJS.ProcessEnv = { ENVIRONMENT: 'testnet', ECDSA_PRIVATE_KEY: KEY_0 }

function configFailure(t: Test, env: NodeJS.ProcessEnv): string {
  return failure(t, () => loadOracleConfig({ ...VALID, ...env }, silentLogger))
}

t.test('defaults: local environment, development key with a warning, spec defaults', async (t) => {
  const { logger, calls } = recordingLogger()
  const config = loadOracleConfig({}, logger)
  t.equal(config.environment, 'local')
  t.equal(config.signing.module, 'raw-private-key')
  if (config.signing.module === 'raw-private-key') {
    t.equal(privateKeyToAccount(config.signing.privateKey).address, ANVIL_ACCOUNT_9, "anvil's account #9")
  }
  t.equal(config.apiKeys.size, 0)
  t.equal(config.port, 3000)
  t.equal(config.host, '127.0.0.1')
  t.same(config.rateLimit, { max: 2, windowMs: 1000 })
  t.same(config.peers, [])
  t.equal(config.peerTimeoutMs, 10000)
  t.equal(config.signers, undefined)
  t.equal(config.threshold, 1)
  t.equal(config.trustProxy, false)
  t.equal(config.proxyHops, 1)
  t.equal(config.metricsToken, undefined)
  t.equal(calls.length, 1, 'one warning: the development key')
  t.equal(calls[0]?.level, 'warn')
  t.match(calls[0]?.message, /ECDSA_PRIVATE_KEY is not set.*local environment only/)
  t.notMatch(JSON.stringify(calls), /2a871d0798f97d79/, 'the development key itself is not logged')
})

t.test('a variable set to an empty or blank value stops start-up, naming it', async (t) => {
  const variables = [
    'ENVIRONMENT',
    'SIGNING_MODULE',
    'ECDSA_PRIVATE_KEY',
    'API_KEYS',
    'HTTP_PORT',
    'PORT',
    'HOST',
    'UNAUTHENTICATED_RATE_LIMIT_MAX',
    'UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS',
    'PEERS',
    'PEER_REQUEST_TIMEOUT_MS',
    'ORACLE_SIGNERS',
    'ORACLE_SIGNERS_THRESHOLD',
    'TRUST_PROXY',
    'TRUST_PROXY_HOPS',
    'METRICS_TOKEN',
  ]
  for (const name of variables) {
    for (const blank of ['', ' ', '\n']) {
      t.equal(
        configFailure(t, { [name]: blank }),
        `${name} is set but empty; give it a value, or unset it for the default`,
        `${name}=${JSON.stringify(blank)}`,
      )
    }
  }
  t.equal(
    configFailure(t, { SIGNING_MODULE: 'aws-kms', AWS_KMS_KEY_ID: 'k', AWS_REGION: '' }),
    'AWS_REGION is set but empty; give it a value, or unset it for the default',
  )
  t.equal(
    failure(t, () => resolveOraclePort({ HTTP_PORT: '', PORT: '3100' })),
    'HTTP_PORT is set but empty; give it a value, or unset it for the default',
    'an empty HTTP_PORT does not fall through to PORT',
  )
})

t.test('an empty entry in a list stops start-up, naming the variable and the entry', async (t) => {
  const cases: Array<[string, string, number]> = [
    ['ORACLE_SIGNERS', `${SIGNER_0};;${SIGNER_1}`, 2],
    ['ORACLE_SIGNERS', `${SIGNER_0}; ;${SIGNER_1}`, 2],
    ['ORACLE_SIGNERS', `${SIGNER_0};`, 2],
    ['ORACLE_SIGNERS', `;${SIGNER_0}`, 1],
    ['ORACLE_SIGNERS', ';', 1],
    ['API_KEYS', `${API_KEY}:a;;other-key:b`, 2],
    ['API_KEYS', `${API_KEY}:a;`, 2],
    ['PEERS', `https://a.example|${PEER_KEY};;https://b.example|pass-through`, 2],
  ]
  for (const [name, value, position] of cases) {
    const message = configFailure(t, { [name]: value })
    t.equal(
      message,
      `${name} entry ${position} is empty; remove the extra ';' or put the missing entry there`,
      `${name}=${value}`,
    )
    t.notMatch(message, PEER_KEY, 'no secret in the message')
    t.notMatch(message, API_KEY, 'no secret in the message')
  }
})

t.test('every variable is parsed', async (t) => {
  const { logger, calls } = recordingLogger()
  const config = loadOracleConfig(
    {
      ENVIRONMENT: 'mainnet',
      SIGNING_MODULE: 'raw-private-key',
      ECDSA_PRIVATE_KEY: ` ${KEY_0.slice(2).toUpperCase()}\n`,
      API_KEYS: ` ${API_KEY}:partner-a ; other-key:ops:team `,
      HTTP_PORT: '4100',
      PORT: '4200',
      HOST: '0.0.0.0',
      UNAUTHENTICATED_RATE_LIMIT_MAX: '25',
      UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS: '60000',
      PEERS: `https://peer-a.example.com/oracle/|${PEER_KEY}; http://10.0.0.2:3000|pass-through`,
      PEER_REQUEST_TIMEOUT_MS: '2500',
      ORACLE_SIGNERS: `${SIGNER_0.toLowerCase()}; ${SIGNER_1} ;${SIGNER_2}`,
      ORACLE_SIGNERS_THRESHOLD: '2',
      TRUST_PROXY: 'true',
      TRUST_PROXY_HOPS: '2',
    },
    logger,
  )
  t.equal(config.environment, 'mainnet')
  t.same(config.signing, { module: 'raw-private-key', privateKey: KEY_0 }, 'key normalised to 0x-lowercase')
  t.same(
    [...config.apiKeys],
    [
      [API_KEY, 'partner-a'],
      ['other-key', 'ops:team'],
    ],
    'the key ends at the first colon; the label keeps the rest',
  )
  t.equal(config.port, 4100)
  t.equal(config.host, '0.0.0.0')
  t.same(config.rateLimit, { max: 25, windowMs: 60000 })
  t.same(config.peers, [
    { url: 'https://peer-a.example.com/oracle', credential: { kind: 'key', key: PEER_KEY } },
    { url: 'http://10.0.0.2:3000', credential: { kind: 'pass-through' } },
  ])
  t.equal(config.peerTimeoutMs, 2500)
  t.same(config.signers, [SIGNER_0, SIGNER_1, SIGNER_2], 'checksummed, in order')
  t.equal(config.threshold, 2)
  t.equal(config.trustProxy, true)
  t.equal(config.proxyHops, 2)
  t.same(calls, [], 'nothing to warn about')
})

t.test('aws-kms signing needs a key id and a region', async (t) => {
  const config = loadOracleConfig(
    {
      ENVIRONMENT: 'mainnet',
      SIGNING_MODULE: 'aws-kms',
      AWS_KMS_KEY_ID: 'alias/oracle',
      AWS_REGION: 'eu-west-1',
    },
    silentLogger,
  )
  t.same(config.signing, { module: 'aws-kms', keyId: 'alias/oracle', region: 'eu-west-1' })
  const kms = { ECDSA_PRIVATE_KEY: undefined, SIGNING_MODULE: 'aws-kms' }
  t.match(
    configFailure(t, { ...kms, AWS_REGION: 'eu-west-1' }),
    /^SIGNING_MODULE=aws-kms requires AWS_KMS_KEY_ID to be set$/,
  )
  t.match(configFailure(t, { ...kms, AWS_KMS_KEY_ID: 'alias/oracle' }), /requires AWS_REGION to be set$/)
  t.match(configFailure(t, { ...kms }), /requires AWS_KMS_KEY_ID and AWS_REGION to be set/)
  t.match(configFailure(t, { ...kms, AWS_KMS_KEY_ID: ' ' }), /^AWS_KMS_KEY_ID is set but empty/)
})

t.test('startup fails on an unknown SIGNING_MODULE, naming both allowed values', async (t) => {
  t.match(
    configFailure(t, { SIGNING_MODULE: 'gcp-kms' }),
    /SIGNING_MODULE must be one of raw-private-key, aws-kms, got "gcp-kms"/,
  )
})

t.test('startup fails on a missing or invalid ECDSA_PRIVATE_KEY outside local', async (t) => {
  t.match(
    configFailure(t, { ECDSA_PRIVATE_KEY: undefined }),
    /ECDSA_PRIVATE_KEY is required with SIGNING_MODULE=raw-private-key \(ENVIRONMENT "testnet"\)/,
  )
  t.match(configFailure(t, { ECDSA_PRIVATE_KEY: '' }), /^ECDSA_PRIVATE_KEY is set but empty/)
  t.match(configFailure(t, { ECDSA_PRIVATE_KEY: KEY_0.slice(0, 40) }), /must be 32 bytes of hex/)
  t.match(configFailure(t, { ECDSA_PRIVATE_KEY: `${KEY_0.slice(0, 65)}z` }), /contains non-hex characters/)
  t.match(configFailure(t, { ECDSA_PRIVATE_KEY: `0x${'0'.repeat(64)}` }), /not a valid secp256k1 private key/)
  t.match(configFailure(t, { ECDSA_PRIVATE_KEY: `0x${'f'.repeat(64)}` }), /not a valid secp256k1 private key/)
  // An explicit but invalid key is an error even where the development key could be used.
  t.match(
    configFailure(t, { ENVIRONMENT: 'local', ECDSA_PRIVATE_KEY: 'not-a-key' }),
    /must be 32 bytes of hex/,
  )
})

t.test('startup fails on malformed API_KEYS entries, naming the entry by position', async (t) => {
  t.match(
    configFailure(t, { API_KEYS: `a:x;${API_KEY}` }),
    /API_KEYS entry 2 must have the form <API_KEY>:<label>/,
  )
  t.match(configFailure(t, { API_KEYS: ':label' }), /API_KEYS entry 1 has an empty key/)
  t.match(configFailure(t, { API_KEYS: 'bad key:label' }), /API_KEYS entry 1 has .*a key with whitespace/)
  t.match(
    configFailure(t, { API_KEYS: 'schlüssel:label' }),
    /API_KEYS entry 1 has .*characters other than visible ASCII \(it could never be sent as x-api-key\)/,
  )
  t.match(configFailure(t, { API_KEYS: `${API_KEY}: ` }), /API_KEYS entry 1 has an empty label/)
  t.match(
    configFailure(t, { API_KEYS: `${API_KEY}:a;other:b; ${API_KEY}:c` }),
    /API_KEYS entries 1 and 3 have the same key/,
  )
})

t.test('startup fails on malformed PEERS entries', async (t) => {
  t.match(
    configFailure(t, { PEERS: `https://a.example|${PEER_KEY};${PEER_KEY}` }),
    /PEERS entry 2 must have the form/,
  )
  t.match(
    configFailure(t, { PEERS: `a.example.com|${PEER_KEY}` }),
    /PEERS entry 1: the base URL is not an absolute URL/,
  )
  t.match(
    configFailure(t, { PEERS: `ftp://a.example|${PEER_KEY}` }),
    /PEERS entry 1: the base URL must use http or https/,
  )
  t.match(
    configFailure(t, { PEERS: `https://user:pw@a.example|${PEER_KEY}` }),
    /must not contain a user name or password/,
  )
  t.match(
    configFailure(t, { PEERS: `https://a.example/?x=1|${PEER_KEY}` }),
    /must not have a query or fragment/,
  )
  t.match(
    configFailure(t, { PEERS: 'https://a.example| ' }),
    /PEERS entry 1 \(https:\/\/a\.example\) has an empty credential; give the peer's API key or "pass-through"/,
  )
  t.match(
    configFailure(t, { PEERS: `https://a.example/|${PEER_KEY};https://A.example|pass-through` }),
    /PEERS entries 1 and 2 both name https:\/\/a\.example/,
  )
  for (const spelling of ['Pass-Through', 'PASS-THROUGH']) {
    t.equal(
      configFailure(t, { PEERS: `https://a.example|${spelling}` }),
      'PEERS entry 1 (https://a.example): write the credential "pass-through" in lower case; any other spelling would be sent as a literal key',
      `${spelling} is not taken as a literal key`,
    )
  }
  const spaced = configFailure(t, { PEERS: `https://a.example|${PEER_KEY} extra` })
  t.equal(
    spaced,
    `PEERS entry 1 (https://a.example) has a credential with whitespace or characters other than visible ASCII; give the peer's API key or "pass-through"`,
  )
})

t.test('startup fails on numbers that are not positive whole numbers', async (t) => {
  const variables = [
    'UNAUTHENTICATED_RATE_LIMIT_MAX',
    'UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS',
    'PEER_REQUEST_TIMEOUT_MS',
    'TRUST_PROXY_HOPS',
  ]
  for (const name of variables) {
    for (const bad of ['0', '-1', '1.5', 'abc', '1e3']) {
      t.match(
        configFailure(t, { [name]: bad }),
        new RegExp(`^${name} must be a whole number from 1 to \\d+, got "${bad}"$`),
      )
    }
  }
  // Node timers cannot wait longer than 2^31-1 ms.
  t.match(configFailure(t, { PEER_REQUEST_TIMEOUT_MS: '2147483648' }), /from 1 to 2147483647/)
  t.match(configFailure(t, { TRUST_PROXY: 'yes' }), /TRUST_PROXY must be "true" or "false", got "yes"/)
})

t.test('port: HTTP_PORT, then PORT, then 3000; a bad port fails startup', async (t) => {
  t.equal(resolveOraclePort({}), 3000)
  t.equal(resolveOraclePort({ PORT: '3100' }), 3100)
  t.equal(resolveOraclePort({ HTTP_PORT: '3200', PORT: '3100' }), 3200)
  t.equal(resolveOraclePort({ HTTP_PORT: '0' }), 0, 'port 0 asks for any free port')
  for (const bad of ['x', '65536', '1.5', '0x50', '1e3', '8 0']) {
    t.match(
      failure(t, () => resolveOraclePort({ HTTP_PORT: bad })),
      /^HTTP_PORT must be a port number \(0-65535\)/,
    )
  }
  t.match(
    failure(t, () => resolveOraclePort({ PORT: '-1' })),
    /^PORT must be a port number \(0-65535\), got "-1"$/,
  )
  t.match(
    configFailure(t, { HTTP_PORT: '99999' }),
    /HTTP_PORT must be a port number/,
    'loadOracleConfig checks it too',
  )
})

t.test('ORACLE_SIGNERS: duplicates in any letter case collapse to one entry', async (t) => {
  const config = loadOracleConfig(
    {
      ...VALID,
      ORACLE_SIGNERS: `${SIGNER_0};${SIGNER_0.toLowerCase()};${SIGNER_1};0x${SIGNER_0.slice(2).toUpperCase()}`,
      ORACLE_SIGNERS_THRESHOLD: '2',
    },
    silentLogger,
  )
  t.same(config.signers, [SIGNER_0, SIGNER_1])
  t.match(
    configFailure(t, {
      ORACLE_SIGNERS: `${SIGNER_0};${SIGNER_0.toLowerCase()}`,
      ORACLE_SIGNERS_THRESHOLD: '2',
    }),
    /ORACLE_SIGNERS_THRESHOLD 2 exceeds the 1 unique ORACLE_SIGNERS entry$/,
    'the threshold is checked against unique entries',
  )
})

t.test('startup fails when ORACLE_SIGNERS_THRESHOLD is not an integer', async (t) => {
  for (const bad of ['1.5', 'abc', '2x', '+2', '1e1']) {
    const message = configFailure(t, { ORACLE_SIGNERS_THRESHOLD: bad })
    t.equal(message, `ORACLE_SIGNERS_THRESHOLD must be an integer of at least 1, got "${bad}"`)
  }
})

t.test('startup fails when ORACLE_SIGNERS_THRESHOLD is below 1', async (t) => {
  t.match(configFailure(t, { ORACLE_SIGNERS_THRESHOLD: '0' }), /must be an integer of at least 1, got "0"/)
  t.match(configFailure(t, { ORACLE_SIGNERS_THRESHOLD: '-1' }), /must be an integer of at least 1, got "-1"/)
  t.match(
    configFailure(t, { ORACLE_SIGNERS: SIGNER_0, ORACLE_SIGNERS_THRESHOLD: '0' }),
    /at least 1, got "0"/,
    'with an allowlist too',
  )
})

t.test('startup fails when the threshold exceeds the unique allowlist entries', async (t) => {
  t.match(
    configFailure(t, { ORACLE_SIGNERS: `${SIGNER_0};${SIGNER_1}`, ORACLE_SIGNERS_THRESHOLD: '3' }),
    /^ORACLE_SIGNERS_THRESHOLD 3 exceeds the 2 unique ORACLE_SIGNERS entries$/,
  )
  const config = loadOracleConfig({ ...VALID, ORACLE_SIGNERS: `${SIGNER_0};${SIGNER_1}` }, silentLogger)
  t.equal(config.threshold, 1, 'the default threshold fits any allowlist')
  const equal = loadOracleConfig(
    { ...VALID, ORACLE_SIGNERS: `${SIGNER_0};${SIGNER_1}`, ORACLE_SIGNERS_THRESHOLD: '2' },
    silentLogger,
  )
  t.equal(equal.threshold, 2, 'a threshold equal to the allowlist size is allowed')
})

t.test('startup fails when an allowlist entry is not a valid address', async (t) => {
  t.match(
    configFailure(t, { ORACLE_SIGNERS: `${SIGNER_0};0x1234` }),
    /^ORACLE_SIGNERS entry 2 is not a valid address: "0x1234"$/,
  )
  t.match(
    configFailure(t, { ORACLE_SIGNERS: 'alice' }),
    /ORACLE_SIGNERS entry 1 is not a valid address: "alice"/,
  )
  t.match(
    configFailure(t, { ORACLE_SIGNERS: SIGNER_0.slice(2) }),
    /entry 1 is not a valid address/,
    'the 0x prefix is required',
  )
})

t.test('ORACLE_SIGNERS: a mixed-case entry must carry a valid EIP-55 checksum', async (t) => {
  // SIGNER_1 with the case of one letter flipped: the same address, a wrong checksum.
  const flipped = SIGNER_1.replace('C51812dc', 'c51812dc')
  t.not(flipped, SIGNER_1)
  t.equal(
    configFailure(t, { ORACLE_SIGNERS: `${SIGNER_0};${flipped}` }),
    `ORACLE_SIGNERS entry 2 has a wrong EIP-55 checksum: "${flipped}" (checksummed it would read ${SIGNER_1}); check the address, or write it in lower case`,
  )
  const config = loadOracleConfig(
    {
      ...VALID,
      ORACLE_SIGNERS: `${SIGNER_0};${SIGNER_1.toLowerCase()};0x${SIGNER_2.slice(2).toUpperCase()}`,
    },
    silentLogger,
  )
  t.same(
    config.signers,
    [SIGNER_0, SIGNER_1, SIGNER_2],
    'checksummed, all lower case and all upper case pass',
  )
})

t.test('startup fails when an allowlist entry is the zero address', async (t) => {
  t.match(
    configFailure(t, { ORACLE_SIGNERS: `${SIGNER_0};0x0000000000000000000000000000000000000000` }),
    /^ORACLE_SIGNERS entry 2 is the zero address, which cannot sign$/,
  )
})

t.test('startup fails when the local signer is not in the allowlist', async (t) => {
  const config = loadOracleConfig({ ...VALID, ORACLE_SIGNERS: `${SIGNER_1};${SIGNER_2}` }, silentLogger)
  t.match(
    failure(t, () => assertSignerAllowed(config, SIGNER_0)),
    new RegExp(`^the local signer ${SIGNER_0} is not in ORACLE_SIGNERS \\(${SIGNER_1}, ${SIGNER_2}\\)`),
  )
  t.doesNotThrow(() => assertSignerAllowed(config, SIGNER_1))
  t.doesNotThrow(
    () => assertSignerAllowed(config, SIGNER_2.toLowerCase() as `0x${string}`),
    'any letter case',
  )
  const open = loadOracleConfig(VALID, silentLogger)
  t.doesNotThrow(() => assertSignerAllowed(open, SIGNER_0), 'without an allowlist every signer is allowed')
})

t.test('a threshold without an allowlist logs a startup warning and is ignored', async (t) => {
  const { logger, calls } = recordingLogger()
  const config = loadOracleConfig({ ...VALID, ORACLE_SIGNERS_THRESHOLD: '3' }, logger)
  t.equal(config.signers, undefined)
  t.same(calls, [
    {
      level: 'warn',
      message: 'ORACLE_SIGNERS_THRESHOLD is set but ORACLE_SIGNERS is not: the threshold is ignored',
      fields: { threshold: 3 },
    },
  ])
  const quiet = recordingLogger()
  loadOracleConfig(VALID, quiet.logger)
  t.same(quiet.calls, [], 'no warning when the threshold is not set')
})

t.test('METRICS_TOKEN: at least 24 visible ASCII characters, never shown in a message', async (t) => {
  const token = 'metrics-token-0123456789abcdef'
  t.equal(loadOracleConfig({ ...VALID, METRICS_TOKEN: ` ${token} ` }, silentLogger).metricsToken, token)
  t.equal(loadOracleConfig(VALID, silentLogger).metricsToken, undefined, 'unset by default')
  for (const bad of ['short-token', `${token.slice(0, 12)} ${token.slice(12)}`, `${token}é`]) {
    const message = configFailure(t, { METRICS_TOKEN: bad })
    t.equal(
      message,
      'METRICS_TOKEN must be at least 24 visible ASCII characters without spaces (for example: openssl rand -base64 32)',
    )
    t.notMatch(message, bad.slice(0, 8), 'the value is not in the message')
  }
})

t.test('TRUST_PROXY_HOPS without TRUST_PROXY=true warns that it has no effect', async (t) => {
  const { logger, calls } = recordingLogger()
  loadOracleConfig({ ...VALID, TRUST_PROXY_HOPS: '2' }, logger)
  t.same(calls, [
    {
      level: 'warn',
      message: 'TRUST_PROXY_HOPS is set but TRUST_PROXY is not "true": forwarding headers are ignored',
      fields: { proxyHops: 2 },
    },
  ])
  const quiet = recordingLogger()
  loadOracleConfig({ ...VALID, TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '2' }, quiet.logger)
  t.same(quiet.calls, [], 'no warning when the proxy is trusted')
})

t.test('secret values never appear in error messages or logs', async (t) => {
  const lines: string[] = []
  const logger = createLogger('oracle', { level: 'debug', write: (line) => lines.push(line) })
  const secretKey = `0x${'ab'.repeat(31)}zz`
  const failing: NodeJS.ProcessEnv[] = [
    { ECDSA_PRIVATE_KEY: secretKey },
    { ECDSA_PRIVATE_KEY: `${KEY_0}00` },
    { API_KEYS: `${API_KEY}` },
    { API_KEYS: `${API_KEY}:` },
    { API_KEYS: `${API_KEY}:a;${API_KEY}:b` },
    { PEERS: `${PEER_KEY}` },
    { PEERS: `${PEER_KEY}|https://a.example` },
    { PEERS: `https://${PEER_KEY}:x@a.example|k` },
    { PEERS: `https://a.example|${PEER_KEY};https://a.example|${PEER_KEY}` },
    { PEERS: `https://a.example|${PEER_KEY} x` },
    { PEERS: `https://a.example|${PEER_KEY};;` },
    { API_KEYS: `${API_KEY}:a;;` },
  ]
  for (const env of failing) {
    const message = failure(t, () => loadOracleConfig({ ...VALID, ...env }, logger))
    for (const secret of [secretKey.slice(2, 20), KEY_0.slice(2, 20), API_KEY, PEER_KEY]) {
      t.notOk(message.includes(secret), `"${message}" does not contain a secret`)
    }
  }
  loadOracleConfig({ ...VALID, API_KEYS: `${API_KEY}:a`, PEERS: `https://a.example|${PEER_KEY}` }, logger)
  t.notMatch(
    lines.join('\n'),
    new RegExp(`${API_KEY}|${PEER_KEY}|${KEY_0.slice(2, 20)}`),
    'nothing logged holds one',
  )
})

t.test('vault secrets', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'oracle-vault-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))

  t.equal(DEFAULT_VAULT_SECRETS_DIR, '/vault/secrets')

  t.test('files named like variables and dotenv files are both read; set variables win', async (t) => {
    const dir = join(root, 'both')
    mkdirSync(dir)
    writeFileSync(join(dir, 'ECDSA_PRIVATE_KEY'), `${KEY_0}\n`)
    writeFileSync(join(dir, 'API_KEYS'), `${API_KEY}:from-file\r\n\n`)
    writeFileSync(
      join(dir, 'oracle.env'),
      [
        '# oracle secrets',
        '',
        `export PEERS="https://a.example|${PEER_KEY}" # peers`,
        "AWS_REGION='eu-west-1'",
        'HOST = 0.0.0.0',
        'PASSWORD=p#ss # a comment',
        'ESCAPED="line\\nnext \\"quoted\\""',
        'EMPTY=',
      ].join('\n'),
    )
    writeFileSync(join(dir, 'config'), 'ORACLE_SIGNERS_THRESHOLD=2\n')
    writeFileSync(join(dir, '.hidden'), 'not dotenv at all')
    mkdirSync(join(dir, 'SUBDIR'))
    symlinkSync(join(dir, 'config'), join(dir, 'LINKED'))

    const env = { HOST: '127.0.0.2', AWS_REGION: '', UNRELATED: 'kept' }
    const merged = loadVaultSecrets(env, dir)
    t.equal(merged.ECDSA_PRIVATE_KEY, KEY_0, 'trailing newline trimmed')
    t.equal(merged.API_KEYS, `${API_KEY}:from-file`, 'trailing newlines trimmed')
    t.equal(merged.PEERS, `https://a.example|${PEER_KEY}`, 'export prefix, double quotes and comment')
    t.equal(merged.AWS_REGION, 'eu-west-1', 'single quotes; a blank set variable does not win')
    t.equal(merged.HOST, '127.0.0.2', 'a variable set in env wins over the file')
    t.equal(merged.PASSWORD, 'p#ss', "a '#' inside an unquoted value is kept")
    t.equal(merged.ESCAPED, 'line\nnext "quoted"')
    t.equal(merged.EMPTY, '')
    t.equal(merged.ORACLE_SIGNERS_THRESHOLD, '2', 'a file with any other name is dotenv')
    t.equal(merged.LINKED, 'ORACLE_SIGNERS_THRESHOLD=2', 'symlinks to files are followed')
    t.equal(merged.UNRELATED, 'kept')
    t.notOk('SUBDIR' in merged, 'directories are skipped')
    t.same(env, { HOST: '127.0.0.2', AWS_REGION: '', UNRELATED: 'kept' }, 'the input is not modified')

    const config = loadOracleConfig({ ...merged, ENVIRONMENT: 'testnet' }, silentLogger)
    t.same(config.signing, { module: 'raw-private-key', privateKey: KEY_0 }, 'the vault key is used')
  })

  t.test('the directory comes from VAULT_SECRETS_DIR when not given', async (t) => {
    const dir = join(root, 'from-env')
    mkdirSync(dir)
    writeFileSync(join(dir, 'HOST'), '10.1.2.3')
    t.equal(loadVaultSecrets({ VAULT_SECRETS_DIR: dir }).HOST, '10.1.2.3')
  })

  t.test('a missing directory leaves env unchanged', async (t) => {
    const env = { HOST: 'h' }
    t.equal(loadVaultSecrets(env, join(root, 'missing')), env)
    t.equal(loadVaultSecrets({ VAULT_SECRETS_DIR: join(root, 'missing') }).HOST, undefined)
  })

  t.test('unreadable or malformed secrets fail startup without printing their content', async (t) => {
    const notDirectory = join(root, 'file')
    writeFileSync(notDirectory, 'x')
    t.match(
      failure(t, () => loadVaultSecrets({}, notDirectory)),
      /vault secrets path .* is not a directory/,
    )

    const malformed = join(root, 'malformed')
    mkdirSync(malformed)
    writeFileSync(join(malformed, 'secrets.env'), `GOOD=1\n${PEER_KEY}\n`)
    const message = failure(t, () => loadVaultSecrets({}, malformed))
    t.match(message, /secrets\.env, line 2: expected KEY=value/)
    t.notOk(message.includes(PEER_KEY))

    const unclosed = join(root, 'unclosed')
    mkdirSync(unclosed)
    writeFileSync(join(unclosed, 'secrets.env'), `A="${PEER_KEY}\n`)
    t.match(
      failure(t, () => loadVaultSecrets({}, unclosed)),
      /line 1: expected KEY=value/,
    )

    const conflict = join(root, 'conflict')
    mkdirSync(conflict)
    writeFileSync(join(conflict, 'API_KEYS'), `${API_KEY}:a`)
    writeFileSync(join(conflict, 'other.env'), `API_KEYS=${API_KEY}:b`)
    const conflictMessage = failure(t, () => loadVaultSecrets({}, conflict))
    t.match(conflictMessage, /give API_KEYS different values/)
    t.notOk(conflictMessage.includes(API_KEY))

    const dangling = join(root, 'dangling')
    mkdirSync(dangling)
    symlinkSync(join(root, 'nowhere'), join(dangling, 'ECDSA_PRIVATE_KEY'))
    t.match(
      failure(t, () => loadVaultSecrets({}, dangling)),
      /vault secrets file .*ECDSA_PRIVATE_KEY cannot be read/,
      'a link to a missing secret is an error, not a silently missing variable',
    )

    // A path below a file cannot be read (ENOTDIR), unlike a missing one; unlike permission bits this holds for root too.
    t.match(
      failure(t, () => loadVaultSecrets({}, join(notDirectory, 'secrets'))),
      /vault secrets directory .*file\/secrets cannot be read/,
    )
  })
})
