/**
 * A workaround for a floating-point state leak in LiteSVM's program JIT (x86-64 Linux).
 *
 * The sBPF JIT of the agave version litesvm@0.8.0 bundles lowers every register-indirect call
 * (`callx`, used by any program that goes through a function pointer or a trait object, e.g. the
 * memo and SPL Token programs formatting their log lines) through the MMX register MM0 and never
 * executes EMMS (anza-xyz/sbpf#197, fixed upstream in sbpf 0.23). Any MMX instruction marks all eight
 * x87 registers as in use, so after a program ran, the next x87 instruction on the same thread
 * overflows the x87 stack and computes NaN. In Node that thread is the main thread, where x87 is
 * rare but real:
 * - V8 implements the JS `%` operator on non-integer numbers with x87 `fprem`, so the first such
 *   `%` after a transaction returns NaN (two x87 slots; the pops free them again).
 * - V8's GC sizes its pretenuring-feedback hash map with long-double arithmetic (three slots): the
 *   NaN becomes a huge bucket count and the process aborts with `std::bad_alloc`, typically when a
 *   GC runs late in the process or at exit (the abort seen after "a memo transaction, then
 *   getClock()": getClock only allocated enough to make a GC happen).
 *
 * Nothing reachable from JavaScript executes EMMS, so the ledger (1) turns allocation-site
 * pretenuring off for the process, which removes the only deep x87 user, and (2) after every
 * LiteSVM call that may run programs, performs one float `%` itself, which absorbs the overflow and
 * leaves the two slots that every JS-level x87 user (`%`, `String#split`, clamped typed-array
 * stores) needs free again.
 */
import { setFlagsFromString } from 'node:v8'

let pretenuringDisabled = false

/**
 * Turns V8's allocation-site pretenuring off for this process (once). It is only a GC heuristic;
 * turning it off costs a little allocation throughput and nothing else.
 */
export function disableAllocationSitePretenuring(): void {
  if (pretenuringDisabled) return
  setFlagsFromString('--no-allocation-site-pretenuring')
  pretenuringDisabled = true
}

// Operands behind a mutable object, so no compiler folds the `%` away.
const operands = { dividend: 5.5, divisor: 2 }

/**
 * Frees the x87 slots a JIT-ed program left marked as in use (see the module comment). Returns how
 * many float `%` evaluations came out wrong before one came out right: 0 when the x87 state was
 * clean, 1 after a program ran.
 */
export function releaseX87Stack(): number {
  let wrong = 0
  while (wrong < 8 && operands.dividend % operands.divisor !== 1.5) wrong++
  return wrong
}
