/**
 * A real intent service on loopback for a plugin's conformance run: its own config folder with a
 * chains file that loads the plugin by path, so the quote is served by the real quote engine and
 * signature steps are executed by the real execute API.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ChainEntry, silentLogger } from '@pontis/core'
import { type IntentsService, startIntentsService } from '@pontis/intents'

/** The repository's local solver settings (published devnet keys, default fees). */
const LOCAL_SOLVER_SETTINGS = fileURLToPath(new URL('../../../configs/solver.local.json', import.meta.url))

/** Options of {@link startConformanceService}. */
export interface ConformanceServiceOptions {
  /** The plugin's entry module: an absolute path, a `file:` URL, or a package name. */
  readonly plugin: string | URL
  /** The family id the chains file lists the plugin under. */
  readonly vmType: string
  /** The chains served, pointing at the devnet; the first is the hub chain. */
  readonly chains: readonly ChainEntry[]
  /** USD price per whole unit, by currency `id` of the chain entries. */
  readonly usdPrices: Readonly<Record<string, string>>
  /** Solver keys of the family (`solver.familyKeys.<vmType>`); default the local EVM solver keys. */
  readonly solverKeys?: { readonly privateKey: string; readonly allocatorPrivateKey?: string }
}

/** A started service; `close` stops it and removes its config folder. */
export interface ConformanceService {
  readonly url: string
  readonly service: IntentsService
  close(): Promise<void>
}

/** Starts the intent service on loopback (port chosen by the system) for the given chains. */
export async function startConformanceService(
  options: ConformanceServiceOptions,
): Promise<ConformanceService> {
  const [hubChain] = options.chains
  if (hubChain === undefined) throw new Error('startConformanceService needs at least one chain')
  const configDir = await mkdtemp(join(tmpdir(), 'pontis-conformance-'))
  const plugin = options.plugin instanceof URL ? fileURLToPath(options.plugin) : options.plugin
  const write = (name: string, content: unknown) =>
    writeFile(join(configDir, name), `${JSON.stringify(content, null, 2)}\n`)
  await write('chains.local.json', { plugins: { [options.vmType]: plugin }, chains: options.chains })
  await write('chains.hub.local.json', {
    hub: {
      chainId: hubChain.id,
      name: hubChain.name,
      oracleContract: `0x${'11'.repeat(20)}`,
      domain: { name: 'PontisOracle', version: '1' },
    },
  })
  await write('prices.local.json', { source: 'static', usd: options.usdPrices })
  const settings = JSON.parse(await readFile(LOCAL_SOLVER_SETTINGS, 'utf8'))
  if (options.solverKeys !== undefined) {
    settings.solver.familyKeys = { ...settings.solver.familyKeys, [options.vmType]: options.solverKeys }
  }
  await write('solver.local.json', settings)
  const env: NodeJS.ProcessEnv = { ENVIRONMENT: 'local', RATE_LIMITS: 'off' }
  const service = await startIntentsService({
    configDir,
    env,
    port: 0,
    host: '127.0.0.1',
    logger: silentLogger,
    workers: false,
  }).catch(async (error: unknown) => {
    await rm(configDir, { recursive: true, force: true })
    throw error
  })
  return {
    url: service.url,
    service,
    async close() {
      await service.close()
      await rm(configDir, { recursive: true, force: true })
    },
  }
}
