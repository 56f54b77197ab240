/**
 * `pontis deploy` against a bare anvil (no Pontis contracts, the deterministic-deployment proxy it
 * ships with): the first run deploys and verifies, the second sends nothing, the written config loads
 * and `npm start` serves it; a different contract at the address, a missing proxy and a
 * remote signer that signs for someone else are refused.
 */

import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadChainsConfig } from '@pontis/core'
import {
  ALLOCATOR,
  type AnvilInstance,
  DEPLOYER,
  ORACLE_SIGNER,
  PONTIS_CALL_EXECUTOR,
  PONTIS_DEPOSIT_RECEIVER,
  PONTIS_DEPOSITORY,
  PONTIS_MULTICALLER,
  PONTIS_ORACLE_HUB,
  SOLVER,
  startAnvil,
  USERS,
} from '@pontis/devnet'
import solc from 'solc'
import t, { type Test } from 'tap'
import type { Address, Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { startNpmStart } from '../../../test/helpers/npm-start.js'
import { within } from '../../../test/helpers/wait.js'
import {
  type ConfigEntries,
  DETERMINISTIC_DEPLOYER,
  type DeployResult,
  immutableSlots,
  runCli,
  writeDeploymentConfig,
} from '../src/index.js'

t.setTimeout(300_000)

const configsDir = fileURLToPath(new URL('../../../configs/', import.meta.url))
const bin = fileURLToPath(new URL('../bin/pontis.js', import.meta.url))
const contractsDir = fileURLToPath(new URL('../../devnet/contracts/', import.meta.url))
const CHAIN_NAME = 'pontis-deploy-test'
const RPC_VARIABLE = 'PONTIS_DEPLOY_TEST_RPC_URL'

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = (await response.json()) as { result?: T; error?: { message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result as T
}

interface Run {
  code: number
  stdout: string
  stderr: string
}

/** The exit code, with what the command printed when it is not 0 (so a failure explains itself). */
function exitOf(run: Run): string {
  return run.code === 0 ? 'exits 0' : `exits ${run.code}: ${run.stderr}`
}

async function deploy(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(
    ['deploy', ...args],
    {
      stdout: (text) => {
        stdout += text
      },
      stderr: (text) => {
        stderr += text
      },
    },
    env,
  )
  return { code, stdout, stderr }
}

type Printed = DeployResult & { config: ConfigEntries }

async function bareAnvil(t: Test): Promise<AnvilInstance> {
  const anvil = await startAnvil({ chainId: 31337 })
  t.teardown(() => anvil.stop())
  return anvil
}

t.test('the immutables found in the runtime code are where solc says they are', async (t) => {
  // Recompiled with the committed artifacts' settings, asking solc for the immutable references the
  // artifacts do not store: the PUSH32 placeholders found must be exactly those, for every contract.
  const contracts = [PONTIS_DEPOSITORY, PONTIS_DEPOSIT_RECEIVER, PONTIS_ORACLE_HUB, PONTIS_MULTICALLER]
  const sources: Record<string, { content: string }> = {}
  for (const artifact of contracts) {
    sources[`${artifact.contractName}.sol`] = {
      content: await readFile(join(contractsDir, `${artifact.contractName}.sol`), 'utf8'),
    }
  }
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      metadata: { bytecodeHash: 'none', appendCBOR: false },
      outputSelection: {
        '*': { '*': ['evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] },
      },
    },
  }
  interface Compiled {
    object: string
    immutableReferences: Record<string, Array<{ start: number; length: number }>>
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    contracts: Record<string, Record<string, { evm: { deployedBytecode: Compiled } }>>
  }
  for (const artifact of [...contracts, PONTIS_CALL_EXECUTOR]) {
    const file = artifact === PONTIS_CALL_EXECUTOR ? 'PontisMulticaller.sol' : `${artifact.contractName}.sol`
    const compiled = output.contracts[file]?.[artifact.contractName]?.evm.deployedBytecode
    t.equal(
      `0x${compiled?.object}`,
      artifact.deployedBytecode,
      `${artifact.contractName}: the committed artifact`,
    )
    const references = Object.values(compiled?.immutableReferences ?? {})
      .flat()
      .map((reference) => reference.start)
      .sort((a, b) => a - b)
    t.ok(references.length > 0, `${artifact.contractName} has immutables`)
    t.same(
      immutableSlots(artifact.deployedBytecode),
      references,
      `${artifact.contractName}: the immutables' offsets`,
    )
  }
})

t.test('a key deploys and verifies; a rerun does nothing; npm start serves the written config', async (t) => {
  const anvil = await bareAnvil(t)
  const proxyCode = await rpc<Hex>(anvil.rpcUrl, 'eth_getCode', [DETERMINISTIC_DEPLOYER, 'latest'])
  t.not(proxyCode, '0x', 'anvil ships the deterministic-deployment proxy')
  // An operator's folder: `npm start` started there finds the written configs/.
  const root = await mkdtemp(join(tmpdir(), 'pontis-deploy-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  const dir = join(root, 'configs')
  await mkdir(dir)
  const args = [
    '--rpc-url',
    anvil.rpcUrl,
    '--allocator',
    ALLOCATOR.address,
    '--chain-name',
    CHAIN_NAME,
    '--hub',
    '--hub-signer',
    ORACLE_SIGNER.address,
    '--write',
    dir,
    '--environment',
    'deploytest',
  ]
  const env = { PONTIS_DEPLOYER_PRIVATE_KEY: DEPLOYER.privateKey }

  const first = await deploy(args, env)
  t.equal(exitOf(first), 'exits 0')
  t.notMatch(first.stdout + first.stderr, DEPLOYER.privateKey.slice(2), 'the key is never printed')
  const printed = JSON.parse(first.stdout) as Printed
  t.same(
    printed.contracts.map((contract) => [contract.contractName, contract.status]),
    [
      ['PontisDepository', 'deployed'],
      ['PontisDepositReceiver', 'deployed'],
      ['PontisMulticaller', 'deployed'],
      ['PontisCallExecutor', 'deployed'],
      ['PontisOracleHub', 'deployed'],
    ],
  )
  t.match(first.stderr, /runtime code verified/)
  for (const contract of printed.contracts) {
    const code = await rpc<Hex>(anvil.rpcUrl, 'eth_getCode', [contract.address, 'latest'])
    t.ok(code.length > 2, `${contract.contractName} has code at ${contract.address}`)
  }
  t.equal(printed.config.chain.protocol.v2.depository, printed.depository)
  t.equal(printed.config.chain.contracts.relayReceiver, printed.relayReceiver)
  t.same(printed.config.hubFile?.hub, {
    chainId: 31337,
    name: CHAIN_NAME,
    oracleContract: printed.oracleHub,
    domain: { name: 'PontisOracle', version: '1' },
  })

  const nonceBefore = await rpc<Hex>(anvil.rpcUrl, 'eth_getTransactionCount', [DEPLOYER.address, 'latest'])
  const second = await deploy(args, env)
  t.equal(exitOf(second), 'exits 0')
  t.same(
    (JSON.parse(second.stdout) as Printed).contracts.map((contract) => contract.status),
    ['existing', 'existing', 'existing', 'existing', 'existing'],
  )
  t.match(second.stderr, /already deployed and verified; nothing was sent/)
  t.equal(
    await rpc<Hex>(anvil.rpcUrl, 'eth_getTransactionCount', [DEPLOYER.address, 'latest']),
    nonceBefore,
    'the rerun sent no transaction',
  )
  const withoutKey = await deploy(args, {})
  t.equal(withoutKey.code, 0, 'verifying needs no key')

  const serviceEnv = {
    ...process.env,
    ENVIRONMENT: 'deploytest',
    [RPC_VARIABLE]: anvil.rpcUrl,
    RATE_LIMITS: 'off',
    DATABASE_URL: '',
  }
  const config = await loadChainsConfig({ configDir: dir, environment: 'deploytest', env: serviceEnv })
  const chain = config.chains.find((entry) => entry.id === 31337)
  t.equal(chain?.protocol?.v2?.depository, printed.depository, 'core loads the written chain entry')
  t.equal(
    (chain?.plugin as { multicaller?: string } | undefined)?.multicaller,
    printed.multicaller,
    'the chain gets the fill multicaller',
  )
  t.equal(config.hub.oracleContract, printed.oracleHub, 'core loads the written hub file')

  // The done-when: `npm start` with ENVIRONMENT set to the written environment starts both
  // services on it (with local's solver and prices files, and the hub signer's key for the oracle).
  await copyFile(join(configsDir, 'solver.local.json'), join(dir, 'solver.deploytest.json'))
  await copyFile(join(configsDir, 'prices.local.json'), join(dir, 'prices.deploytest.json'))
  const stack = await startNpmStart(t, {
    cwd: root,
    env: {
      ...serviceEnv,
      ECDSA_PRIVATE_KEY: ORACLE_SIGNER.privateKey,
      INTENTS_PORT: '0',
      HTTP_PORT: '0',
      PONTIS_DATA_DIR: join(root, 'data'),
    },
  })
  t.match(stack.output(), /environment deploytest/, 'npm start runs the written environment')
  const chains = (await (await fetch(`${stack.urls.intents}/chains`)).json()) as {
    chains: Array<{ id: number; protocol?: { v2?: { depository?: string } } }>
  }
  t.equal(
    chains.chains.find((entry) => entry.id === 31337)?.protocol?.v2?.depository?.toLowerCase(),
    printed.depository.toLowerCase(),
    'GET /chains serves the deployed depository',
  )
  t.same(await (await fetch(`${stack.urls.oracle}/lives/v1`)).json(), { status: 'ok' }, 'the oracle is up')
  t.equal(await stack.stop(), '0', 'SIGTERM stops both services cleanly')

  // Other code at the depository's address is not "already deployed".
  const receiverCode = await rpc<Hex>(anvil.rpcUrl, 'eth_getCode', [printed.relayReceiver, 'latest'])
  await rpc(anvil.rpcUrl, 'anvil_setCode', [printed.depository, receiverCode])
  const clash = await deploy(args, env)
  t.equal(clash.code, 1)
  t.match(clash.stderr, `${printed.depository} already holds a different contract`)
})

t.test('a different salt gives other addresses; a tampered immutable is refused', async (t) => {
  const anvil = await bareAnvil(t)
  const env = { PONTIS_DEPLOYER_PRIVATE_KEY: DEPLOYER.privateKey }
  const base = ['--rpc-url', anvil.rpcUrl, '--allocator', ALLOCATOR.address]
  const a = await deploy([...base, '--salt', 'one'], env)
  const b = await deploy([...base, '--salt', 'two'], env)
  t.equal(exitOf(a), 'exits 0')
  t.equal(exitOf(b), 'exits 0')
  const first = JSON.parse(a.stdout) as Printed
  t.not(first.depository, (JSON.parse(b.stdout) as Printed).depository)
  // The same artifact with another allocator written into its immutable: not this deployment.
  const code = await rpc<Hex>(anvil.rpcUrl, 'eth_getCode', [first.depository, 'latest'])
  const tampered = code
    .toLowerCase()
    .replaceAll(ALLOCATOR.address.slice(2).toLowerCase(), SOLVER.address.slice(2).toLowerCase())
  t.not(tampered, code.toLowerCase())
  await rpc(anvil.rpcUrl, 'anvil_setCode', [first.depository, tampered])
  const rerun = await deploy([...base, '--salt', 'one'], env)
  t.equal(rerun.code, 1)
  t.match(rerun.stderr, /its immutable at byte \d+ is 0x/)
})

t.test('a constructor that reverts is a deployment error, not a crash', async (t) => {
  const anvil = await bareAnvil(t)
  const run = await deploy(
    [
      '--rpc-url',
      anvil.rpcUrl,
      '--allocator',
      ALLOCATOR.address,
      '--hub',
      '--hub-signer',
      '0x0000000000000000000000000000000000000000',
    ],
    { PONTIS_DEPLOYER_PRIVATE_KEY: DEPLOYER.privateKey },
  )
  t.equal(run.code, 1)
  t.match(run.stderr, 'PontisOracleHub could not be deployed')
  t.notMatch(run.stderr, anvil.rpcUrl, 'the RPC URL (often carrying a provider key) is not printed')
})

t.test('a chain without the deterministic-deployment proxy is refused, naming it', async (t) => {
  const anvil = await bareAnvil(t)
  await rpc(anvil.rpcUrl, 'anvil_setCode', [DETERMINISTIC_DEPLOYER, '0x'])
  const run = await deploy(['--rpc-url', anvil.rpcUrl, '--allocator', ALLOCATOR.address], {
    PONTIS_DEPLOYER_PRIVATE_KEY: DEPLOYER.privateKey,
  })
  t.equal(run.code, 1)
  t.match(run.stderr, `no deterministic-deployment proxy at ${DETERMINISTIC_DEPLOYER}`)
})

t.test('the key comes from a variable only; bad usage exits 2', async (t) => {
  const missing = await deploy(
    ['--rpc-url', 'http://127.0.0.1:1', '--allocator', ALLOCATOR.address, '--key-env', 'NOPE'],
    {},
  )
  t.equal(missing.code, 2)
  t.match(missing.stderr, 'NOPE is not set')
  const bad = await deploy(['--rpc-url', 'http://127.0.0.1:1', '--allocator', ALLOCATOR.address], {
    PONTIS_DEPLOYER_PRIVATE_KEY: 'secret-not-hex',
  })
  t.equal(bad.code, 2)
  t.notMatch(bad.stderr, 'secret-not-hex', 'a malformed key is not echoed')
  const flag = await deploy([
    '--rpc-url',
    'http://127.0.0.1:1',
    '--allocator',
    ALLOCATOR.address,
    '--private-key',
    '0x01',
  ])
  t.equal(flag.code, 2, 'there is no key flag')
  const hub = await deploy(['--rpc-url', 'http://127.0.0.1:1', '--allocator', ALLOCATOR.address, '--hub'])
  t.equal(hub.code, 2)
  t.match(hub.stderr, '--hub needs at least one --hub-signer')
  const twice = await deploy([
    '--rpc-url',
    'http://127.0.0.1:1',
    '--allocator',
    ALLOCATOR.address,
    '--hub',
    '--hub-signer',
    ORACLE_SIGNER.address,
    '--hub-signer',
    ORACLE_SIGNER.address.toLowerCase(),
  ])
  t.equal(twice.code, 2)
  t.match(twice.stderr, 'each signer once')
})

/**
 * A stand-in for web3signer/clef: a loopback JSON-RPC server answering `eth_signTransaction` with a
 * key it holds, the way those signers (and a KMS behind them) do.
 */
async function startStandInSigner(
  t: Test,
  privateKey: Hex,
  answer: 'raw' | 'clef' = 'raw',
): Promise<{ url: string; requests: unknown[] }> {
  const account = privateKeyToAccount(privateKey)
  const requests: unknown[] = []
  const server: Server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString()
    })
    request.on('end', async () => {
      const call = JSON.parse(body) as { id: number; method: string; params: [Record<string, string>] }
      requests.push(call)
      const [tx] = call.params
      const signed = await account.signTransaction({
        chainId: Number(tx.chainId),
        to: tx.to as Address,
        data: tx.data as Hex,
        nonce: Number(tx.nonce),
        gas: BigInt(tx.gas as string),
        value: BigInt(tx.value as string),
        ...(tx.maxFeePerGas
          ? {
              type: 'eip1559',
              maxFeePerGas: BigInt(tx.maxFeePerGas),
              maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas as string),
            }
          : { type: 'legacy', gasPrice: BigInt(tx.gasPrice as string) }),
      } as Parameters<typeof account.signTransaction>[0])
      response.setHeader('content-type', 'application/json')
      response.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: call.id,
          result: answer === 'raw' ? signed : { raw: signed, tx: {} },
        }),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  return { url: `http://127.0.0.1:${port}`, requests }
}

t.test('a remote signer over eth_signTransaction (a stand-in signer server) deploys', async (t) => {
  const anvil = await bareAnvil(t)
  const signer = USERS[0] as (typeof USERS)[number]
  const standIn = await startStandInSigner(t, signer.privateKey, 'clef')
  const run = await deploy([
    '--rpc-url',
    anvil.rpcUrl,
    '--allocator',
    ALLOCATOR.address,
    '--remote-signer',
    standIn.url,
    '--from',
    signer.address,
  ])
  t.equal(exitOf(run), 'exits 0')
  t.same(
    (JSON.parse(run.stdout) as Printed).contracts.map((contract) => contract.status),
    ['deployed', 'deployed', 'deployed', 'deployed'],
  )
  t.equal(
    standIn.requests.length,
    3,
    'one signature per contract sent (the executor is created by the multicaller)',
  )
  t.match(standIn.requests[0], { method: 'eth_signTransaction', params: [{ from: signer.address }] })

  // A signer that signs with another key than the account asked for is refused before sending.
  const other = await startStandInSigner(t, SOLVER.privateKey)
  const wrong = await deploy([
    '--rpc-url',
    anvil.rpcUrl,
    '--allocator',
    ALLOCATOR.address,
    '--salt',
    'another',
    '--remote-signer',
    other.url,
    '--from',
    signer.address,
  ])
  t.equal(wrong.code, 1)
  t.match(wrong.stderr, `signed with ${SOLVER.address}, not ${signer.address}`)
})

t.test('npx pontis deploy runs as a process with the key in its environment', async (t) => {
  const anvil = await bareAnvil(t)
  const child = spawn(
    process.execPath,
    [bin, 'deploy', '--rpc-url', anvil.rpcUrl, '--allocator', ALLOCATOR.address],
    {
      env: { ...process.env, PONTIS_DEPLOYER_PRIVATE_KEY: DEPLOYER.privateKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const [code] = await within('pontis deploy to exit', once(child, 'exit'), { lastSeen: () => stderr })
  t.equal(code, 0, stderr)
  const printed = JSON.parse(stdout) as Printed
  t.equal(printed.contracts.length, 4)
  t.ok(printed.contracts.every((contract) => contract.status === 'deployed'))
  t.notMatch(stdout + stderr, DEPLOYER.privateKey.slice(2), 'the key is never printed')
})

t.test('--write updates an existing chain entry and keeps everything else', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pontis-deploy-write-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await copyFile(join(configsDir, 'chains.local.json'), join(dir, 'chains.copy.json'))
  await copyFile(join(configsDir, 'chains.hub.local.json'), join(dir, 'chains.hub.copy.json'))
  const before = JSON.parse(await readFile(join(dir, 'chains.copy.json'), 'utf8')) as {
    chains: Array<Record<string, unknown>>
  }
  const depository = '0x1111111111111111111111111111111111111111'
  const relayReceiver = '0x2222222222222222222222222222222222222222'
  const multicaller = '0x3333333333333333333333333333333333333333'
  const oracleContract = '0x4444444444444444444444444444444444444444'
  const written = await writeDeploymentConfig(dir, 'copy', {
    chain: {
      id: 31338,
      name: 'ignored-for-an-existing-entry',
      protocol: { v2: { chainId: 'ignored-for-an-existing-entry', depository } },
      contracts: { relayReceiver },
      plugin: { multicaller },
    },
    hubFile: {
      hub: {
        chainId: 31338,
        name: 'pontis-local-b',
        oracleContract,
        domain: { name: 'PontisOracle', version: '1' },
      },
    },
  })
  t.equal(written.createdChain, false)
  const after = JSON.parse(await readFile(join(dir, 'chains.copy.json'), 'utf8')) as typeof before
  t.equal(after.chains.length, before.chains.length, 'no chain added or removed')
  const index = before.chains.findIndex((chain) => chain.id === 31338)
  const original = before.chains[index] as { name: string; contracts: { weth: string } }
  t.match(after.chains[index], {
    name: original.name,
    protocol: { v2: { chainId: 'pontis-local-b', depository } },
    contracts: { relayReceiver, weth: original.contracts.weth },
    plugin: { multicaller, confirmations: 1 },
  })
  t.same(
    after.chains.filter((_, position) => position !== index),
    before.chains.filter((_, position) => position !== index),
    'the other chains are untouched',
  )
  const hub = JSON.parse(await readFile(join(dir, 'chains.hub.copy.json'), 'utf8')) as Record<string, unknown>
  t.ok(typeof hub.$comment === 'string', 'the hub file keeps its comment')
  t.match(hub.hub, { chainId: 31338, oracleContract })
  const config = await loadChainsConfig({ configDir: dir, environment: 'copy', env: {} })
  t.equal(config.chains.find((chain) => chain.id === 31338)?.protocol?.v2?.depository, depository)
})
