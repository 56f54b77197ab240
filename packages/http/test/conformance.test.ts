import { fileURLToPath } from 'node:url'
import t from 'tap'
import { loadOpenApiDocument } from '../src/index.js'
import { ConformanceChecker } from '../src/testing.js'

const fixture = fileURLToPath(new URL('./fixtures/widgets.yaml', import.meta.url))
const json = { 'content-type': 'application/json; charset=utf-8' }

t.test('the conformance checker accepts conforming answers and names each mismatch', async (t) => {
  const { document } = await loadOpenApiDocument(fixture)
  const checker = new ConformanceChecker(document)
  const ok = checker.check({
    method: 'GET',
    path: '/widgets/3',
    status: 200,
    headers: { ...json, 'x-widget-version': '2' },
    body: { id: 3, name: 'a' },
  })
  t.same(ok.problems, [])
  t.equal(ok.operationId, 'getWidget')

  const wrongType = checker.check({
    method: 'GET',
    path: '/widgets/3',
    status: 200,
    headers: { ...json, 'x-widget-version': '2' },
    body: { id: '3', name: 'a' },
  })
  t.match(wrongType.problems.join('\n'), '/id must be integer')

  const missingHeader = checker.check({
    method: 'GET',
    path: '/widgets/3',
    status: 200,
    headers: json,
    body: { id: 3, name: 'a' },
  })
  t.match(missingHeader.problems.join('\n'), 'required header X-Widget-Version is missing')

  const badHeader = checker.check({
    method: 'GET',
    path: '/widgets/3',
    status: 200,
    headers: { ...json, 'x-widget-version': 'v2' },
    body: { id: 3, name: 'a' },
  })
  t.match(badHeader.problems.join('\n'), 'header X-Widget-Version')

  const wrongContentType = checker.check({
    method: 'GET',
    path: '/widgets/3',
    status: 200,
    headers: { 'content-type': 'text/plain', 'x-widget-version': '1' },
    body: 'hi',
  })
  t.match(wrongContentType.problems.join('\n'), 'content type "text/plain" is not one of application/json')

  const errorViaDefault = checker.check({
    method: 'POST',
    path: '/widgets',
    status: 418,
    headers: json,
    body: { message: 'teapot', errorCode: 'X' },
  })
  t.same(errorViaDefault.problems, [], 'any status is allowed through `default`')
  const badError = checker.check({
    method: 'POST',
    path: '/widgets',
    status: 400,
    headers: json,
    body: { errorCode: 'X' },
  })
  t.match(badError.problems.join('\n'), "must have required property 'message'")

  const undocumented = checker.check({
    method: 'GET',
    path: '/unbuilt',
    status: 200,
    headers: json,
    body: { surprise: true },
  })
  t.match(undocumented.problems.join('\n'), 'a body was sent but none is documented')

  const unknownPathError = checker.check({
    method: 'GET',
    path: '/nope',
    status: 404,
    headers: json,
    body: { nope: 1 },
  })
  t.match(
    unknownPathError.problems.join('\n'),
    "must have required property 'message'",
    'errors on unknown paths still use ErrorBody',
  )
})
