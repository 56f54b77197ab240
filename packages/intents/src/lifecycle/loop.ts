import type { Logger } from '@pontis/core'

export interface Loop {
  /** Stops after the pass in progress, if any, has finished. */
  stop(): Promise<void>
}

/** Runs `pass` again and again, `intervalMs` apart, never two at once; errors are logged, not fatal. */
export function startLoop(
  name: string,
  pass: () => Promise<unknown>,
  intervalMs: number,
  logger: Logger,
): Loop {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  const run = () => {
    running = pass()
      .then(
        () => undefined,
        (error: unknown) => logger.warn(`${name} pass failed`, { error: String(error) }),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(run, intervalMs)
      })
  }
  timer = setTimeout(run, 0)
  return {
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
