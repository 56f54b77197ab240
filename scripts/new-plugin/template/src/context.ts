/** What every __TITLE__ capability of one chain shares: its label, node client, depository and options. */
import type { ChainConfig, ChainLabel } from '@pontis/core/plugin'
import { __PASCAL__ApiClient } from './api.js'
import type { __PASCAL__PluginConfig } from './config.js'
import { bytesOf } from './identity.js'

export interface __PASCAL__ChainContext {
  readonly chainId: number
  readonly label: ChainLabel
  readonly api: __PASCAL__ApiClient
  /** Where deposits go (`protocol.v2.depository`); undefined when the chain has none. */
  readonly depository: string | undefined
  readonly options: __PASCAL__PluginConfig
}

/** The shared state of one chain, from its validated config. */
export function create__PASCAL__Context(chain: ChainConfig<__PASCAL__PluginConfig>): __PASCAL__ChainContext {
  const depository = chain.protocol?.v2?.depository
  return {
    chainId: chain.id,
    label: { id: chain.id, displayName: chain.displayName },
    api: new __PASCAL__ApiClient(chain.rpc.url),
    // An invalid depository is reported by the registry's address check, naming the field.
    depository: depository !== undefined && bytesOf(depository) !== undefined ? depository : undefined,
    options: chain.plugin,
  }
}
