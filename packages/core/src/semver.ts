/**
 * Just enough semver to check a plugin's `coreApi` range against the core API version, with no
 * dependency. Versions are plain `major.minor.patch` (no pre-release or build tags). Ranges are
 * one or more comparator sets joined by `||`; a set is space-separated comparators, each one of
 * `^x.y.z`, `~x.y.z`, `>=x.y.z`, `>x.y.z`, `<=x.y.z`, `<x.y.z`, `=x.y.z` or `x.y.z`
 * (so `>=1.2.0 <2.0.0` and `^1.0.0 || ^2.0.0` both work). Semantics follow npm's.
 */

/** A parsed `major.minor.patch` version. */
export interface SemanticVersion {
  readonly major: number
  readonly minor: number
  readonly patch: number
}

type Operator = '>=' | '>' | '<=' | '<' | '='

interface Comparator {
  readonly operator: Operator
  readonly version: SemanticVersion
}

const VERSION = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/
const COMPARATOR = /^(\^|~|>=|>|<=|<|=)?(.*)$/

/**
 * Parses `major.minor.patch`.
 * @throws RangeError when `text` is not of that form.
 */
export function parseVersion(text: string): SemanticVersion {
  const match = VERSION.exec(text)
  if (match === null) throw new RangeError(`'${text}' is not a version of the form major.minor.patch`)
  const [major, minor, patch] = match.slice(1).map(Number)
  if (![major, minor, patch].every(Number.isSafeInteger)) {
    throw new RangeError(`'${text}' has a component too large to compare`)
  }
  return { major: major!, minor: minor!, patch: patch! }
}

/** Negative when `a < b`, zero when equal, positive when `a > b`. */
export function compareVersions(a: SemanticVersion, b: SemanticVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch
}

function parseComparator(text: string, range: string): Comparator[] {
  const [, prefix = '=', rest = ''] = COMPARATOR.exec(text) ?? []
  let version: SemanticVersion
  try {
    version = parseVersion(rest)
  } catch {
    throw new RangeError(`'${range}' is not a supported version range: '${text}' is not a comparator`)
  }
  const { major, minor, patch } = version
  switch (prefix) {
    case '^': {
      // The left-most non-zero component may not change: ^1.2.3 <2.0.0, ^0.2.3 <0.3.0, ^0.0.3 <0.0.4.
      const upper =
        major > 0
          ? { major: major + 1, minor: 0, patch: 0 }
          : minor > 0
            ? { major: 0, minor: minor + 1, patch: 0 }
            : { major: 0, minor: 0, patch: patch + 1 }
      return [
        { operator: '>=', version },
        { operator: '<', version: upper },
      ]
    }
    case '~':
      return [
        { operator: '>=', version },
        { operator: '<', version: { major, minor: minor + 1, patch: 0 } },
      ]
    default:
      return [{ operator: prefix as Operator, version }]
  }
}

function parseRange(range: string): Comparator[][] {
  if (typeof range !== 'string' || range.trim() === '') {
    throw new RangeError(`'${String(range)}' is not a supported version range`)
  }
  return range.split('||').map((set) => {
    // Allow a space between an operator and its version (">= 1.0.0"), as npm does.
    const comparators = set
      .trim()
      .replace(/(>=|<=|>|<|=)\s+/g, '$1')
      .split(/\s+/)
    if (comparators.length === 1 && comparators[0] === '') {
      throw new RangeError(`'${range}' is not a supported version range: empty comparator set`)
    }
    return comparators.flatMap((comparator) => parseComparator(comparator, range))
  })
}

function test(version: SemanticVersion, comparator: Comparator): boolean {
  const order = compareVersions(version, comparator.version)
  switch (comparator.operator) {
    case '>=':
      return order >= 0
    case '>':
      return order > 0
    case '<=':
      return order <= 0
    case '<':
      return order < 0
    case '=':
      return order === 0
  }
}

/**
 * Checks that a range is one `satisfiesRange` understands.
 * @throws RangeError naming the range and the part that is not understood.
 */
export function assertValidRange(range: string): void {
  parseRange(range)
}

/**
 * True when `version` is inside `range` (`satisfiesRange('1.4.0', '^1.0.0') === true`).
 * @throws RangeError when either is malformed: an unreadable range is a bug to report, not a "no".
 */
export function satisfiesRange(version: string, range: string): boolean {
  const parsedVersion = parseVersion(version)
  return parseRange(range).some((set) => set.every((comparator) => test(parsedVersion, comparator)))
}
