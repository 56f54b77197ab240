import type { Logger } from '@pontis/core'

export interface Loop {
  /** Stops after the pass in progress, if any, has finished. */
  stop(): Promise<void>
}

/**
 * Runs `pass` again and again, `intervalMs` apart, never two at once; errors are logged, not fatal.
 * When `again(result)` says a pass left work behind (a full batch), the next pass starts at once
 * instead of after the pause, so a backlog drains at the speed of the work, not of the timer.
 */
export function startLoop<Result>(
  name: string,
  pass: () => Promise<Result>,
  intervalMs: number,
  logger: Logger,
  again: (result: Result) => boolean = () => false,
): Loop {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  const run = () => {
    running = pass()
      .then(
        (result) => again(result),
        (error: unknown) => {
          logger.warn(`${name} pass failed`, { error: String(error) })
          return false
        },
      )
      .then((more) => {
        if (!stopped) timer = setTimeout(run, more ? 0 : intervalMs)
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
