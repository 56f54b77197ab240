/**
 * `npm run new-plugin -- <name>`: scaffolds `plugins/<name>`, a VM plugin package for a new family
 * `<name>` that builds, passes the conformance suite (@pontis/plugin-testkit) for what it declares
 * (identity, finality and quoting), and is loaded by the registry from a chains file.
 *
 * The family it starts from is a toy, to be replaced by the real one: addresses are `<name>:`
 * followed by 40 hexadecimal characters (20 bytes, canonical in lower case), currency ids have the
 * same form (the native currency is all zeros), transaction ids are 32-byte hex, and a deposit is a
 * signed transfer authorization (a `signature` step) that the service submits.
 */
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root. */
const REPO_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))

/** Where plugins live by default. */
export const DEFAULT_PLUGINS_DIR = join(REPO_ROOT, 'plugins')

/** A plugin name: the family id (`vmType`) and the folder name, e.g. `tron` or `my-chain`. */
export const PLUGIN_NAME_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/

const MAX_NAME_LENGTH = 24

/** Why `name` cannot name a plugin, or undefined when it can. */
export function pluginNameProblem(name: string): string | undefined {
  if (typeof name !== 'string' || name === '')
    return 'a plugin name is required, e.g. `npm run new-plugin -- tron`'
  if (name.length > MAX_NAME_LENGTH)
    return `'${name.slice(0, 40)}' is longer than ${MAX_NAME_LENGTH} characters`
  if (!PLUGIN_NAME_PATTERN.test(name)) {
    return `'${name}' is not a plugin name: use lower-case letters and digits, words joined by single hyphens, starting with a letter (e.g. 'tron', 'my-chain')`
  }
  return undefined
}

/** Options of {@link scaffoldPlugin}. */
export interface ScaffoldOptions {
  /** The family id and folder name. */
  readonly name: string
  /** The folder the plugin folder is created in. Default: this repository's `plugins/`. */
  readonly pluginsDir?: string
}

/** What {@link scaffoldPlugin} created. */
export interface ScaffoldResult {
  /** The new plugin's folder. */
  readonly directory: string
  /** The files written, relative to `directory`. */
  readonly files: readonly string[]
  /** The package name, `@pontis/plugin-<name>`. */
  readonly packageName: string
  /** The chain id the scaffold's test fixture uses for the family's example chain. */
  readonly exampleChainId: number
}

/** Words of a name: `my-chain` → `My Chain`. */
function titleOf(name: string): string {
  return name
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ')
}

/** An identifier of a name: `my-chain` → `myChain`. */
function camelOf(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())
}

/** A constant's name of a name: `my-chain` → `MY_CHAIN`. */
function constantOf(name: string): string {
  return name.replaceAll('-', '_').toUpperCase()
}

/** A stable chain id for the example chain, away from the ids real chains use (FNV-1a of the name). */
export function exampleChainIdOf(name: string): number {
  let hash = 0x811c9dc5
  for (const character of name) {
    hash ^= character.charCodeAt(0)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return 9_000_000_000 + (hash % 1_000_000_000)
}

function packageJson(name: string): string {
  const manifest = {
    name: `@pontis/plugin-${name}`,
    version: '0.1.0',
    private: true,
    description: `${titleOf(name)} family plugin for Pontis`,
    license: 'Apache-2.0',
    type: 'module',
    engines: { node: '>=20.19' },
    exports: { '.': './src/index.ts' },
    dependencies: { '@pontis/core': '0.1.0' },
    devDependencies: { '@pontis/plugin-testkit': '0.1.0' },
  }
  return `${JSON.stringify(manifest, null, 2)}\n`
}

function indexSource(name: string): string {
  const title = titleOf(name)
  const camel = camelOf(name)
  const constant = constantOf(name)
  return `/**
 * @pontis/plugin-${name}: the ${title} family (\`vmType\` '${name}').
 *
 * Scaffolded by \`npm run new-plugin\` with a toy family to replace with the real one: addresses are
 * \`${name}:\` followed by 40 hexadecimal characters (canonical in lower case), currency ids have the
 * same form (the native currency is all zeros), and a deposit is a signed transfer authorization
 * (a \`signature\` step) that the service submits. It declares identity, finality and quoting; add
 * reading and filling once the family has a devnet (see the README).
 */
import {
  type AddressRole,
  type ChainAdapter,
  type ChainConfig,
  type ChainLabel,
  type CostEstimate,
  type CurrencyRole,
  type DepositStepsRequest,
  definePlugin,
  type IdentityCapability,
  invalidAddressError,
  invalidCurrencyError,
  isCurrencyRole,
  PontisError,
  type PreparedStep,
  type QuotingCapability,
} from '@pontis/core'

/** The prefix every ${title} address and currency id starts with. */
export const ${constant}_PREFIX = '${name}:'

/** The native currency's id: the prefix and 40 zeros. */
export const ${constant}_NATIVE_CURRENCY_ID = \`\${${constant}_PREFIX}\${'0'.repeat(40)}\`

/** Options of a ${title} chain entry's \`plugin\` member. */
export interface ${toPascal(name)}PluginConfig {
  /** Blocks (1 = included) before a fact counts for \`fast\` reads. Default 1. */
  readonly fastConfirmations: number
  /** Blocks before a fact counts as final (\`slow\` reads). Default 2. */
  readonly confirmations: number
  /** Price of one unit of work, smallest native unit. Default 1. */
  readonly unitPrice: number
}

/** JSON Schema of {@link ${toPascal(name)}PluginConfig}; the registry applies its defaults. */
export const ${camel}ConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    fastConfirmations: { type: 'integer', minimum: 1, default: 1 },
    confirmations: { type: 'integer', minimum: 1, default: 2 },
    unitPrice: { type: 'integer', minimum: 0, default: 1 },
  },
} as const

/** Work units of a deposit and of a fill, in the family's own unit. */
export const ${constant}_UNITS = { deposit: 50_000n, fill: 30_000n } as const

const ADDRESS = /^${name}:([0-9a-fA-F]{40})$/
const TRANSACTION_ID = /^0x[0-9a-fA-F]{64}$/
const ADDRESS_FORM = \`expected '\${${constant}_PREFIX}' followed by 40 hexadecimal characters\`

/** The 20 bytes of an address or currency id (lower-case hex, no prefix), or undefined. */
function bytesOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  return ADDRESS.exec(value)?.[1]?.toLowerCase()
}

/** The identity rules of one ${title} chain, with messages that name it. */
export function create${toPascal(name)}Identity(chain?: ChainLabel): IdentityCapability {
  const normalizeAddress = (address: string, role: AddressRole): string => {
    const bytes = bytesOf(address)
    if (bytes === undefined) throw invalidAddressError(role, address, ADDRESS_FORM, chain)
    return \`\${${constant}_PREFIX}\${bytes}\`
  }
  const normalizeCurrency = (currencyId: string, role: CurrencyRole = 'currency'): string => {
    const bytes = bytesOf(currencyId)
    if (bytes === undefined) {
      throw invalidCurrencyError(
        role,
        currencyId,
        \`\${ADDRESS_FORM} (the token id, or \${${constant}_NATIVE_CURRENCY_ID} for the native currency)\`,
        chain,
      )
    }
    return \`\${${constant}_PREFIX}\${bytes}\`
  }
  return {
    nativeCurrencyId: ${constant}_NATIVE_CURRENCY_ID,
    isValidAddress: (address: string): boolean => bytesOf(address) !== undefined,
    normalizeAddress,
    normalizeCurrency,
    encodeAddress(address: string, role: AddressRole | CurrencyRole): \`0x\${string}\` {
      const normalized = isCurrencyRole(role)
        ? normalizeCurrency(address, role)
        : normalizeAddress(address, role as AddressRole)
      return \`0x\${normalized.slice(${constant}_PREFIX.length)}\`
    },
    encodeTransactionId(transactionId: string): \`0x\${string}\` {
      if (typeof transactionId !== 'string' || !TRANSACTION_ID.test(transactionId)) {
        throw new PontisError(
          'INVALID_REQUEST',
          \`'\${String(transactionId).slice(0, 100)}' is not a transaction id\${chain ? \` of \${chain.displayName}\` : ''}: expected 0x followed by 64 hexadecimal characters\`,
        )
      }
      return transactionId.toLowerCase() as \`0x\${string}\`
    },
  }
}

/** The \`kind\` a client posts back with the signed authorization. */
export const PERMIT_KIND = 'eip3009-receive'

/** The EIP-712 types of the transfer authorization a ${title} deposit is made with. */
export const DEPOSIT_AUTHORIZATION_TYPES = {
  ReceiveWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const

/** Pricing and deposit steps of one ${title} chain whose depository is \`depository\`. */
export function create${toPascal(name)}Quoting(
  chain: ChainConfig<${toPascal(name)}PluginConfig>,
  identity: IdentityCapability,
  depository: string,
): QuotingCapability {
  const unitPrice = BigInt(chain.plugin.unitPrice)
  const cost = (units: bigint): CostEstimate => ({
    currencyId: identity.nativeCurrencyId,
    amount: units * unitPrice,
    units,
    unitPrice,
  })
  return {
    supportsDestinationCalls: false,
    supportsGasTopup: false,
    async estimateOriginCost() {
      return cost(${constant}_UNITS.deposit)
    },
    async estimateFillCost() {
      return cost(${constant}_UNITS.fill)
    },
    async supportsPermit() {
      return true
    },
    async buildDepositSteps(request: DepositStepsRequest): Promise<readonly PreparedStep[]> {
      const currency = identity.encodeAddress(request.currencyId, 'input')
      const validAfter = 0n
      const validBefore = BigInt(request.nowSeconds + request.permitExpiry)
      const value = {
        from: identity.encodeAddress(request.depositor, 'depositor'),
        to: identity.encodeAddress(depository, 'contract'),
        value: request.amount.toString(),
        validAfter: validAfter.toString(),
        validBefore: validBefore.toString(),
        nonce: request.requestId.toLowerCase(),
      }
      return [
        {
          id: 'authorize',
          kind: 'signature',
          action: 'Sign the transfer authorization',
          description: \`Authorize the deposit on \${chain.displayName}; the service submits it for you\`,
          items: [
            {
              data: {
                format: 'signature',
                sign: {
                  signatureKind: 'eip712',
                  domain: {
                    name: '${title} deposit',
                    version: '1',
                    chainId: chain.id,
                    verifyingContract: currency,
                  },
                  types: DEPOSIT_AUTHORIZATION_TYPES,
                  primaryType: 'ReceiveWithAuthorization',
                  value,
                },
                post: {
                  endpoint: request.executeEndpoint,
                  method: 'POST',
                  body: { kind: PERMIT_KIND, requestId: request.requestId.toLowerCase() },
                },
              },
              // The service keeps these terms with the request; clients post only kind and id.
              permit: { kind: PERMIT_KIND, validAfter, validBefore },
            },
          ],
        },
      ]
    },
  }
}

export default definePlugin<${toPascal(name)}PluginConfig>({
  vmType: '${name}',
  name: '@pontis/plugin-${name}',
  coreApi: '^1.0.0',
  configSchema: ${camel}ConfigSchema,
  createAdapter(chain: ChainConfig<${toPascal(name)}PluginConfig>, context): ChainAdapter {
    const identity = create${toPascal(name)}Identity({
      id: chain.id,
      displayName: chain.displayName,
    })
    const depository = chain.protocol?.v2?.depository
    context.logger.debug('adapter created', { depository: depository ?? 'none' })
    return {
      identity,
      finality: {
        fastConfirmations: chain.plugin.fastConfirmations,
        slowConfirmations: Math.max(chain.plugin.confirmations, chain.plugin.fastConfirmations),
        slowRequiresFinalized: false,
      },
      // Deposits go to the depository: without one the chain can be configured but not quoted.
      // An invalid depository is reported by the registry's address check, naming the field.
      ...(depository !== undefined && identity.isValidAddress(depository)
        ? { quoting: create${toPascal(name)}Quoting(chain, identity, depository) }
        : {}),
    }
  },
})
`
}

function toPascal(name: string): string {
  const camel = camelOf(name)
  return camel.charAt(0).toUpperCase() + camel.slice(1)
}

function conformanceTestSource(name: string): string {
  const constant = constantOf(name)
  const title = titleOf(name)
  const chainId = exampleChainIdOf(name)
  return `/**
 * The ${title} plugin against the plugin contract (@pontis/plugin-testkit). The scaffold's toy
 * family needs no devnet; once the plugin reads the chain, start the family's devnet here, point
 * \`chain.rpc.url\` at it, and give \`reading.makeDeposit\` and \`close\` (see the testkit README).
 */
import type { ChainEntry } from '@pontis/core'
import { runPluginConformance } from '@pontis/plugin-testkit'
import t from 'tap'
import plugin, { ${constant}_PREFIX } from '../src/index.js'

const address = (hex: string) => \`\${${constant}_PREFIX}\${hex}\`
const user = address('ab'.repeat(20))

/** An example chain of the family, as \`chains.<environment>.json\` would list it. */
export const exampleChain: ChainEntry = {
  id: ${chainId},
  name: '${name}-example',
  displayName: '${title} Example',
  vmType: '${name}',
  depositEnabled: true,
  disabled: false,
  currency: {
    id: 'native',
    symbol: '${name.replaceAll('-', '').slice(0, 6).toUpperCase()}',
    name: '${title}',
    address: address('0'.repeat(40)),
    decimals: 18,
  },
  protocol: {
    v2: {
      chainId: '${name}-example',
      depository: address('de'.repeat(20)),
    },
  },
  rpc: { url: 'http://127.0.0.1:1' },
  plugin: { confirmations: 3 },
}

await runPluginConformance(t, plugin, {
  chain: exampleChain,
  addresses: {
    valid: [user, address('AB'.repeat(20)), address('0'.repeat(40))],
    invalid: [
      \`0x\${'ab'.repeat(20)}\`,
      address('ab'.repeat(19)),
      address('zz'.repeat(20)),
      'ab'.repeat(20),
      '',
    ],
  },
  currencies: {
    valid: [address('cc'.repeat(20)), address('CC'.repeat(20))],
    invalid: ['native', address('c'.repeat(41)), \`0x\${'0'.repeat(40)}\`],
  },
  invalidPluginOptions: [{ confirmations: 0 }, { unitPrice: -1 }, { unknownOption: true }],
  quoting: {
    depositRequest: {
      requestId: \`0x\${'12'.repeat(32)}\`,
      depositor: user,
      currencyId: address('cc'.repeat(20)),
      amount: 1_000_000n,
      usePermit: true,
      permitExpiry: 600,
      executeEndpoint: '/execute/permits',
      nowSeconds: 1_700_000_000,
    },
  },
})
`
}

function readmeSource(name: string): string {
  const title = titleOf(name)
  return `# @pontis/plugin-${name}

The ${title} family (\`vmType\` \`${name}\`) for Pontis, scaffolded by \`npm run new-plugin -- ${name}\`.

It starts as a **toy family**, to be replaced by the real one:

- addresses are \`${name}:\` followed by 40 hexadecimal characters, canonical in lower case;
- currency ids have the same form; the native currency is \`${name}:\` and 40 zeros;
- transaction ids are \`0x\` and 64 hexadecimal characters;
- a deposit is one \`signature\` step: the user signs a transfer authorization and the service
  submits it (\`supportsPermit\` is true).

It declares **identity**, **finality** and, on chains with a \`protocol.v2.depository\`, **quoting**.

## Use it

List the family in a chains file (\`configs/chains.<environment>.json\`), by package name once
installed, or by path relative to the chains file:

\`\`\`json
{
  "plugins": { "${name}": "../plugins/${name}/src/index.ts" },
  "chains": [
    {
      "id": ${exampleChainIdOf(name)},
      "name": "${name}-example",
      "displayName": "${title} Example",
      "vmType": "${name}",
      "currency": { "id": "native", "symbol": "NAT", "name": "${title}", "address": "${name}:${'0'.repeat(40)}", "decimals": 18 },
      "protocol": { "v2": { "chainId": "${name}-example", "depository": "${name}:${'de'.repeat(20)}" } },
      "rpc": { "url": "http://127.0.0.1:1" },
      "plugin": { "confirmations": 3 }
    }
  ]
}
\`\`\`

## Make it real

1. Replace the identity rules in \`src/index.ts\` (\`create${toPascal(name)}Identity\`) with the family's:
   canonical forms, \`encodeAddress\` bytes, transaction ids. Use \`invalidAddressError\` and
   \`invalidCurrencyError\` from \`@pontis/core\` so errors read like every other family's.
2. Replace the deposit step with the family's own transaction format (one of the document's
   \`StepItemData\` variants) and price costs from the chain.
3. Start the family's devnet in \`test/fixtures/\`, add \`reading\` (and \`filling\` for the reference
   solver) to the adapter, and give the conformance test the fixtures those need: \`reading.makeDeposit\`
   (make a real deposit on the devnet and say what \`readDeposits\` must answer),
   \`reading.unknownTransactionId\`, \`filling.credentials\`, and \`close\` to stop the devnet.

## Test

\`\`\`sh
npx tap --disable-coverage plugins/${name}/test/conformance.test.ts
\`\`\`

The conformance suite (\`@pontis/plugin-testkit\`) checks the contract of every capability the
adapter declares; its README lists each check.
`
}

/**
 * Creates `<pluginsDir>/<name>` with a package.json, `src/index.ts`, a README and
 * `test/conformance.test.ts`.
 * @throws Error when the name is not a plugin name or the folder already exists.
 */
export async function scaffoldPlugin(options: ScaffoldOptions): Promise<ScaffoldResult> {
  const { name } = options
  const problem = pluginNameProblem(name)
  if (problem !== undefined) throw new Error(problem)
  const directory = join(options.pluginsDir ?? DEFAULT_PLUGINS_DIR, name)
  if (existsSync(directory)) {
    throw new Error(`${relative(process.cwd(), directory) || directory} already exists: pick another name`)
  }
  const files: Record<string, string> = {
    'package.json': packageJson(name),
    'README.md': readmeSource(name),
    'src/index.ts': indexSource(name),
    'test/conformance.test.ts': conformanceTestSource(name),
  }
  for (const [file, content] of Object.entries(files)) {
    const path = join(directory, file)
    await mkdir(dirname(path), { recursive: true })
    // 'wx': never overwrite, even if the folder appeared since the check above.
    await writeFile(path, content, { flag: 'wx' })
  }
  return {
    directory,
    files: Object.keys(files),
    packageName: `@pontis/plugin-${name}`,
    exampleChainId: exampleChainIdOf(name),
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [name = '', ...rest] = process.argv.slice(2)
  try {
    if (rest.length > 0) throw new Error(`expected one plugin name, got ${process.argv.length - 2} arguments`)
    const result = await scaffoldPlugin({ name })
    const where = relative(process.cwd(), result.directory)
    console.log(`created ${result.packageName} in ${where}:`)
    for (const file of result.files) console.log(`  ${join(where, file)}`)
    console.log('next: npm install (links the new workspace), then')
    console.log(`  npx tap --disable-coverage ${join(where, 'test', 'conformance.test.ts')}`)
  } catch (error) {
    console.error(`new-plugin: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
