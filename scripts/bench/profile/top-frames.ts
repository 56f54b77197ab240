/**
 * Summarizes a V8 CPU profile (`node --cpu-prof`): self time by function and by package, largest
 * first, as Markdown tables. The flame graph itself opens in Chrome DevTools (Performance panel,
 * "Load profile") or speedscope; this is the part that fits in a results page.
 *
 *   npx tsx scripts/bench/profile/top-frames.ts /tmp/prof/CPU.*.cpuprofile [--top 25]
 */
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { type CpuProfile, type FrameShare, summarizeProfile } from './cpu-profile.js'

function table(title: string, rows: readonly FrameShare[], top: number): string {
  return [
    `| ${title} | self ms | share |`,
    '| --- | --- | --- |',
    ...rows
      .slice(0, top)
      .map((row) => `| ${row.key} | ${row.selfMs.toFixed(0)} | ${(row.share * 100).toFixed(1)} % |`),
  ].join('\n')
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { top: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  })
  const top = Number(values.top ?? 25)
  for (const file of positionals) {
    const { functions, packages } = summarizeProfile(JSON.parse(await readFile(file, 'utf8')) as CpuProfile)
    console.log(`${file}\n`)
    console.log(table('package', packages, top))
    console.log()
    console.log(table('function', functions, top))
    console.log()
  }
}

await main()
