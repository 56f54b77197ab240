import t from 'tap'
import { assertValidRange, compareVersions, parseVersion, satisfiesRange } from '../src/index.js'

t.test('parseVersion and compareVersions', async (t) => {
  t.same(parseVersion('1.2.3'), { major: 1, minor: 2, patch: 3 })
  for (const bad of ['1.2', '1.2.3.4', 'v1.2.3', '01.2.3', '1.2.3-beta', '', 'a.b.c']) {
    t.throws(() => parseVersion(bad), RangeError, `rejects ${JSON.stringify(bad)}`)
  }
  t.ok(compareVersions(parseVersion('1.10.0'), parseVersion('1.9.9')) > 0, 'numeric, not lexical')
  t.equal(compareVersions(parseVersion('2.0.0'), parseVersion('2.0.0')), 0)
})

t.test('caret ranges', async (t) => {
  t.ok(satisfiesRange('1.0.0', '^1.0.0'))
  t.ok(satisfiesRange('1.9.3', '^1.0.0'))
  t.notOk(satisfiesRange('2.0.0', '^1.0.0'))
  t.notOk(satisfiesRange('0.9.9', '^1.0.0'))
  t.notOk(satisfiesRange('1.1.9', '^1.2.0'))
  t.ok(satisfiesRange('0.2.9', '^0.2.3'))
  t.notOk(satisfiesRange('0.3.0', '^0.2.3'))
  t.notOk(satisfiesRange('0.2.2', '^0.2.3'))
  t.ok(satisfiesRange('0.0.3', '^0.0.3'))
  t.notOk(satisfiesRange('0.0.4', '^0.0.3'))
})

t.test('tilde ranges', async (t) => {
  t.ok(satisfiesRange('1.2.3', '~1.2.3'))
  t.ok(satisfiesRange('1.2.9', '~1.2.3'))
  t.notOk(satisfiesRange('1.3.0', '~1.2.3'))
  t.notOk(satisfiesRange('1.2.2', '~1.2.3'))
})

t.test('comparators, exact versions and sets', async (t) => {
  t.ok(satisfiesRange('1.0.0', '>=1.0.0'))
  t.ok(satisfiesRange('7.0.0', '>=1.0.0'))
  t.notOk(satisfiesRange('0.9.0', '>=1.0.0'))
  t.ok(satisfiesRange('1.0.0', '1.0.0'))
  t.notOk(satisfiesRange('1.0.1', '1.0.0'))
  t.ok(satisfiesRange('1.0.0', '=1.0.0'))
  t.ok(satisfiesRange('1.5.0', '>=1.0.0 <2.0.0'))
  t.notOk(satisfiesRange('2.0.0', '>=1.0.0 <2.0.0'))
  t.ok(satisfiesRange('1.5.0', '>= 1.0.0  < 2.0.0'), 'spaces after operators')
  t.ok(satisfiesRange('1.0.1', '>1.0.0'))
  t.notOk(satisfiesRange('1.0.0', '>1.0.0'))
  t.ok(satisfiesRange('1.0.0', '<=1.0.0'))
  t.ok(satisfiesRange('2.1.0', '^1.0.0 || ^2.0.0'))
  t.notOk(satisfiesRange('3.0.0', '^1.0.0 || ^2.0.0'))
})

t.test('malformed ranges throw instead of answering no', async (t) => {
  for (const bad of ['', 'latest', '^1', '1.x', '>=1.0.0<2.0.0', '^1.0.0 ||', '*']) {
    t.throws(() => satisfiesRange('1.0.0', bad), RangeError, `rejects ${JSON.stringify(bad)}`)
    t.throws(() => assertValidRange(bad), RangeError)
  }
  t.throws(() => satisfiesRange('1.0', '^1.0.0'), RangeError, 'a malformed version too')
})
