/**
 * Regenerates the typed clients from the OpenAPI documents with @hey-api/openapi-ts:
 * `generated/intents` from openapi/intents.yaml and `generated/oracle` from openapi/oracle.yaml.
 * Usage: `npm run generate` (or `tsx scripts/generate.ts <outputRoot>` to write elsewhere).
 * Only the document folders are replaced: `generated/package.json`, the manifest of the
 * `@pontis/generated` workspace the other packages import the clients through, is left as it is.
 */
import { rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient } from '@hey-api/openapi-ts'
import { sourceModuleUrl } from '@pontis/core'

export const REPO_ROOT = resolve(fileURLToPath(new URL('..', sourceModuleUrl(import.meta.url))))
export const DOCUMENTS = ['intents', 'oracle'] as const

export async function generate(outputRoot: string): Promise<void> {
  for (const name of DOCUMENTS) {
    const output = join(outputRoot, name)
    await rm(output, { recursive: true, force: true })
    await createClient({
      input: join(REPO_ROOT, 'openapi', `${name}.yaml`),
      output: { path: output, importFileExtension: '.js' },
      plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/schemas', '@hey-api/sdk'],
      logs: { level: 'silent', file: false },
    })
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outputRoot = resolve(process.argv[2] ?? join(REPO_ROOT, 'generated'))
  await generate(outputRoot)
  console.log(`generated ${DOCUMENTS.join(', ')} into ${outputRoot}`)
}
