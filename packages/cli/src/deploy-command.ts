/** `pontis deploy`: the command line over ./deploy.ts. */
import { parseArgs } from 'node:util'
import type { Address, Hex } from 'viem'
import type { CliOutput } from './cli.js'
import {
  configEntries,
  DEFAULT_DEPLOY_SALT,
  DETERMINISTIC_DEPLOYER,
  DeployError,
  type DeploySigner,
  deployContracts,
  type HubParameters,
  isEvmAddress,
  parseSalt,
  privateKeySigner,
  remoteSigner,
} from './deploy.js'
import { rpcUrlVariable, writeDeploymentConfig } from './deploy-config.js'

/** The variable the deployer's key is read from unless `--key-env` names another. */
export const DEFAULT_KEY_VARIABLE = 'PONTIS_DEPLOYER_PRIVATE_KEY'

export const DEPLOY_USAGE = `Usage: pontis deploy --rpc-url <url> --allocator <address> [options]

Deploys PontisDepository(allocator), PontisDepositReceiver(depository) and PontisMulticaller (with its
PontisCallExecutor), and with --hub
PontisOracleHub(name, version, signers, threshold), at CREATE2 addresses of the deterministic-deployment
proxy ${DETERMINISTIC_DEPLOYER}; verifies the runtime code at each address and prints
the config entries as JSON. Contracts already at their address (and verified) are left alone.

Options:
  --rpc-url <url>          The chain's JSON-RPC endpoint (required)
  --allocator <address>    The depository's allocator: the solver's allocatorPrivateKey address (required)
  --salt <0x32 bytes|text> CREATE2 salt; text is hashed (default keccak256("pontis") = ${DEFAULT_DEPLOY_SALT})
  --chain-name <name>      The chain's name in the config (default chain-<id>)
  --hub                    Also deploy the oracle hub
  --hub-signer <address>   An oracle signer (repeat for each; required with --hub)
  --hub-threshold <n>      Signatures an execution needs (default 1)
  --hub-name <name>        EIP-712 domain name (default PontisOracle)
  --hub-version <version>  EIP-712 domain version (default 1)
  --key-env <VARIABLE>     Environment variable holding the deployer's private key (default ${DEFAULT_KEY_VARIABLE})
  --remote-signer <url>    Sign with eth_signTransaction at this JSON-RPC URL (web3signer, clef, a KMS proxy)
  --from <address>         The remote signer's account (required with --remote-signer)
  --write <configs dir>    Write the entries into chains.<environment>.json (and chains.hub.<environment>.json)
  --environment <name>     The environment --write updates (required with --write)
  -h, --help               Show this text

The key is never taken as a flag value. Without a key or remote signer, the command only verifies.
Exit status: 0 deployed or already deployed, 1 on a deployment problem, 2 on a usage error.
`

function usage(output: CliOutput, message: string): number {
  output.stderr(`pontis deploy: ${message}\n\n${DEPLOY_USAGE}`)
  return 2
}

/** Runs `pontis deploy <args>`; answers the exit code. */
export async function runDeployCommand(
  args: readonly string[],
  output: CliOutput,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  let values: ReturnType<typeof parse>['values']
  const parse = (argv: string[]) =>
    parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        'rpc-url': { type: 'string' },
        allocator: { type: 'string' },
        salt: { type: 'string' },
        'chain-name': { type: 'string' },
        hub: { type: 'boolean' },
        'hub-signer': { type: 'string', multiple: true },
        'hub-threshold': { type: 'string' },
        'hub-name': { type: 'string' },
        'hub-version': { type: 'string' },
        'key-env': { type: 'string' },
        'remote-signer': { type: 'string' },
        from: { type: 'string' },
        write: { type: 'string' },
        environment: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  try {
    ;({ values } = parse([...args]))
  } catch (error) {
    return usage(output, error instanceof Error ? error.message : String(error))
  }
  if (values.help) {
    output.stdout(DEPLOY_USAGE)
    return 0
  }
  const rpcUrl = values['rpc-url']
  if (rpcUrl === undefined) return usage(output, '--rpc-url is required')
  if (!/^https?:\/\//.test(rpcUrl)) return usage(output, '--rpc-url must be an http(s) URL')
  const allocator = values.allocator
  if (allocator === undefined || !isEvmAddress(allocator))
    return usage(output, '--allocator must be the allocator address (0x + 40 hex digits)')
  const chainName = values['chain-name']
  if (chainName !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(chainName))
    return usage(output, '--chain-name: lower-case letters, digits and "-"')
  let hub: HubParameters | undefined
  if (values.hub) {
    const signers = values['hub-signer'] ?? []
    if (signers.length === 0) return usage(output, '--hub needs at least one --hub-signer')
    const bad = signers.find((signer) => !isEvmAddress(signer))
    if (bad !== undefined) return usage(output, `--hub-signer ${bad} is not an address`)
    if (new Set(signers.map((signer) => signer.toLowerCase())).size !== signers.length)
      return usage(output, '--hub-signer: each signer once')
    const threshold = values['hub-threshold'] ?? '1'
    if (!/^[1-9][0-9]{0,3}$/.test(threshold) || Number(threshold) > signers.length)
      return usage(output, `--hub-threshold must be from 1 to the number of signers (${signers.length})`)
    hub = {
      name: values['hub-name'] ?? 'PontisOracle',
      version: values['hub-version'] ?? '1',
      signers: signers as Address[],
      threshold: BigInt(threshold),
    }
  }
  if ((values.write === undefined) !== (values.environment === undefined))
    return usage(output, '--write and --environment go together')
  if (values.environment !== undefined && !/^[a-z0-9][a-z0-9_-]*$/.test(values.environment))
    return usage(output, '--environment: lower-case letters, digits, "-" and "_"')

  let signer: DeploySigner | undefined
  const remote = values['remote-signer']
  if (remote !== undefined) {
    if (!/^https?:\/\//.test(remote)) return usage(output, '--remote-signer must be an http(s) URL')
    if (values.from === undefined || !isEvmAddress(values.from))
      return usage(output, '--remote-signer needs --from <the signing account address>')
    signer = remoteSigner(remote, values.from)
  } else {
    const variable = values['key-env'] ?? DEFAULT_KEY_VARIABLE
    const key = env[variable]
    if (key !== undefined && key !== '') {
      if (!/^(0x)?[0-9a-fA-F]{64}$/.test(key))
        return usage(output, `${variable} is not a 32-byte hex private key (its value is not shown)`)
      signer = privateKeySigner((key.startsWith('0x') ? key : `0x${key}`) as Hex)
    } else if (values['key-env'] !== undefined) {
      return usage(output, `${variable} is not set`)
    }
  }

  try {
    const result = await deployContracts({
      rpcUrl,
      allocator,
      ...(values.salt !== undefined ? { salt: parseSalt(values.salt) } : {}),
      ...(hub !== undefined ? { hub } : {}),
      ...(signer !== undefined ? { signer } : {}),
      log: (line) => output.stderr(`${line}\n`),
    })
    const name = chainName ?? `chain-${result.chainId}`
    const entries = configEntries(result, { chainName: name, ...(hub !== undefined ? { hub } : {}) })
    const deployedNow = result.contracts.filter((contract) => contract.status === 'deployed').length
    output.stderr(
      deployedNow === 0
        ? `chain ${result.chainId}: every contract was already deployed and verified; nothing was sent\n`
        : `chain ${result.chainId}: ${deployedNow} contract(s) deployed and verified\n`,
    )
    output.stdout(`${JSON.stringify({ ...result, config: entries }, null, 2)}\n`)
    if (values.write !== undefined && values.environment !== undefined) {
      const written = await writeDeploymentConfig(values.write, values.environment, entries)
      output.stderr(
        `wrote ${written.chainsFile}${written.hubFile ? ` and ${written.hubFile}` : ''}${
          written.createdChain ? ` (new chain entry: set ${rpcUrlVariable(name)} to its RPC URL)` : ''
        }\n`,
      )
    }
    return 0
  } catch (error) {
    if (error instanceof DeployError) {
      output.stderr(`pontis deploy: ${error.message}\n`)
      return 1
    }
    throw error
  }
}
