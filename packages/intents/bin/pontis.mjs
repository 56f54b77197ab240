#!/usr/bin/env node
// The `pontis` command: runs src/keys/cli.ts through tsx (the workspace ships TypeScript sources).
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../src/keys/cli.ts')
process.exitCode = await main()
