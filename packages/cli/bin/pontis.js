#!/usr/bin/env node
// Runs the TypeScript entry through tsx's loader, so the command needs no build step.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const entry = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'main.ts')
// tsx is resolved from this package, not from the caller's directory, so the command works anywhere.
const tsx = import.meta.resolve('tsx')
const result = spawnSync(process.execPath, ['--import', tsx, entry, ...process.argv.slice(2)], {
  stdio: 'inherit',
})
process.exit(result.status ?? 1)
