/** The issue-20 import codemod: which import lines it moves, which it leaves, and that it is idempotent. */
import { join } from 'node:path'
import t from 'tap'
import {
  generatedSpecifiers,
  rewriteCoreImports,
  rewriteGeneratedImports,
} from '../../scripts/codemods/issue20-imports.js'
import { REPO_ROOT } from '../../scripts/generate.js'

const PLUGIN_NAMES = new Set(['definePlugin', 'PontisError', 'ChainAdapter', 'ReadCache'])

t.test('named imports of @pontis/core move to the plugin entry only when it has every name', async (t) => {
  const source = [
    "import { definePlugin, type ChainAdapter } from '@pontis/core'",
    'import type { ChainAdapter as Adapter } from "@pontis/core"',
    "export { ReadCache } from '@pontis/core'",
    "import { createRegistry, PontisError } from '@pontis/core'",
    "import * as core from '@pontis/core'",
    "import { definePlugin } from '@pontis/core-extra'",
    "const template = `import {\n  PontisError,\n} from '@pontis/core'`",
  ].join('\n')
  const { text, changes } = rewriteCoreImports(source, PLUGIN_NAMES)
  t.equal(changes, 4)
  t.same(text.split('\n'), [
    "import { definePlugin, type ChainAdapter } from '@pontis/core/plugin'",
    'import type { ChainAdapter as Adapter } from "@pontis/core/plugin"',
    "export { ReadCache } from '@pontis/core/plugin'",
    "import { createRegistry, PontisError } from '@pontis/core'",
    "import * as core from '@pontis/core'",
    "import { definePlugin } from '@pontis/core-extra'",
    'const template = `import {',
    '  PontisError,',
    "} from '@pontis/core/plugin'`",
  ])
  t.equal(rewriteCoreImports(text, PLUGIN_NAMES).changes, 0, 'a second run changes nothing')
})

t.test('relative paths into generated/ become @pontis/generated subpaths', async (t) => {
  const specifiers = await generatedSpecifiers()
  const file = join(REPO_ROOT, 'packages/client/src/wallets/evm.ts')
  const source = [
    "import type { Step } from '../../../../generated/intents/index.js'",
    "import { createClient } from '../../../../generated/intents/client/index.js'",
    "export type * as OracleApi from '../../../../generated/oracle/types.gen.js'",
    "import { adapterName } from './adapter.js'",
    "import { thing } from '../../../../generated/intents/core/utils.gen.js'",
  ].join('\n')
  const { text, changes, problems } = rewriteGeneratedImports(file, source, specifiers)
  t.equal(changes, 3)
  t.same(text.split('\n'), [
    "import type { Step } from '@pontis/generated/intents'",
    "import { createClient } from '@pontis/generated/intents/client'",
    "export type * as OracleApi from '@pontis/generated/oracle/types'",
    "import { adapterName } from './adapter.js'",
    "import { thing } from '../../../../generated/intents/core/utils.gen.js'",
  ])
  t.match(problems, [/generated\/intents\/core\/utils\.gen\.js is not exported by generated\/package\.json/])
  t.equal(rewriteGeneratedImports(file, text, specifiers).changes, 0, 'a second run changes nothing')
})
