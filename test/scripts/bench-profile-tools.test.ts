/**
 * The measuring tools of the profile and scale-out runs: the counting JSON-RPC proxy forwards
 * answers unchanged and counts every call (batches included) and the repeats within a TTL, the
 * round-robin proxy alternates between its upstreams and forwards bodies intact, and the CPU
 * profile summary attributes self time to functions and packages. No timings are asserted.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { packageOf, summarizeProfile } from '../../scripts/bench/profile/cpu-profile.js'
import { startRoundRobinProxy } from '../../scripts/bench/profile/round-robin.js'
import { repeatedWithin, startCountingProxy, summarizeCalls } from '../../scripts/bench/profile/rpc-proxy.js'

/** A loopback server answering every request with `answer(body)`; closed at the test's end. */
async function loopbackServer(t: Test, answer: (body: string, path: string) => string): Promise<string> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(answer(Buffer.concat(chunks).toString(), request.url ?? '/'))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

type JsonRpcCall = { id: number; method: string; params?: unknown[] }

t.test('the counting proxy forwards answers and counts single and batched calls', async (t) => {
  const node = await loopbackServer(t, (body) => {
    const parsed = JSON.parse(body) as JsonRpcCall | JsonRpcCall[]
    const reply = (call: JsonRpcCall) => ({
      jsonrpc: '2.0',
      id: call.id,
      result: `${call.method}:${call.id}`,
    })
    return JSON.stringify(Array.isArray(parsed) ? parsed.map(reply) : reply(parsed))
  })
  const proxy = await startCountingProxy(node)
  t.teardown(() => proxy.close())
  const send = async (body: unknown) =>
    (
      await fetch(proxy.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()
  t.same(await send({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }), {
    jsonrpc: '2.0',
    id: 1,
    result: 'eth_blockNumber:1',
  })
  const batch = await send([
    { jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: ['0xabc', 'latest'] },
    { jsonrpc: '2.0', id: 3, method: 'eth_getBalance', params: ['0xabc', 'latest'] },
    { jsonrpc: '2.0', id: 4, method: 'eth_getBalance', params: ['0xdef', 'latest'] },
  ])
  t.same(
    (batch as Array<{ result: string }>).map((answer) => answer.result),
    ['eth_getBalance:2', 'eth_getBalance:3', 'eth_getBalance:4'],
    'a batch is answered whole',
  )
  const calls = proxy.calls()
  t.equal(calls.length, 4, 'each call of a batch counts')
  t.equal(summarizeCalls(calls), 'eth_getBalance ×3, eth_blockNumber ×1')
  const repeats = repeatedWithin(calls, 60_000)
  t.equal(repeats.length, 1, 'only the same method with the same params is a repeat')
  t.equal(repeats[0]?.params, JSON.stringify(['0xabc', 'latest']))
  t.equal(repeatedWithin(calls, 0).length, 0, 'nothing repeats within a TTL of 0')
  proxy.reset()
  t.equal(proxy.calls().length, 0, 'reset forgets the calls')
  t.equal(summarizeCalls(proxy.calls()), 'none')
})

t.test('the round-robin proxy alternates between upstreams and forwards bodies', async (t) => {
  const upstreamA = await loopbackServer(t, (body, path) => JSON.stringify({ from: 'a', path, body }))
  const upstreamB = await loopbackServer(t, (body, path) => JSON.stringify({ from: 'b', path, body }))
  const proxy = await startRoundRobinProxy([upstreamA, upstreamB])
  t.teardown(() => proxy.close())
  const answers: Array<{ from: string; path: string; body: string }> = []
  for (let index = 0; index < 4; index++) {
    const response = await fetch(`${proxy.url}/quote/v2?n=${index}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ index }),
    })
    t.equal(response.status, 200)
    answers.push((await response.json()) as { from: string; path: string; body: string })
  }
  t.same(
    answers.map((answer) => answer.from),
    ['a', 'b', 'a', 'b'],
  )
  t.same(
    answers.map((answer) => answer.path),
    ['/quote/v2?n=0', '/quote/v2?n=1', '/quote/v2?n=2', '/quote/v2?n=3'],
  )
  t.same(JSON.parse(answers[3]!.body), { index: 3 }, 'the body arrives intact')
  t.same(proxy.forwarded(), [2, 2])
})

t.test('a CPU profile is summarized by function and by package', async (t) => {
  t.equal(packageOf('file:///repo/node_modules/@noble/hashes/esm/sha3.js'), '@noble/hashes')
  t.equal(packageOf('file:///repo/node_modules/koa/lib/application.js'), 'koa')
  t.equal(packageOf('file:///repo/packages/intents/src/quote/engine.ts'), 'packages/intents')
  t.equal(packageOf('node:internal/streams/readable'), '(node internals)')
  t.equal(packageOf(''), '(V8: GC, idle, program)')
  const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 9 })
  const summary = summarizeProfile({
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 3] },
      { id: 2, callFrame: frame('keccak', 'file:///r/node_modules/@noble/hashes/esm/sha3.js'), children: [] },
      { id: 3, callFrame: frame('quote', 'file:///r/packages/intents/src/quote/engine.ts'), children: [] },
    ],
    samples: [2, 2, 3, 2, 1],
    timeDeltas: [1000, 1000, 2000, 1000, 5000],
  })
  t.same(
    summary.packages.map((row) => [row.key, row.selfMs]),
    [
      ['(V8: GC, idle, program)', 5],
      ['@noble/hashes', 3],
      ['packages/intents', 2],
    ],
  )
  t.equal(summary.functions[1]?.key, 'keccak esm/sha3.js:10')
  t.equal(summary.functions[1]?.share, 0.3)
})
