import { createAjv, PontisError, type PreparedStep, type RegisteredChain, type Registry } from '@pontis/core'

type ValidateFunction = ReturnType<ReturnType<typeof createAjv>['compile']>

/** Checks the steps an origin plugin built before they are served. */
export type StepCheck = (chain: RegisteredChain, steps: readonly PreparedStep[]) => void

/**
 * Compiles every registered plugin's step formats once (a bad schema stops start-up) and returns a
 * check that each served item is a format its origin plugin declares, valid under that schema, and
 * that each authorization it issues is of a kind the plugin declares. A plugin serving anything else
 * is a plugin bug: the quote fails (500) naming the plugin instead of handing clients an item no
 * document describes.
 */
export function createStepCheck(registry: Registry): StepCheck {
  const ajv = createAjv({ useDefaults: false })
  const validators = new Map<string, Map<string, ValidateFunction>>()
  for (const { plugin } of registry.plugins()) {
    const formats = new Map<string, ValidateFunction>()
    for (const [format, schema] of Object.entries(plugin.stepFormats ?? {}))
      formats.set(format, ajv.compile(schema))
    validators.set(plugin.name, formats)
  }
  return (chain, steps) => {
    const plugin = chain.plugin
    const fail = (message: string): never => {
      throw new PontisError('UNKNOWN_ERROR', `plugin '${plugin.name}' served ${message}`, {
        chainId: chain.id,
      })
    }
    for (const [stepIndex, step] of steps.entries()) {
      for (const [itemIndex, item] of step.items.entries()) {
        const where = `steps[${stepIndex}].items[${itemIndex}]`
        const format = String(item.data.format)
        const validate = validators.get(plugin.name)?.get(format)
        if (!validate) {
          return fail(`${where} of format '${format}', which it does not declare in stepFormats`)
        }
        if (!validate(item.data)) {
          const reason = ajv.errorsText(validate.errors, { dataVar: `${where}.data` })
          fail(`an item its '${format}' schema refuses: ${reason}`)
        }
        if (item.permit && !plugin.permitKinds?.includes(item.permit.kind)) {
          fail(
            `${where} authorizing a permit of kind '${item.permit.kind}', which it does not declare in permitKinds`,
          )
        }
      }
    }
  }
}
