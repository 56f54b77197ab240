/** Reading V8 CPU profiles (`.cpuprofile`, written by `node --cpu-prof`): self time per function and per package. */

/** One node of the profile's call tree. */
export interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: readonly number[]
}

/** The parts of a `.cpuprofile` this summary reads. */
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[]
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
}

/** Self time in milliseconds and share of all samples, per key. */
export interface FrameShare {
  readonly key: string
  readonly selfMs: number
  readonly share: number
}

/** Where a frame's code lives: `node_modules/<package>`, `packages/<name>` or `plugins/<name>`, node internals, or V8. */
export function packageOf(url: string): string {
  if (url === '') return '(V8: GC, idle, program)'
  if (url.startsWith('node:')) return '(node internals)'
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (modules) return modules[1]!
  const workspace = /\/((?:packages|plugins)\/[^/]+)\//.exec(url)
  if (workspace) return workspace[1]!
  return url.replace(/^file:\/\//, '')
}

/** Self time per function (name, file, line) and per package, largest first. */
export function summarizeProfile(profile: CpuProfile): { functions: FrameShare[]; packages: FrameShare[] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMs = new Map<number, number>()
  let totalMs = 0
  for (const [index, id] of profile.samples.entries()) {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000
    selfMs.set(id, (selfMs.get(id) ?? 0) + ms)
    totalMs += ms
  }
  const functions = new Map<string, number>()
  const packages = new Map<string, number>()
  for (const [id, ms] of selfMs) {
    const frame = byId.get(id)?.callFrame
    if (!frame) continue
    const file = frame.url.split('/').slice(-2).join('/')
    const key =
      `${frame.functionName || '(anonymous)'} ${file ? `${file}:${frame.lineNumber + 1}` : ''}`.trim()
    functions.set(key, (functions.get(key) ?? 0) + ms)
    const where = packageOf(frame.url)
    packages.set(where, (packages.get(where) ?? 0) + ms)
  }
  const ranked = (totals: Map<string, number>) =>
    [...totals]
      .map(([key, ms]) => ({ key, selfMs: ms, share: totalMs > 0 ? ms / totalMs : 0 }))
      .sort((a, b) => b.selfMs - a.selfMs)
  return { functions: ranked(functions), packages: ranked(packages) }
}
