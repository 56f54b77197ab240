import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import {
  compileContracts,
  PACKAGE_DIR,
  readSources,
  renderOutputs,
  SOLC_SETTINGS,
} from '../scripts/compile.js'
import {
  PONTIS_CALL_EXECUTOR,
  PONTIS_DEPOSIT_RECEIVER,
  PONTIS_DEPOSITORY,
  PONTIS_MULTICALLER,
  PONTIS_ORACLE_HUB,
  PONTIS_USD,
} from '../src/artifacts.js'

t.test('recompiling gives byte-identical committed artifacts and abis.gen.ts', async (t) => {
  const artifacts = compileContracts()
  t.same(
    artifacts.map((artifact) => artifact.contractName),
    [
      'DevnetToken',
      'MockV3Aggregator',
      'PontisCallExecutor',
      'PontisDepositReceiver',
      'PontisDepository',
      'PontisMulticaller',
      'PontisOracleHub',
      'PontisUSD',
    ],
  )
  const outputs = renderOutputs(artifacts)
  for (const file of outputs) {
    const committed = readFileSync(join(PACKAGE_DIR, file.path), 'utf8')
    // A plain boolean keeps a 40 kB diff out of the report; the message says what to do.
    t.ok(committed === file.content, `${file.path} is up to date (run: npm run compile -w @pontis/devnet)`)
  }
  const written = readdirSync(join(PACKAGE_DIR, 'artifacts')).sort()
  t.same(
    written,
    [
      'DevnetToken.json',
      'MockV3Aggregator.json',
      'PontisCallExecutor.json',
      'PontisDepositReceiver.json',
      'PontisDepository.json',
      'PontisMulticaller.json',
      'PontisOracleHub.json',
      'PontisUSD.json',
    ],
    'no stale artifacts',
  )
})

t.test('artifacts record the source hash and compiler, and carry no metadata trailer', async (t) => {
  const sources = readSources()
  for (const name of [
    'PontisCallExecutor',
    'PontisDepositReceiver',
    'PontisDepository',
    'PontisMulticaller',
    'PontisOracleHub',
    'PontisUSD',
  ]) {
    const artifact = JSON.parse(readFileSync(join(PACKAGE_DIR, 'artifacts', `${name}.json`), 'utf8')) as {
      contractName: string
      sourceSha256: string
      solcVersion: string
      deployedBytecode: string
    }
    t.same(Object.keys(artifact), [
      'contractName',
      'abi',
      'bytecode',
      'deployedBytecode',
      'solcVersion',
      'sourceSha256',
    ])
    // The executor is created by the multicaller and lives in its source file.
    const file = name === 'PontisCallExecutor' ? 'PontisMulticaller.sol' : `${name}.sol`
    const source = sources.get(file) ?? ''
    t.equal(artifact.sourceSha256, createHash('sha256').update(source).digest('hex'))
    t.match(artifact.solcVersion, /^0\.8\.37\+commit\./)
    // With appendCBOR off the runtime code ends in the contract's own code, not a0 64 'ipfs'/'solc' CBOR.
    t.notMatch(artifact.deployedBytecode, /a264697066735822|a164736f6c6343/)
  }
  t.equal(SOLC_SETTINGS.evmVersion, 'cancun')
})

t.test('the typed exports match the artifacts', async (t) => {
  for (const artifact of [
    PONTIS_CALL_EXECUTOR,
    PONTIS_DEPOSIT_RECEIVER,
    PONTIS_DEPOSITORY,
    PONTIS_MULTICALLER,
    PONTIS_ORACLE_HUB,
    PONTIS_USD,
  ]) {
    const file = JSON.parse(
      readFileSync(join(PACKAGE_DIR, 'artifacts', `${artifact.contractName}.json`), 'utf8'),
    ) as { abi: unknown; bytecode: string; deployedBytecode: string }
    t.same(artifact.abi, file.abi)
    t.equal(artifact.bytecode, file.bytecode)
    t.equal(artifact.deployedBytecode, file.deployedBytecode)
  }
})

t.test('a compile error is reported with solc messages', async (t) => {
  const sources = new Map([
    [
      'Broken.sol',
      '// SPDX-License-Identifier: Apache-2.0\npragma solidity ^0.8.24;\ncontract Broken { function f() public { x = 1; } }\n',
    ],
  ])
  t.throws(() => compileContracts(sources), /solc reported 1 problem\(s\):[\s\S]*Undeclared identifier/)
})
