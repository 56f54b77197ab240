/**
 * @pontis/plugin-testkit: the conformance suite every Pontis VM plugin runs against itself on its
 * devnet, and the validator it checks served step items with. See README.md for a plugin author's
 * guide.
 */
export { pluginConfigDefaults, runPluginConformance } from './conformance.js'
export type {
  DepositRoundTrip,
  FillingFixtures,
  IdentityTable,
  PluginConformanceFixtures,
  QuotingFixtures,
  ReadingFixtures,
} from './fixtures.js'
export {
  createStepItemValidator,
  INTENTS_OPENAPI_PATH,
  loadStepItemValidator,
  STEP_ITEM_DATA_POINTER,
  type StepItemValidator,
} from './step-items.js'
