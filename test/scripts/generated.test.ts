/** The drift check behind `npm run check:generated` sees every kind of hand edit. */
import { access, appendFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { findDrift } from '../../scripts/check-generated.js'
import { generate, REPO_ROOT } from '../../scripts/generate.js'

t.test('committed generated code matches the documents, and edits are caught', async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), 'pontis-drift-test-'))
  t.teardown(() => rm(scratch, { recursive: true, force: true }))
  const committed = join(REPO_ROOT, 'generated')
  t.same(await findDrift(committed, committed), [], 'a tree matches itself')

  const copy = join(scratch, 'copy')
  await cp(committed, copy, { recursive: true })
  await appendFile(join(copy, 'intents', 'types.gen.ts'), '\n// hand edit\n')
  await writeFile(join(copy, 'oracle', 'extra.ts'), 'export {}\n')
  await rm(join(copy, 'oracle', 'sdk.gen.ts'))
  t.same(await findDrift(copy, committed), [
    'generated/intents/types.gen.ts differs',
    'generated/oracle/extra.ts should not exist',
    'generated/oracle/sdk.gen.ts is missing',
  ])
})

t.test('generating keeps the @pontis/generated manifest, and its entries resolve by name', async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), 'pontis-generate-test-'))
  t.teardown(() => rm(scratch, { recursive: true, force: true }))
  const manifest = await readFile(join(REPO_ROOT, 'generated', 'package.json'), 'utf8')
  await writeFile(join(scratch, 'package.json'), manifest)
  await generate(scratch)
  t.equal(await readFile(join(scratch, 'package.json'), 'utf8'), manifest, 'package.json is left as it is')
  t.same(await findDrift(join(REPO_ROOT, 'generated'), scratch), [], 'and the clients are written')

  const { name, exports } = JSON.parse(manifest) as { name: string; exports: Record<string, string> }
  t.equal(name, '@pontis/generated')
  for (const subpath of Object.keys(exports)) {
    const file = fileURLToPath(import.meta.resolve(`${name}/${subpath.slice(2)}`))
    await t.resolves(access(file), `${name}/${subpath.slice(2)} resolves to a file`)
  }
})
