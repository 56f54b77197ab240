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
  /** Environment variables whose values the offending field was built from (its `${VAR}` placeholders). */
  readonly variables?: readonly string[]
}

/** Shows a file relative to the working directory when it is inside it, so messages stay short. */
export function displayPath(file: string): string {
  const shown = relative(process.cwd(), file)
  return shown === '' || shown.startsWith('..') ? file : shown
}

function formatIssue(issue: ConfigIssue): string {
  const from =
    issue.variables === undefined || issue.variables.length === 0
      ? ''
      : ` (the value comes from ${issue.variables.join(', ')})`
  const text = `${issue.message}${from}`
  return issue.file === undefined ? text : `${displayPath(issue.file)}: ${text}`
}

/** A configuration problem found at start-up; its message lists every issue found. */
export class ConfigError extends Error {
  /** Every problem found (the message lists them too). */
  readonly issues: readonly ConfigIssue[]
  /** Environment variables named by placeholders that had no value and no default. */
  readonly missingVariables: readonly string[]

  /** The first line: what is wrong as a whole. */
  readonly summary: string

  constructor(
    summary: string,
    issues: readonly ConfigIssue[] = [],
    options?: ErrorOptions & { readonly missingVariables?: readonly string[] },
  ) {
    const details = issues.map((issue) => `\n  - ${formatIssue(issue)}`).join('')
    super(`${summary}${details}`, options)
    this.name = 'ConfigError'
    this.summary = summary
    this.issues = issues
    this.missingVariables = options?.missingVariables ?? []
  }

  /** The whole error on one line: the summary, then each issue after a `;`. */
  oneLine(): string {
    return [this.summary, ...this.issues.map(formatIssue)].join('; ')
  }
}

export function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError
}

/**
 * What a service prints when it cannot start: one line, never a stack trace. A configuration
 * problem is the operator's to fix and its message names the variable or file; anything else is
 * reduced to its message (a stack would not tell an operator more).
 */
export function startupFailure(error: unknown): string {
  if (isConfigError(error)) return error.oneLine()
  const message = error instanceof Error ? error.message : String(error)
  return message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('; ')
}
