/**
 * Dummy values for the required variables of an environment's config files, each valid where it is
 * used (a URL, an address of the chain's family, a key, a price). Kept apart from environments.ts
 * so the tests that only need the configs' folder do not load every family's libraries.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { tronAddressOfPrivateKey } from '@pontis/plugin-tron'
import { PublicKey } from '@solana/web3.js'
import { networks, payments } from 'bitcoinjs-lib'
import { REPO_CONFIG_DIR } from './environments.js'

/** The config files of an environment a service reads, by loader name. */
export const ENVIRONMENT_FILES = ['chains', 'chains.hub', 'solver', 'prices'] as const
export type EnvironmentFile = (typeof ENVIRONMENT_FILES)[number]

/** Where a required variable is used: the file, the JSON path, and the chain entry it is inside. */
export interface PlaceholderUse {
  readonly file: EnvironmentFile
  readonly path: string
  readonly chain?: { readonly vmType: string; readonly network?: string }
}

/**
 * Every placeholder without a default, `${NAME}`, in the given files of an environment, with the
 * places it is used: the variable list comes from the files themselves.
 */
export async function placeholderUses(
  environment: string,
  files: readonly EnvironmentFile[] = ENVIRONMENT_FILES,
  configDir = REPO_CONFIG_DIR,
): Promise<Map<string, PlaceholderUse[]>> {
  const uses = new Map<string, PlaceholderUse[]>()
  for (const file of files) {
    const document = JSON.parse(
      await readFile(join(configDir, `${file}.${environment}.json`), 'utf8'),
    ) as unknown
    const walk = (node: unknown, path: string, chain: PlaceholderUse['chain']): void => {
      if (typeof node === 'string') {
        for (const match of node.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
          const name = match[1] ?? ''
          uses.set(name, [...(uses.get(name) ?? []), { file, path, ...(chain ? { chain } : {}) }])
        }
      } else if (Array.isArray(node)) {
        node.forEach((item, index) => {
          walk(item, `${path}[${index}]`, chain)
        })
      } else if (node !== null && typeof node === 'object') {
        const entry = node as { vmType?: unknown; plugin?: { network?: unknown } }
        const inChain =
          file === 'chains' && /^chains\[\d+\]$/.test(path) && typeof entry.vmType === 'string'
            ? {
                vmType: entry.vmType,
                ...(typeof entry.plugin?.network === 'string' ? { network: entry.plugin.network } : {}),
              }
            : chain
        for (const [key, item] of Object.entries(node))
          walk(item, path === '' ? key : `${path}.${key}`, inChain)
      }
    }
    walk(document, '', undefined)
  }
  return uses
}

const digest = (data: string | Uint8Array): Buffer => createHash('sha256').update(data).digest()

/** A well-formed address of a chain family, different per variable name. */
function dummyAddress(name: string, chain: PlaceholderUse['chain']): string {
  const bytes = digest(name)
  switch (chain?.vmType) {
    case 'svm':
      return new PublicKey(bytes).toBase58()
    case 'bvm': {
      const network =
        chain.network === 'bitcoin' || chain.network === undefined ? networks.bitcoin : networks.testnet
      return payments.p2wpkh({ hash: bytes.subarray(0, 20), network }).address ?? ''
    }
    case 'tvm':
      return tronAddressOfPrivateKey(`0x${bytes.toString('hex')}`)
    case 'lvm':
      return String(1000 + bytes.readUInt16BE(0))
    default:
      return `0x${bytes.subarray(0, 20).toString('hex')}`
  }
}

/** A dummy value valid where the variable is used: a URL, an address of the chain's family, a key, a price. */
export function dummyValue(name: string, use: PlaceholderUse): string {
  const field = use.path.split('.').at(-1) ?? ''
  if (/url$/i.test(field)) return `https://rpc.invalid/${name.toLowerCase()}`
  if (use.file === 'solver') return `0x${digest(name).toString('hex')}`
  if (use.file === 'prices') return '1.5'
  return dummyAddress(name, use.chain)
}

/** A dummy value for every required variable of an environment's files. */
export async function dummyEnvironment(
  environment: string,
  files: readonly EnvironmentFile[] = ENVIRONMENT_FILES,
  configDir = REPO_CONFIG_DIR,
): Promise<Record<string, string>> {
  const uses = await placeholderUses(environment, files, configDir)
  return Object.fromEntries(
    [...uses].map(([name, [first]]) => [name, dummyValue(name, first as PlaceholderUse)]),
  )
}
