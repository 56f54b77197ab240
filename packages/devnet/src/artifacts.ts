/**
 * Typed access to the compiled contracts. The ABIs come from `abis.gen.ts` (written by
 * `scripts/compile.ts` next to `artifacts/*.json`), typed `as const` so viem infers argument, return
 * and event types.
 */
import { fileURLToPath } from 'node:url'
import type { Abi, Hex } from 'viem'
import {
  pontisCallExecutorAbi,
  pontisCallExecutorBytecode,
  pontisCallExecutorDeployedBytecode,
  pontisDepositoryAbi,
  pontisDepositoryBytecode,
  pontisDepositoryDeployedBytecode,
  pontisDepositReceiverAbi,
  pontisDepositReceiverBytecode,
  pontisDepositReceiverDeployedBytecode,
  pontisMulticallerAbi,
  pontisMulticallerBytecode,
  pontisMulticallerDeployedBytecode,
  pontisOracleHubAbi,
  pontisOracleHubBytecode,
  pontisOracleHubDeployedBytecode,
  pontisUsdAbi,
  pontisUsdBytecode,
  pontisUsdDeployedBytecode,
} from './abis.gen.js'

export {
  pontisCallExecutorAbi,
  pontisCallExecutorBytecode,
  pontisCallExecutorDeployedBytecode,
  pontisDepositoryAbi,
  pontisDepositoryBytecode,
  pontisDepositoryDeployedBytecode,
  pontisDepositReceiverAbi,
  pontisDepositReceiverBytecode,
  pontisDepositReceiverDeployedBytecode,
  pontisMulticallerAbi,
  pontisMulticallerBytecode,
  pontisMulticallerDeployedBytecode,
  pontisOracleHubAbi,
  pontisOracleHubBytecode,
  pontisOracleHubDeployedBytecode,
  pontisUsdAbi,
  pontisUsdBytecode,
  pontisUsdDeployedBytecode,
}

/** A deployable contract: typed ABI plus creation and runtime bytecode. */
export interface ContractArtifact<TAbi extends Abi = Abi> {
  contractName: string
  abi: TAbi
  bytecode: Hex
  deployedBytecode: Hex
}

/** The depository (RelayDepository-compatible). */
export const PONTIS_DEPOSITORY: ContractArtifact<typeof pontisDepositoryAbi> = {
  contractName: 'PontisDepository',
  abi: pontisDepositoryAbi,
  bytecode: pontisDepositoryBytecode,
  deployedBytecode: pontisDepositoryDeployedBytecode,
}

/** Forwards direct native deposits (a transfer whose calldata is the request id) into the depository. */
export const PONTIS_DEPOSIT_RECEIVER: ContractArtifact<typeof pontisDepositReceiverAbi> = {
  contractName: 'PontisDepositReceiver',
  abi: pontisDepositReceiverAbi,
  bytecode: pontisDepositReceiverBytecode,
  deployedBytecode: pontisDepositReceiverDeployedBytecode,
}

/** The fill multicaller: payments, then destination calls (run by its executor), tagged with the order id. */
export const PONTIS_MULTICALLER: ContractArtifact<typeof pontisMulticallerAbi> = {
  contractName: 'PontisMulticaller',
  abi: pontisMulticallerAbi,
  bytecode: pontisMulticallerBytecode,
  deployedBytecode: pontisMulticallerDeployedBytecode,
}

/** The executor the multicaller creates to run destination calls away from the solver's approvals. */
export const PONTIS_CALL_EXECUTOR: ContractArtifact<typeof pontisCallExecutorAbi> = {
  contractName: 'PontisCallExecutor',
  abi: pontisCallExecutorAbi,
  bytecode: pontisCallExecutorBytecode,
  deployedBytecode: pontisCallExecutorDeployedBytecode,
}

/** The settlement hub's oracle contract: multisig-verified EIP-712 executions over a balance ledger. */
export const PONTIS_ORACLE_HUB: ContractArtifact<typeof pontisOracleHubAbi> = {
  contractName: 'PontisOracleHub',
  abi: pontisOracleHubAbi,
  bytecode: pontisOracleHubBytecode,
  deployedBytecode: pontisOracleHubDeployedBytecode,
}

/** The 6-decimals stablecoin (EIP-2612, EIP-3009). */
export const PONTIS_USD: ContractArtifact<typeof pontisUsdAbi> = {
  contractName: 'PontisUSD',
  abi: pontisUsdAbi,
  bytecode: pontisUsdBytecode,
  deployedBytecode: pontisUsdDeployedBytecode,
}

/** The directory of the committed `<Name>.json` artifacts, for tools that want the files. */
export const ARTIFACTS_DIRECTORY: string = fileURLToPath(new URL('../artifacts/', import.meta.url))
