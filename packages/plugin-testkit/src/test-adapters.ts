/**
 * Adapters of a plugin made the way the registry makes them, for a plugin's own tests on its devnet:
 * a chain entry with the options' schema defaults, then the test's overrides.
 */
import {
  type ChainAdapter,
  type ChainConfig,
  type FillingCapability,
  type PluginDefinition,
  type QuotingCapability,
  type ReadingCapability,
  silentLogger,
} from '@pontis/core'
import { pluginConfigDefaults } from './conformance.js'

/** An adapter with the three capabilities a full plugin provides (quoting, reading, filling). */
export interface FullTestAdapter extends ChainAdapter {
  readonly quoting: QuotingCapability
  readonly reading: ReadingCapability
  readonly filling: FillingCapability
}

/** What a family's test entry fixes; the served URL, the options and the switches are added. */
export type TestChainBase<Config> = Omit<
  ChainConfig<Config>,
  'rpc' | 'plugin' | 'depositEnabled' | 'disabled'
>

/**
 * A chain entry served by `url`: `base`, deposits enabled, the plugin options' schema defaults, then
 * `options`.
 */
export function testChainEntry<Config>(
  plugin: Pick<PluginDefinition<Config>, 'configSchema'>,
  base: TestChainBase<Config>,
  url: string,
  options: Partial<Config> = {},
): ChainConfig<Config> {
  return {
    ...base,
    depositEnabled: true,
    disabled: false,
    rpc: { url, timeoutMs: 5000 },
    plugin: { ...pluginConfigDefaults<Config>(plugin.configSchema), ...options },
  }
}

/** The plugin's adapter of `entry`, made as the registry makes it (silent logger, `local` environment). */
export async function createTestAdapter<Config>(
  plugin: Pick<PluginDefinition<Config>, 'createAdapter'>,
  entry: ChainConfig<Config>,
): Promise<FullTestAdapter> {
  const adapter = await plugin.createAdapter(entry, { logger: silentLogger, environment: 'local' })
  if (!adapter.quoting || !adapter.reading || !adapter.filling) {
    throw new Error(`the ${entry.name} adapter lacks quoting, reading or filling`)
  }
  return adapter as FullTestAdapter
}
