/** The drift check behind `npm run check:generated` sees every kind of hand edit. */
import { appendFile, cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { findDrift } from '../../scripts/check-generated.js'
import { REPO_ROOT } from '../../scripts/generate.js'

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
