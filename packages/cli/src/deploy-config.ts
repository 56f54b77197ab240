/**
 * `pontis deploy --write <configs dir> --environment <name>`: records a deployment in
 * `chains.<environment>.json` (the chain's entry, created when missing) and, with a hub, in
 * `chains.hub.<environment>.json`.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { chainsFileName, hubFileName } from '@pontis/core'
import type { ConfigEntries } from './deploy.js'

type JsonObject = Record<string, unknown>

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

async function readJsonObject(file: string): Promise<JsonObject | undefined> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  if (text === undefined) return undefined
  const value: unknown = JSON.parse(text)
  if (!isObject(value)) throw new Error(`${file} is not a JSON object`)
  return value
}

/** The variable a new chain entry reads its RPC URL from: `SEPOLIA_RPC_URL` for `sepolia`. */
export function rpcUrlVariable(chainName: string): string {
  return `${chainName.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_RPC_URL`
}

/** What {@link writeDeploymentConfig} changed. */
export interface WrittenConfig {
  readonly chainsFile: string
  readonly hubFile?: string
  /** Whether the chain's entry was created (it then reads its RPC URL from {@link rpcUrlVariable}). */
  readonly createdChain: boolean
}

/** Writes the entries into the environment's files, keeping everything else in them. */
export async function writeDeploymentConfig(
  configDir: string,
  environment: string,
  entries: ConfigEntries,
): Promise<WrittenConfig> {
  const chainsFile = join(configDir, chainsFileName(environment))
  const document = (await readJsonObject(chainsFile)) ?? { plugins: {}, chains: [] }
  const plugins = isObject(document.plugins) ? document.plugins : {}
  if (plugins.evm === undefined) plugins.evm = '@pontis/plugin-evm'
  document.plugins = plugins
  const chains = Array.isArray(document.chains) ? (document.chains as unknown[]) : []
  document.chains = chains
  const { chain } = entries
  let entry = chains.find(
    (candidate): candidate is JsonObject => isObject(candidate) && candidate.id === chain.id,
  )
  const createdChain = entry === undefined
  if (entry === undefined) {
    // The smallest entry the EVM plugin serves: native currency only; the RPC URL (which often
    // carries a provider key) stays in the environment.
    entry = {
      id: chain.id,
      name: chain.name,
      displayName: chain.name,
      vmType: 'evm',
      depositEnabled: true,
      currency: {
        id: 'eth',
        symbol: 'ETH',
        name: 'Ether',
        address: '0x0000000000000000000000000000000000000000',
        decimals: 18,
        supportsBridging: true,
      },
      rpc: { url: `\${${rpcUrlVariable(chain.name)}}` },
      plugin: {},
    }
    chains.push(entry)
  }
  const protocol = isObject(entry.protocol) ? entry.protocol : {}
  const v2 = isObject(protocol.v2) ? protocol.v2 : {}
  protocol.v2 = {
    ...v2,
    chainId: v2.chainId ?? chain.protocol.v2.chainId,
    depository: chain.protocol.v2.depository,
  }
  entry.protocol = protocol
  const contracts = isObject(entry.contracts) ? entry.contracts : {}
  entry.contracts = { ...contracts, relayReceiver: chain.contracts.relayReceiver }
  const plugin = isObject(entry.plugin) ? entry.plugin : {}
  entry.plugin = { ...plugin, multicaller: chain.plugin.multicaller }
  await writeFile(chainsFile, `${JSON.stringify(document, null, 2)}\n`)
  if (entries.hubFile === undefined) return { chainsFile, createdChain }
  const hubFile = join(configDir, hubFileName(environment))
  const hubDocument = (await readJsonObject(hubFile)) ?? {}
  hubDocument.hub = entries.hubFile.hub
  await writeFile(hubFile, `${JSON.stringify(hubDocument, null, 2)}\n`)
  return { chainsFile, hubFile, createdChain }
}
