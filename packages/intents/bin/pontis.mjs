#!/usr/bin/env node
// The `pontis` command: runs src/keys/cli.ts through tsx (the workspace ships TypeScript sources),
// or its compiled twin where there is one beside it (the test suite's compiled mirror of the tree).
import { existsSync } from 'node:fs'

const compiled = new URL('../src/keys/cli.js', import.meta.url)
let main
if (existsSync(compiled)) {
  ;({ main } = await import(compiled.href))
} else {
  const { register } = await import('tsx/esm/api')
  register()
  ;({ main } = await import('../src/keys/cli.ts'))
}
process.exitCode = await main()
