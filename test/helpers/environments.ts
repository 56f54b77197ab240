import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's configs/ folder. */
export const REPO_CONFIG_DIR = resolve(fileURLToPath(new URL('../../configs', import.meta.url)))

/** Placeholders without a default, `${NAME}`, in both files of an environment. */
export async function requiredVariables(environment: string, configDir = REPO_CONFIG_DIR): Promise<string[]> {
  const names = new Set<string>()
  for (const file of [`chains.${environment}.json`, `chains.hub.${environment}.json`]) {
    const text = await readFile(join(configDir, file), 'utf8')
    for (const match of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) names.add(match[1] ?? '')
  }
  return [...names].sort()
}
