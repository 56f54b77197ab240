/**
 * Fails when `generated/` differs from what `npm run generate` would write now: the OpenAPI
 * documents are the source of truth and generated code is never edited by hand.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DOCUMENTS, generate, REPO_ROOT } from './generate.js'

async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort()
}

/** Every difference between two generated trees, as sentences naming the file. */
export async function findDrift(committedRoot: string, freshRoot: string): Promise<string[]> {
  const drift: string[] = []
  for (const name of DOCUMENTS) {
    const committed = await listFiles(join(committedRoot, name))
    const fresh = await listFiles(join(freshRoot, name))
    for (const file of [...new Set([...committed, ...fresh])].sort()) {
      const [a, b] = await Promise.all([
        readFile(join(committedRoot, name, file), 'utf8').catch(() => undefined),
        readFile(join(freshRoot, name, file), 'utf8').catch(() => undefined),
      ])
      if (a === undefined) drift.push(`generated/${name}/${file} is missing`)
      else if (b === undefined) drift.push(`generated/${name}/${file} should not exist`)
      else if (a !== b) drift.push(`generated/${name}/${file} differs`)
    }
  }
  return drift
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const scratch = await mkdtemp(join(tmpdir(), 'pontis-generated-'))
  try {
    await generate(scratch)
    const drift = await findDrift(join(REPO_ROOT, 'generated'), scratch)
    if (drift.length > 0) {
      console.error(
        `generated/ is out of date with openapi/ (run \`npm run generate\`):\n  ${drift.join('\n  ')}`,
      )
      process.exitCode = 1
    } else {
      console.log('generated/ matches openapi/')
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}
