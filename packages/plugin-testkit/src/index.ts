/**
 * @pontis/plugin-testkit: the conformance suite every Pontis VM plugin runs against itself on its
 * devnet, and the validator it checks served step items with. See README.md for a plugin author's
 * guide.
 */
export { pluginConfigDefaults, runPluginConformance } from './conformance.js'
export { depositStepsRequest } from './deposit-request.js'
export type {
  DepositRoundTrip,
  ExecutableItem,
  ExecutionFixtures,
  FillingFixtures,
  IdentityTable,
  PluginConformanceFixtures,
  QuotingFixtures,
  ReadingFixtures,
  ServedQuoteFixtures,
} from './fixtures.js'
export {
  type ConformanceService,
  type ConformanceServiceOptions,
  startConformanceService,
} from './intent-service.js'
export {
  createStepItemValidator,
  INTENTS_OPENAPI_PATH,
  loadStepItemValidator,
  STEP_ITEM_DATA_POINTER,
  type StepItemValidator,
} from './step-items.js'
export {
  createTestAdapter,
  type FullTestAdapter,
  type TestChainBase,
  testChainEntry,
} from './test-adapters.js'
