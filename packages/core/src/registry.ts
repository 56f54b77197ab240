/**
 * The registry: which plugins serve which families, and one adapter per configured chain.
 * Services ask it for `registry.chain(chainId)` and use the adapter; nothing here branches on a
 * family.
 */

import { dirname, isAbsolute, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import {
  type ChainConfig,
  type ChainEntry,
  describeChain,
  type HubConfig,
  type PublicChainRecord,
  toPublicChainRecord,
} from './chains.js'
import {
  type ChainsConfig,
  type EnvironmentVariables,
  loadChainsConfig,
  type PlaceholderSources,
  variablesAt,
} from './config.js'
import { ConfigError, type ConfigIssue, displayPath } from './config-error.js'
import { chainEntrySchema } from './config-schema.js'
import { deepFreeze } from './deep-freeze.js'
import { runnableModulePath } from './entry-points.js'
import { PontisError } from './errors.js'
import { type Logger, silentLogger, withLogFields } from './logger.js'
import {
  type AddressRole,
  type ChainAdapter,
  CORE_API_VERSION,
  isPontisPlugin,
  type PontisPlugin,
} from './plugin.js'
import { satisfiesRange } from './semver.js'
import { createAjv, validateWith } from './validation.js'
import type { VmType } from './vm-type.js'

/** A plugin the registry accepted, with where it came from (for messages). */
export interface RegisteredPlugin {
  readonly plugin: PontisPlugin
  /** Package name or file it was loaded from, or a label given to `registerPlugin`. */
  readonly source: string
}

/** One configured chain, ready to use. */
export interface RegisteredChain {
  readonly id: number
  /** The full entry (private members included), defaults applied, frozen. */
  readonly entry: ChainConfig
  /** What may be served. */
  readonly record: PublicChainRecord
  readonly plugin: PontisPlugin
  readonly adapter: ChainAdapter
}

/** Turns a specifier into a module namespace; replaceable in tests. */
export type ModuleImporter = (specifier: string) => Promise<unknown>

/** Options of {@link createRegistry}. */
export interface CreateRegistryOptions {
  /** Passed to adapters, tagged per chain. Default: silent. */
  readonly logger?: Logger
  /** The `ENVIRONMENT` adapters are told about. Default `local`. */
  readonly environment?: string
  /** The hub of this environment, when known. */
  readonly hub?: HubConfig
  /** How plugin modules are imported. Default: dynamic `import()`. */
  readonly importer?: ModuleImporter
}

/** Where a plugin comes from when imported. */
export interface ImportPluginOptions {
  /** The family it must serve (its key under `plugins`). */
  readonly vmType: string
  /** Directory relative paths are resolved against (the config file's). Default `process.cwd()`. */
  readonly baseDir?: string
  /** Where the specifier was written, for messages, e.g. `configs/chains.local.json plugins.evm`. */
  readonly declaredAt?: string
}

/** Plugins by family and adapters by chain id. */
export interface Registry {
  /** The environment adapters were created for. */
  readonly environment: string
  /**
   * Accepts a plugin: checks it was made by `definePlugin`, that its `coreApi` range includes
   * {@link CORE_API_VERSION}, that it serves `expectedVmType` when given, and that no other plugin
   * serves its family.
   * @param source names it in messages (package, file, or any label).
   * @throws ConfigError naming the plugin and the problem.
   */
  registerPlugin(plugin: unknown, source: string, expectedVmType?: string): RegisteredPlugin
  /**
   * Imports a plugin by package name or path (relative to `baseDir`), takes its default export
   * and registers it.
   * @throws ConfigError naming the specifier and the problem.
   */
  importPlugin(specifier: string, options: ImportPluginOptions): Promise<RegisteredPlugin>
  /**
   * Validates chain entries (core shape, then each plugin's options and addresses), refuses
   * unknown families and duplicate ids or names, then creates their adapters, in order. All or
   * nothing: when anything is wrong no chain is added.
   * @param source names where the entries came from in messages (e.g. the config file).
   * @param sources which `${VAR}` variables the entries' values came from, so messages name them.
   * @throws ConfigError listing every problem found.
   */
  addChains(
    entries: readonly ChainEntry[],
    source?: string,
    sources?: PlaceholderSources,
  ): Promise<readonly RegisteredChain[]>
  /**
   * The chain with this id (a number, or its decimal string as some routes send it).
   * @throws PontisError UNSUPPORTED_CHAIN naming the id and the chains served.
   */
  chain(chainId: number | string): RegisteredChain
  /** The chain with this id, or undefined. */
  tryChain(chainId: number | string): RegisteredChain | undefined
  /** Every chain, in config order. */
  chains(): readonly RegisteredChain[]
  /** Every plugin, in registration order. */
  plugins(): readonly RegisteredPlugin[]
  /** The public record of every chain, in config order: what `/chains` serves. */
  publicChainRecords(): readonly PublicChainRecord[]
  /** The hub of this environment, when the registry was loaded from config. */
  hub(): HubConfig | undefined
  /** Closes every adapter that has `close`. */
  close(): Promise<void>
}

function parseChainId(chainId: number | string): number | undefined {
  if (typeof chainId === 'number') return Number.isSafeInteger(chainId) ? chainId : undefined
  if (typeof chainId === 'string' && /^[1-9][0-9]{0,15}$/.test(chainId)) {
    const id = Number(chainId)
    return Number.isSafeInteger(id) ? id : undefined
  }
  return undefined
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Chains named in an UNSUPPORTED_CHAIN message before "and N more". */
const MAX_LISTED_CHAINS = 12

const defaultImporter: ModuleImporter = (specifier) => import(runnableModulePath(specifier))

/** True for `./x`, `../x`, `/x`, `C:\x` and `file:` URLs: paths, not package names. */
function isPathSpecifier(specifier: string): boolean {
  return specifier.startsWith('.') || specifier.startsWith('file:') || isAbsolute(specifier)
}

/** An empty registry; add plugins and chains to it, or use {@link loadRegistry}. */
export function createRegistry(options: CreateRegistryOptions = {}): Registry {
  const logger = options.logger ?? silentLogger
  const environment = options.environment ?? 'local'
  const importer = options.importer ?? defaultImporter
  const ajv = createAjv()
  const validateEntry = ajv.compile(chainEntrySchema)
  const pluginsByVmType = new Map<string, RegisteredPlugin & { validateOptions: ValidateFunction }>()
  const chainsById = new Map<number, RegisteredChain>()
  let publicRecords: readonly PublicChainRecord[] = Object.freeze([])

  const knownFamilies = (): string =>
    pluginsByVmType.size === 0 ? 'none (no plugin registered)' : [...pluginsByVmType.keys()].join(', ')

  const registerPlugin = (candidate: unknown, source: string, expectedVmType?: string): RegisteredPlugin => {
    if (!isPontisPlugin(candidate)) {
      throw new ConfigError(
        `plugin from '${source}' is not a plugin made by definePlugin() from @pontis/core: its default export must be \`export default definePlugin({ vmType, name, coreApi, configSchema, createAdapter })\``,
      )
    }
    const plugin = candidate
    let compatible: boolean
    try {
      compatible = satisfiesRange(CORE_API_VERSION, plugin.coreApi)
    } catch (error) {
      throw new ConfigError(
        `plugin '${plugin.name}' (from '${source}') declares coreApi '${plugin.coreApi}', which is not a readable range: ${errorMessage(error)}`,
      )
    }
    if (!compatible) {
      throw new ConfigError(
        `plugin '${plugin.name}' (from '${source}') supports core API '${plugin.coreApi}', but this core provides ${CORE_API_VERSION}; install a version of the plugin made for core ${CORE_API_VERSION}`,
      )
    }
    if (expectedVmType !== undefined && plugin.vmType !== expectedVmType) {
      throw new ConfigError(
        `plugin '${plugin.name}' (from '${source}') serves vmType '${plugin.vmType}' but is registered under '${expectedVmType}'; put it under "${plugin.vmType}" in plugins`,
      )
    }
    const existing = pluginsByVmType.get(plugin.vmType)
    if (existing !== undefined) {
      throw new ConfigError(
        `two plugins serve vmType '${plugin.vmType}': '${existing.plugin.name}' from '${existing.source}' and '${plugin.name}' from '${source}'; keep one`,
      )
    }
    let validateOptions: ValidateFunction
    try {
      validateOptions = ajv.compile(plugin.configSchema)
    } catch (error) {
      throw new ConfigError(
        `plugin '${plugin.name}' (from '${source}') has a configSchema that is not a valid JSON Schema: ${errorMessage(error)}`,
      )
    }
    const registered = { plugin, source, validateOptions }
    pluginsByVmType.set(plugin.vmType, registered)
    logger.debug('plugin registered', { vmType: plugin.vmType, plugin: plugin.name, source })
    return { plugin, source }
  }

  const importPlugin = async (specifier: string, options: ImportPluginOptions): Promise<RegisteredPlugin> => {
    const declaredAt = options.declaredAt === undefined ? '' : ` (declared at ${options.declaredAt})`
    const target = isPathSpecifier(specifier)
      ? specifier.startsWith('file:')
        ? specifier
        : pathToFileURL(resolve(options.baseDir ?? process.cwd(), specifier)).href
      : specifier
    let namespace: unknown
    try {
      namespace = await importer(target)
    } catch (error) {
      throw new ConfigError(
        `cannot load the plugin for vmType '${options.vmType}' from '${specifier}'${declaredAt}: ${errorMessage(error)}`,
        [],
        { cause: error },
      )
    }
    const exported = (namespace as { default?: unknown } | null)?.default
    if (exported === undefined) {
      throw new ConfigError(
        `the module '${specifier}'${declaredAt} has no default export; a plugin module must \`export default definePlugin({...})\``,
      )
    }
    return registerPlugin(exported, specifier, options.vmType)
  }

  /** Checks addresses in the entry with the family's own rules, so a typo fails at start-up. */
  const addressIssues = (
    entry: ChainEntry,
    adapter: ChainAdapter,
    where: string,
    entryPath: string,
  ): Array<{ message: string; path: string }> => {
    const issues: Array<{ message: string; path: string }> = []
    const check = (path: string, value: string | undefined, normalise: (value: string) => unknown): void => {
      if (value === undefined) return
      try {
        normalise(value)
      } catch (error) {
        issues.push({ message: `${where}: ${path}: ${errorMessage(error)}`, path: `${entryPath}.${path}` })
      }
    }
    const currency = (value: string) => adapter.identity.normalizeCurrency(value, 'currency')
    const address = (role: AddressRole) => (value: string) => adapter.identity.normalizeAddress(value, role)
    check('currency.address', entry.currency.address, currency)
    for (const list of ['featuredTokens', 'currencies', 'solverCurrencies'] as const) {
      for (const [index, item] of (entry[list] ?? []).entries()) {
        check(`${list}[${index}].address`, item.address, currency)
      }
    }
    for (const [name, value] of Object.entries(entry.contracts ?? {})) {
      if (typeof value === 'string') {
        check(`contracts.${name}`, value, address('contract'))
        continue
      }
      for (const [inner, nested] of Object.entries(value ?? {})) {
        check(`contracts.${name}.${inner}`, nested, address('contract'))
      }
    }
    check('protocol.v2.depository', entry.protocol?.v2?.depository, address('contract'))
    for (const [index, solver] of (entry.solverAddresses ?? []).entries()) {
      check(`solverAddresses[${index}]`, solver, address('solver'))
    }
    for (const [index, rule] of (entry.finality?.highValue ?? []).entries()) {
      check(`finality.highValue[${index}].currency`, rule.currency, currency)
      if (adapter.finality.finalOnExecution && rule.confirmations > 1) {
        issues.push({
          message: `${where}: finality.highValue[${index}].confirmations: the ${entry.vmType} plugin's transactions are final once executed and never count more than one confirmation; remove the rule or set 1`,
          path: `${entryPath}.finality.highValue[${index}].confirmations`,
        })
      }
    }
    if (adapter.finality.finalOnExecution && (entry.finality?.confirmations ?? 1) > 1) {
      issues.push({
        message: `${where}: finality.confirmations: the ${entry.vmType} plugin's transactions are final once executed and never count more than one confirmation; set 1 or remove it`,
        path: `${entryPath}.finality.confirmations`,
      })
    }
    if (entry.indexer?.startBlock !== undefined && !adapter.reading?.startCursor) {
      issues.push({
        message: `${where}: indexer.startBlock: the ${entry.vmType} plugin cannot start its deposit scan at a height; remove indexer.startBlock`,
        path: `${entryPath}.indexer.startBlock`,
      })
    }
    return issues
  }

  const addChains = async (
    entries: readonly ChainEntry[],
    source?: string,
    sources?: PlaceholderSources,
  ): Promise<readonly RegisteredChain[]> => {
    const file = source
    const issues: ConfigIssue[] = []
    const issue = (message: string, path?: string): void => {
      // A value from a `${VAR}` placeholder: the operator changes the variable, not the file.
      const variables = path === undefined ? undefined : variablesAt(sources, path)
      issues.push({
        ...(file === undefined ? {} : { file }),
        ...(path === undefined ? {} : { path }),
        message,
        ...(variables === undefined ? {} : { variables }),
      })
    }
    const prepared: Array<{
      entry: ChainConfig
      registered: RegisteredPlugin
      where: string
      entryPath: string
    }> = []
    const seenIds = new Map<number, string>()
    const seenNames = new Map<string, string>()
    for (const existing of chainsById.values()) {
      seenIds.set(existing.id, `already registered chain ${describeChain(existing.entry)}`)
      seenNames.set(existing.entry.name, `already registered chain ${describeChain(existing.entry)}`)
    }

    entries.forEach((raw, index) => {
      const entryPath = `chains[${index}]`
      const where = `chain ${describeChain(raw)}`
      // Copy first: validation writes defaults, and the caller's object may be frozen.
      const entry = structuredClone(raw) as ChainEntry
      const shapeIssues = validateWith(validateEntry, entry, entryPath)
      if (shapeIssues.length > 0) {
        for (const shapeIssue of shapeIssues) issue(`${where}: ${shapeIssue.message}`, shapeIssue.path)
        return
      }
      const firstWithId = seenIds.get(entry.id)
      if (firstWithId !== undefined) {
        issue(`${where}: duplicate chain id ${entry.id}, also used by ${firstWithId}`, `${entryPath}.id`)
      } else seenIds.set(entry.id, `${entryPath} ${describeChain(entry)}`)
      const firstWithName = seenNames.get(entry.name)
      if (firstWithName !== undefined) {
        issue(
          `${where}: duplicate chain name '${entry.name}', also used by ${firstWithName}`,
          `${entryPath}.name`,
        )
      } else seenNames.set(entry.name, `${entryPath} ${describeChain(entry)}`)

      const registered = pluginsByVmType.get(entry.vmType)
      if (registered === undefined) {
        issue(
          `unknown family '${entry.vmType}' for chain ${entry.id} ${entry.name}; known families: ${knownFamilies()}`,
          `${entryPath}.vmType`,
        )
        return
      }
      const options = structuredClone(entry.plugin ?? {})
      const optionIssues = validateWith(registered.validateOptions, options, `${entryPath}.plugin`)
      if (optionIssues.length > 0) {
        for (const optionIssue of optionIssues) {
          issue(`${where}: ${optionIssue.message} (options of ${registered.plugin.name})`, optionIssue.path)
        }
        return
      }
      prepared.push({ entry: deepFreeze({ ...entry, plugin: options }), registered, where, entryPath })
    })
    if (issues.length > 0) throw new ConfigError('the chain config is invalid', issues)

    const created: RegisteredChain[] = []
    for (const { entry, registered, where, entryPath } of prepared) {
      const context = {
        logger: withLogFields(logger, { chainId: entry.id, chain: entry.name }),
        environment,
      }
      let adapter: ChainAdapter
      try {
        adapter = await registered.plugin.createAdapter(entry, context)
      } catch (error) {
        issue(
          `${where}: plugin '${registered.plugin.name}' could not create its adapter: ${errorMessage(error)}`,
        )
        continue
      }
      const identity = (adapter as Partial<ChainAdapter> | undefined)?.identity
      if (
        typeof identity?.normalizeAddress !== 'function' ||
        typeof identity.isValidAddress !== 'function' ||
        typeof identity.normalizeCurrency !== 'function' ||
        typeof identity.nativeCurrencyId !== 'string'
      ) {
        issue(
          `${where}: plugin '${registered.plugin.name}' returned an adapter without a complete identity capability (normalizeAddress, isValidAddress, normalizeCurrency, nativeCurrencyId)`,
        )
        continue
      }
      for (const { message, path } of addressIssues(entry, adapter, where, entryPath)) issue(message, path)
      created.push(
        Object.freeze({
          id: entry.id,
          entry,
          record: deepFreeze(toPublicChainRecord(entry)),
          plugin: registered.plugin,
          adapter,
        }),
      )
    }
    if (issues.length > 0) {
      await Promise.allSettled(created.map((chain) => chain.adapter.close?.()))
      throw new ConfigError('the chain config is invalid', issues)
    }
    for (const chain of created) {
      chainsById.set(chain.id, chain)
      logger.debug('chain registered', {
        chainId: chain.id,
        chain: chain.entry.name,
        vmType: chain.entry.vmType,
      })
    }
    publicRecords = Object.freeze([...chainsById.values()].map((chain) => chain.record))
    return Object.freeze(created)
  }

  const tryChain = (chainId: number | string): RegisteredChain | undefined => {
    const id = parseChainId(chainId)
    return id === undefined ? undefined : chainsById.get(id)
  }

  const chain = (chainId: number | string): RegisteredChain => {
    const found = tryChain(chainId)
    if (found !== undefined) return found
    const known = [...chainsById.values()]
    const listed = known.slice(0, MAX_LISTED_CHAINS).map((other) => describeChain(other.entry))
    if (known.length > MAX_LISTED_CHAINS) listed.push(`and ${known.length - MAX_LISTED_CHAINS} more`)
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `chain ${String(chainId).slice(0, 40)} is not supported here; supported chains: ${listed.join(', ') || 'none'}`,
      { chainId: typeof chainId === 'number' ? chainId : String(chainId).slice(0, 40) },
    )
  }

  return {
    environment,
    registerPlugin,
    importPlugin,
    addChains,
    chain,
    tryChain,
    chains: () => Object.freeze([...chainsById.values()]),
    plugins: () =>
      Object.freeze([...pluginsByVmType.values()].map(({ plugin, source }) => ({ plugin, source }))),
    publicChainRecords: () => publicRecords,
    hub: () => options.hub,
    close: async () => {
      const results = await Promise.allSettled(
        [...chainsById.values()].map((known) => known.adapter.close?.()),
      )
      for (const result of results) {
        if (result.status === 'rejected') logger.warn('adapter close failed', { error: result.reason })
      }
    },
  }
}

/** Options of {@link loadRegistry}. */
export interface LoadRegistryOptions {
  /** Already loaded config; default: `loadChainsConfig({ environment, configDir, env })`. */
  readonly chainsConfig?: ChainsConfig
  /** Where the config files are, when `chainsConfig` is not given. */
  readonly configDir?: string
  /** Which environment, when `chainsConfig` is not given. Default `ENVIRONMENT`, else `local`. */
  readonly environment?: string
  /** Placeholders' source, when `chainsConfig` is not given. Default `process.env`. */
  readonly env?: EnvironmentVariables
  readonly logger?: Logger
  /** How plugin modules are imported. Default: dynamic `import()`. */
  readonly importer?: ModuleImporter
}

/**
 * Loads an environment's config (unless given), imports each plugin it names (package name, or
 * path relative to the chains file), and creates an adapter for every chain.
 * @throws ConfigError for any problem in the files, the plugins or the chains.
 */
export async function loadRegistry(options: LoadRegistryOptions = {}): Promise<Registry> {
  const config =
    options.chainsConfig ??
    (await loadChainsConfig({
      ...(options.configDir === undefined ? {} : { configDir: options.configDir }),
      ...(options.environment === undefined ? {} : { environment: options.environment }),
      ...(options.env === undefined ? {} : { env: options.env }),
    }))
  const registry = createRegistry({
    environment: config.environment,
    hub: config.hub,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.importer === undefined ? {} : { importer: options.importer }),
  })
  const baseDir = dirname(config.chainsFile)
  for (const [vmType, specifier] of Object.entries(config.plugins)) {
    await registry.importPlugin(specifier, {
      vmType: vmType as VmType,
      baseDir,
      declaredAt: `${displayPath(config.chainsFile)} plugins.${vmType}`,
    })
  }
  await registry.addChains(config.chains, config.chainsFile, config.sources)
  return registry
}

/** The chain's id inside orders and signed protocol messages: `protocol.v2.chainId`, else its name. */
export function protocolChainIdOf(chain: RegisteredChain): string {
  return chain.record.protocol?.v2?.chainId ?? chain.record.name
}

/**
 * The chain named `protocolChainId` in protocol messages.
 * @throws PontisError UNSUPPORTED_CHAIN naming the id and the chains served.
 */
export function chainByProtocolId(registry: Registry, protocolChainId: string): RegisteredChain {
  const chains = [...registry.chains()]
  const found = chains.find((chain) => protocolChainIdOf(chain) === protocolChainId)
  if (found) return found
  throw new PontisError(
    'UNSUPPORTED_CHAIN',
    `Chain '${protocolChainId}' is not served here. Chains: ${chains.map(protocolChainIdOf).join(', ')}.`,
  )
}
