/**
 * `ConfigError`: a start-up problem an operator must fix (missing variable, bad file, unknown
 * plugin). It is never answered to a client; the process prints it and stops.
 */

import { relative } from 'node:path'

/** One problem, located as precisely as known. */
export interface ConfigIssue {
  /** The file it was found in, when it came from a file. */
  readonly file?: string
  /** Dotted path inside that file, e.g. `chains[0].rpc.url`. */
  readonly path?: string
  /** A sentence an operator can act on. */
  readonly message: string
}

/** Shows a file relative to the working directory when it is inside it, so messages stay short. */
export function displayPath(file: string): string {
  const shown = relative(process.cwd(), file)
  return shown === '' || shown.startsWith('..') ? file : shown
}

function formatIssue(issue: ConfigIssue): string {
  return issue.file === undefined ? issue.message : `${displayPath(issue.file)}: ${issue.message}`
}

/** A configuration problem found at start-up; its message lists every issue found. */
export class ConfigError extends Error {
  /** Every problem found (the message lists them too). */
  readonly issues: readonly ConfigIssue[]
  /** Environment variables named by placeholders that had no value and no default. */
  readonly missingVariables: readonly string[]

  constructor(
    summary: string,
    issues: readonly ConfigIssue[] = [],
    options?: ErrorOptions & { readonly missingVariables?: readonly string[] },
  ) {
    const details = issues.map((issue) => `\n  - ${formatIssue(issue)}`).join('')
    super(`${summary}${details}`, options)
    this.name = 'ConfigError'
    this.issues = issues
    this.missingVariables = options?.missingVariables ?? []
  }
}

export function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError
}
