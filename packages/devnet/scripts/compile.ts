/**
 * Compiles `contracts/*.sol` with solc-js into `artifacts/<Name>.json` and the typed module
 * `src/abis.gen.ts`. The output is reproducible (fixed settings, sorted sources, no metadata hash), so
 * a test can recompile in memory and demand byte-identical files.
 *
 * Run: `npm run compile -w @pontis/devnet`.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import solc from 'solc'

/** The package root (`packages/devnet`). */
export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url))
/** Where the Solidity sources live. */
export const CONTRACTS_DIR = join(PACKAGE_DIR, 'contracts')
/** Where `<Name>.json` artifacts are written. */
export const ARTIFACTS_DIR = join(PACKAGE_DIR, 'artifacts')
/** The generated TypeScript module with `as const` ABIs and bytecode. */
export const ABIS_MODULE_PATH = join(PACKAGE_DIR, 'src', 'abis.gen.ts')

/** One ABI entry as solc emits it (kept loose: the artifact stores it verbatim). */
export type AbiEntry = Record<string, unknown>

/** A compiled contract as committed under `artifacts/`. */
export interface Artifact {
  contractName: string
  abi: AbiEntry[]
  bytecode: `0x${string}`
  deployedBytecode: `0x${string}`
  solcVersion: string
  sourceSha256: string
}

/** A file to write: path relative to the package root, and its exact content. */
export interface OutputFile {
  path: string
  content: string
}

interface SolcMessage {
  severity: 'error' | 'warning' | 'info'
  formattedMessage: string
}

interface SolcOutput {
  errors?: SolcMessage[]
  contracts?: Record<
    string,
    Record<
      string,
      { abi: AbiEntry[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }
    >
  >
}

/** Fixed compiler settings: changing any of them changes the committed artifacts. */
export const SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none', appendCBOR: false },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const

/** Reads every `.sol` file of `contracts/`, sorted by name so the compiler input is stable. */
export function readSources(directory = CONTRACTS_DIR): Map<string, string> {
  const names = readdirSync(directory)
    .filter((name) => name.endsWith('.sol'))
    .sort()
  return new Map(names.map((name) => [name, readFileSync(join(directory, name), 'utf8')]))
}

const requireFromPackage = createRequire(join(PACKAGE_DIR, 'package.json'))

/**
 * Reads an `import "<npm package>/<path>"` (e.g. `@chainlink/contracts/src/v0.8/...`) from the package's
 * pinned dependencies, and records it so the artifact can carry its source hash.
 */
function importFromPackages(imported: Map<string, string>) {
  return (path: string): { contents: string } | { error: string } => {
    try {
      const contents = readFileSync(requireFromPackage.resolve(path), 'utf8')
      imported.set(path, contents)
      return { contents }
    } catch (error) {
      return { error: `cannot resolve ${path}: ${error instanceof Error ? error.message : String(error)}` }
    }
  }
}

/**
 * Compiles the sources in memory. Warnings fail the build as errors do: the contracts are small enough
 * to keep warning-free, and a warning in a payout contract deserves a look. Imports of npm packages
 * (`@chainlink/contracts/...`) resolve to the versions pinned in package.json.
 */
export function compileContracts(localSources: Map<string, string> = readSources()): Artifact[] {
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries([...localSources].map(([name, content]) => [name, { content }])),
    settings: SOLC_SETTINGS,
  }
  const compile = solc.compile as (input: string, callbacks: object) => string
  const imported = new Map<string, string>()
  const output = JSON.parse(
    compile(JSON.stringify(input), { import: importFromPackages(imported) }),
  ) as SolcOutput
  const sources = new Map([...localSources, ...imported])
  const problems = (output.errors ?? []).filter((message) => message.severity !== 'info')
  if (problems.length > 0) {
    throw new Error(
      `solc reported ${problems.length} problem(s):\n${problems.map((m) => m.formattedMessage).join('\n')}`,
    )
  }
  const solcVersion = (solc.version as () => string)()
  const artifacts: Artifact[] = []
  for (const [sourceName, contracts] of Object.entries(output.contracts ?? {})) {
    const source = sources.get(sourceName)
    if (source === undefined) throw new Error(`solc returned an unknown source ${sourceName}`)
    const sourceSha256 = createHash('sha256').update(source).digest('hex')
    for (const [contractName, contract] of Object.entries(contracts)) {
      // Interfaces and abstract contracts have no bytecode: nothing to deploy, nothing to commit.
      if (contract.evm.bytecode.object === '') continue
      artifacts.push({
        contractName,
        abi: contract.abi.map((entry) => sortKeys(entry) as AbiEntry),
        bytecode: `0x${contract.evm.bytecode.object}`,
        deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
        solcVersion,
        sourceSha256,
      })
    }
  }
  return artifacts.sort((a, b) => compareStrings(a.contractName, b.contractName))
}

/** Renders every output file (artifacts and the typed module) from compiled artifacts. */
export function renderOutputs(artifacts: Artifact[]): OutputFile[] {
  return [
    ...artifacts.map((artifact) => ({
      path: `artifacts/${artifact.contractName}.json`,
      content: renderArtifact(artifact),
    })),
    { path: 'src/abis.gen.ts', content: renderAbisModule(artifacts) },
  ]
}

/** One artifact as pretty JSON with a fixed top-level key order and sorted nested keys. */
export function renderArtifact(artifact: Artifact): string {
  const ordered: Artifact = {
    contractName: artifact.contractName,
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    deployedBytecode: artifact.deployedBytecode,
    solcVersion: artifact.solcVersion,
    sourceSha256: artifact.sourceSha256,
  }
  return `${JSON.stringify(ordered, null, 2)}\n`
}

/** The `src/abis.gen.ts` module: `as const` ABIs so viem infers function and event types. */
export function renderAbisModule(artifacts: Artifact[]): string {
  const lines = [
    '// Generated by packages/devnet/scripts/compile.ts from contracts/*.sol. Do not edit; run',
    '// `npm run compile -w @pontis/devnet` instead.',
  ]
  for (const artifact of artifacts) {
    const name = lowerFirst(artifact.contractName)
    lines.push(
      '',
      `/** ABI of ${artifact.contractName}. */`,
      `export const ${name}Abi = ${JSON.stringify(artifact.abi, null, 2)} as const`,
      '',
      `/** Creation bytecode of ${artifact.contractName}. */`,
      `export const ${name}Bytecode = '${artifact.bytecode}' as const`,
      '',
      `/** Runtime bytecode of ${artifact.contractName}. */`,
      `export const ${name}DeployedBytecode = '${artifact.deployedBytecode}' as const`,
    )
  }
  return `${lines.join('\n')}\n`
}

/** Compiles and writes every output file; returns the paths written (relative to the package). */
export function writeOutputs(): string[] {
  const files = renderOutputs(compileContracts())
  for (const file of files) writeFileSync(join(PACKAGE_DIR, file.path), file.content)
  return files.map((file) => file.path)
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => compareStrings(a, b))
        .map(([key, inner]) => [key, sortKeys(inner)]),
    )
  }
  return value
}

/** Code-unit order, independent of the locale the script runs under. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function lowerFirst(name: string): string {
  // PontisUSD -> pontisUsd, PontisDepository -> pontisDepository: camelCase with acronyms folded.
  const folded = name.replace(
    /([A-Z])([A-Z]+)(?=[A-Z][a-z]|$)/g,
    (_, first: string, rest: string) => first + rest.toLowerCase(),
  )
  return folded.charAt(0).toLowerCase() + folded.slice(1)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const path of writeOutputs()) console.log(`wrote ${path}`)
}
