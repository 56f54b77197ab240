/**
 * @pontis/plugin-__NAME__: the __TITLE__ family (`vmType` '__NAME__').
 *
 * Scaffolded by `npm run new-plugin` with a toy family to replace with the real one (see the
 * README): identity (src/identity.ts), quoting (src/quoting.ts: one signature step), reading
 * (src/reading.ts) and filling (src/filling.ts) over the node API (src/api.ts).
 */
import {
  type AdapterContext,
  type ChainAdapter,
  type ChainConfig,
  definePlugin,
  SIGNATURE_STEP_FORMAT,
} from '@pontis/core/plugin'
import { PERMIT_KIND } from './authorization.js'
import { __CAMEL__ConfigSchema, type __PASCAL__PluginConfig } from './config.js'
import { create__PASCAL__Context } from './context.js'
import { create__PASCAL__Filling } from './filling.js'
import { create__PASCAL__Identity } from './identity.js'
import { create__PASCAL__Quoting } from './quoting.js'
import { create__PASCAL__Reading } from './reading.js'

export default definePlugin<__PASCAL__PluginConfig>({
  vmType: '__NAME__',
  name: '@pontis/plugin-__NAME__',
  coreApi: '^1.0.0',
  configSchema: __CAMEL__ConfigSchema,
  // What the deposit steps serve: a signed authorization, posted to the execute API with this kind.
  stepFormats: { signature: SIGNATURE_STEP_FORMAT },
  permitKinds: [PERMIT_KIND],
  createAdapter(chain: ChainConfig<__PASCAL__PluginConfig>, adapterContext: AdapterContext): ChainAdapter {
    const context = create__PASCAL__Context(chain)
    const identity = create__PASCAL__Identity(context.label)
    adapterContext.logger.debug('adapter created', { depository: context.depository ?? 'none' })
    return {
      identity,
      finality: {
        fastConfirmations: chain.plugin.fastConfirmations,
        slowConfirmations: Math.max(chain.plugin.confirmations, chain.plugin.fastConfirmations),
        slowRequiresFinalized: false,
      },
      // Deposits go to the depository: without one the chain can be configured but not quoted.
      ...(context.depository === undefined
        ? {}
        : { quoting: create__PASCAL__Quoting(context, identity, context.depository) }),
      reading: create__PASCAL__Reading(context, identity),
      filling: create__PASCAL__Filling(context, identity),
      probe: async () => ({ head: String(await context.api.head()) }),
    }
  },
})

export {
  AUTHORIZATION_TYPES,
  type Authorization,
  authorizationOf,
  PERMIT_KIND,
  signerOf,
  typedDataOf,
} from './authorization.js'
export {
  __CAMEL__ConfigSchema,
  __CONSTANT___NATIVE_CURRENCY_ID,
  __CONSTANT___PREFIX,
  __CONSTANT___UNITS,
  type __PASCAL__PluginConfig,
} from './config.js'
export { addressOf, bytesOf, create__PASCAL__Identity } from './identity.js'
export { type __PASCAL__Transaction, transactionIdOf, transferMessage } from './transactions.js'
