/**
 * Start-up of the whole service: configuration, vault secrets and the signer allowlist check, in
 * process and as the operator runs it (`main.ts` exits 1 with the reason).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeScriptArguments, silentLogger } from '@pontis/core'
import t from 'tap'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startOracleService } from '../src/index.js'

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const key = generatePrivateKey()
const address = privateKeyToAccount(key).address
const other = privateKeyToAccount(generatePrivateKey()).address
const emptyVault = mkdtempSync(join(tmpdir(), 'pontis-vault-empty-'))
t.teardown(() => rmSync(emptyVault, { recursive: true, force: true }))

t.test('the local signer must be in ORACLE_SIGNERS', async (t) => {
  await t.rejects(
    startOracleService({
      env: { ECDSA_PRIVATE_KEY: key, ORACLE_SIGNERS: `${other}`, VAULT_SECRETS_DIR: emptyVault },
      port: 0,
      logger: silentLogger,
    }),
    { name: 'OracleConfigError', message: `the local signer ${address} is not in ORACLE_SIGNERS` },
  )
  const service = await startOracleService({
    env: {
      ECDSA_PRIVATE_KEY: key,
      ORACLE_SIGNERS: `${other};${address}`,
      ORACLE_SIGNERS_THRESHOLD: '2',
      VAULT_SECRETS_DIR: emptyVault,
    },
    port: 0,
    logger: silentLogger,
  })
  t.teardown(() => service.close())
  const chains = (await (await fetch(`${service.url}/chains/v1`)).json()) as { signer: string }
  t.equal(chains.signer, address)
})

t.test('secrets come from the vault directory when the environment lacks them', async (t) => {
  const vault = mkdtempSync(join(tmpdir(), 'pontis-vault-'))
  t.teardown(() => rmSync(vault, { recursive: true, force: true }))
  writeFileSync(join(vault, 'ECDSA_PRIVATE_KEY'), `${key}\n`)
  writeFileSync(join(vault, 'oracle.env'), 'export API_KEYS="vault-key-1:ops"\n')
  const service = await startOracleService({
    env: { ENVIRONMENT: 'testnet-like-local', VAULT_SECRETS_DIR: vault },
    port: 0,
    logger: silentLogger,
    configDir: undefined,
  }).catch((error: unknown) => error)
  // An unknown environment fails on its chain files, after the vault key was accepted.
  t.match(String(service), /testnet-like-local/)
  const local = await startOracleService({ env: { VAULT_SECRETS_DIR: vault }, port: 0, logger: silentLogger })
  t.teardown(() => local.close())
  const chains = (await (await fetch(`${local.url}/chains/v1`)).json()) as { signer: string }
  t.equal(chains.signer, address, 'the key came from the vault, not the local development fallback')
  // The vault's API key bypasses the unauthenticated limit (2 per second).
  const statuses: number[] = []
  for (let attempt = 0; attempt < 5; attempt++) {
    const answer = await fetch(`${local.url}/chains/v1`, { headers: { 'x-api-key': 'vault-key-1' } })
    statuses.push(answer.status)
  }
  t.same(statuses, [200, 200, 200, 200, 200])
})

/** `address` with the letter case of its first hex letter flipped: mixed case, a wrong EIP-55 checksum. */
function mixedCaseWithWrongChecksum(address: string): string {
  const index = address.slice(2).search(/[a-fA-F]/) + 2
  const letter = address[index]!
  const flipped = letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase()
  const result = `${address.slice(0, index)}${flipped}${address.slice(index + 1)}`
  // Still mixed case (so it claims a checksum) after the flip.
  if (!/[a-f]/.test(result.slice(2)) || !/[A-F]/.test(result.slice(2))) throw new Error('not mixed case')
  return result
}

async function runMain(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, nodeScriptArguments(MAIN), {
    env: { PATH: process.env.PATH ?? '', HTTP_PORT: '0', VAULT_SECRETS_DIR: emptyVault, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const [code] = (await once(child, 'exit')) as [number | null]
  return { code, output }
}

t.test('main exits 1 naming the variable for each start-up failure', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ ORACLE_SIGNERS_THRESHOLD: '0' }, /ORACLE_SIGNERS_THRESHOLD must be an integer of at least 1/],
    [{ ORACLE_SIGNERS_THRESHOLD: '1.5' }, /ORACLE_SIGNERS_THRESHOLD must be an integer/],
    [
      { ORACLE_SIGNERS: `${address}`, ORACLE_SIGNERS_THRESHOLD: '2', ECDSA_PRIVATE_KEY: key },
      /ORACLE_SIGNERS_THRESHOLD/,
    ],
    [{ ORACLE_SIGNERS: '0x1234', ECDSA_PRIVATE_KEY: key }, /ORACLE_SIGNERS entry 1 is not a valid address/],
    [{ ORACLE_SIGNERS: `0x${'00'.repeat(20)}`, ECDSA_PRIVATE_KEY: key }, /zero address/],
    [{ ORACLE_SIGNERS: other, ECDSA_PRIVATE_KEY: key }, /is not in ORACLE_SIGNERS/],
    [{ ENVIRONMENT: 'testnet' }, /ECDSA_PRIVATE_KEY/],
    [
      { ORACLE_SIGNERS: `${address};${mixedCaseWithWrongChecksum(other)}`, ECDSA_PRIVATE_KEY: key },
      /oracle failed to start: ORACLE_SIGNERS entry 2 has a wrong EIP-55 checksum/,
    ],
    [
      { ORACLE_SIGNERS: `${address};;${other}`, ECDSA_PRIVATE_KEY: key },
      /oracle failed to start: ORACLE_SIGNERS entry 2 is empty/,
    ],
    [
      { ORACLE_SIGNERS: address, ORACLE_SIGNERS_THRESHOLD: '', ECDSA_PRIVATE_KEY: key },
      /oracle failed to start: ORACLE_SIGNERS_THRESHOLD is set but empty/,
    ],
    [{ SIGNING_MODULE: 'aws-kms' }, /AWS_KMS_KEY_ID and AWS_REGION/],
  ]
  const results = await Promise.all(cases.map(([env]) => runMain(env)))
  results.forEach((result, index) => {
    const [env, expected] = cases[index]!
    t.equal(result.code, 1, `exit code for ${JSON.stringify(Object.keys(env))}`)
    t.match(result.output, expected)
    t.notMatch(result.output, key.slice(2, 18), 'the key never reaches the output')
    const failed = result.output.split('\n').filter((line) => line.includes('oracle failed to start'))
    t.equal(failed.length, 1, 'one line says why')
    t.notMatch(result.output, /\n\s+at /, 'no stack trace')
  })
})

t.test('a threshold without an allowlist only warns', async (t) => {
  const service = await startOracleService({
    env: { ORACLE_SIGNERS_THRESHOLD: '2', ECDSA_PRIVATE_KEY: key, VAULT_SECRETS_DIR: emptyVault },
    port: 0,
    logger: silentLogger,
  })
  t.teardown(() => service.close())
  t.equal((await fetch(`${service.url}/lives/v1`)).status, 200)
})
