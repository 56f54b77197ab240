#!/usr/bin/env node
// Runs the TypeScript entry through tsx's loader, so the command needs no build step. Where the
// entry has a compiled twin beside it (the test suite's compiled mirror of the tree), runs that.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const source = join(dirname(fileURLToPath(import.meta.url)), '..', 'src')
const compiled = join(source, 'main.js')
// tsx is resolved from this package, not from the caller's directory, so the command works anywhere.
const nodeArguments = existsSync(compiled)
  ? [compiled]
  : ['--import', import.meta.resolve('tsx'), join(source, 'main.ts')]
const result = spawnSync(process.execPath, [...nodeArguments, ...process.argv.slice(2)], {
  stdio: 'inherit',
})
process.exit(result.status ?? 1)
