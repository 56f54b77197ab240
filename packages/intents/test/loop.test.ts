/**
 * The worker loop: passes never overlap, errors do not stop it, and a pass that reports a full
 * batch is followed at once by the next (a backlog drains without waiting for the timer).
 */
import { silentLogger } from '@pontis/core'
import t from 'tap'
import { startLoop } from '../src/workers/loop.js'

const HOUR = 3_600_000

t.test('a pass that left work behind is followed at once; an idle one waits the interval', async (t) => {
  let backlog = 7
  let passes = 0
  let drained: () => void = () => {}
  const done = new Promise<void>((resolve) => {
    drained = resolve
  })
  const loop = startLoop(
    'drain',
    async () => {
      passes++
      const taken = Math.min(backlog, 3)
      backlog -= taken
      if (taken < 3) drained()
      return taken
    },
    HOUR,
    silentLogger,
    (taken) => taken === 3,
  )
  await done
  // With an hour between idle passes, only the "full batch" rule can have run passes 2 and 3.
  t.equal(passes, 3, 'batches of 3, 3, then 1 ran back to back')
  t.equal(backlog, 0)
  // Let the pass's promise chain schedule what comes next (microtasks, done by the check phase),
  // then let one timer turn go by: a pass scheduled "at once" was due before this later timer, so
  // it would have run first. No duration is guessed; the timers' order decides.
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setTimeout(resolve, 1))
  t.equal(passes, 3, 'the partial batch waits for the interval')
  await loop.stop()
})

t.test('a failed pass is logged and the loop goes on after the interval', async (t) => {
  const warnings: string[] = []
  const logger = { ...silentLogger, warn: (message: string) => warnings.push(message) }
  let passes = 0
  let second: () => void = () => {}
  const reachedSecond = new Promise<void>((resolve) => {
    second = resolve
  })
  const loop = startLoop(
    'flaky',
    async () => {
      passes++
      if (passes === 1) throw new Error('boom')
      second()
      return 0
    },
    5,
    logger,
    () => true,
  )
  await reachedSecond
  await loop.stop()
  t.same(warnings, ['flaky pass failed'])
  t.equal(passes, 2, 'stopped after the pass in progress')
})
