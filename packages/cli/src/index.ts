export { type CliOutput, EXIT_FAILED, EXIT_PASSED, EXIT_USAGE, runCli, USAGE } from './cli.js'
export {
  type ContractCheck,
  type ContractReport,
  type ContractTestOptions,
  DEFAULT_GENERATED_CASES,
  DEFAULT_SEED,
  discoverHints,
  formatCheck,
  formatReport,
  INTENTS_DOCUMENT,
  ORACLE_DOCUMENT,
  runContractTest,
  type SkippedOperation,
} from './contract-test.js'
export {
  type ConfigEntries,
  codeMismatch,
  configEntries,
  DEFAULT_DEPLOY_SALT,
  DETERMINISTIC_DEPLOYER,
  DeployError,
  type DeployResult,
  type DeploySigner,
  deployContracts,
  immutableSlots,
  planDeployment,
  privateKeySigner,
  remoteSigner,
} from './deploy.js'
export { DEFAULT_KEY_VARIABLE, DEPLOY_USAGE, runDeployCommand } from './deploy-command.js'
export { rpcUrlVariable, writeDeploymentConfig } from './deploy-config.js'
export {
  exampleCases,
  invalidCases,
  listOperations,
  MUTATIONS,
  type Mutation,
  type Operation,
  type OperationParameter,
  type RequestCase,
  validCases,
} from './operations.js'
export { isJsonObject, SchemaArbitraries, type SchemaArbitraryOptions } from './schema-arbitrary.js'
export { type CaseAnswer, caseUrl, sendCase } from './send.js'
export { answerProblems, DEFAULT_ALLOWED_SERVER_ERRORS, errorCatalog, type VerdictRules } from './verdict.js'
