/**
 * The execute API redeems only the authorizations the request's origin family declares
 * (`permitKinds`): any other kind is a 400 UNSUPPORTED_EXECUTION_TYPE naming what the origin
 * accepts, before anything is queued.
 */
import { ERROR_CATALOG, PontisError, type Registry } from '@pontis/core'
import evm from '@pontis/plugin-evm'
import t, { type Test } from 'tap'
import svm from '../../../plugins/svm/src/index.js'
import { createLifecycleHandlers } from '../src/lifecycle/handlers.js'

const REQUEST_ID = `0x${'ab'.repeat(32)}`
const chains = {
  31337: { id: 31337, plugin: evm, record: { displayName: 'Pontis Local A' } },
  792703809: { id: 792703809, plugin: svm, record: { displayName: 'Solana' } },
}

function executeFor(originChainId: keyof typeof chains) {
  let queued = 0
  const request = { id: REQUEST_ID, originChainId, status: 'waiting', quote: { permits: [] }, inTxHashes: [] }
  const { executePermit } = createLifecycleHandlers({
    registry: { chain: (id: number) => chains[id as keyof typeof chains] } as unknown as Registry,
    lifecycle: {
      requests: { getRequest: async () => request },
      enqueue: async () => {
        queued++
      },
    } as unknown as Parameters<typeof createLifecycleHandlers>[0]['lifecycle'],
    indexer: {} as Parameters<typeof createLifecycleHandlers>[0]['indexer'],
    solver: {} as Parameters<typeof createLifecycleHandlers>[0]['solver'],
  })
  const post = (kind: string) =>
    executePermit({ body: { kind, requestId: REQUEST_ID }, query: { signature: '0x00' } } as Parameters<
      typeof executePermit
    >[0])
  return { post, queued: () => queued }
}

async function refusal(t: Test, attempt: unknown): Promise<PontisError> {
  const error = await Promise.resolve(attempt).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  t.type(error, PontisError)
  return error as PontisError
}

t.test('a kind the origin family does not declare is refused with a catalogued 400', async (t) => {
  const evmOrigin = executeFor(31337)
  const error = await refusal(t, evmOrigin.post('eip2612-permit'))
  t.equal(error.code, 'UNSUPPORTED_EXECUTION_TYPE')
  t.equal(ERROR_CATALOG[error.code].status, 400)
  t.match(
    error.message,
    /Pontis Local A \(31337\) accepts permits of kind eip3009-receive, not eip2612-permit/,
  )
  t.same(error.errorData, { kind: 'eip2612-permit', accepted: ['eip3009-receive'] })
  t.equal(evmOrigin.queued(), 0, 'nothing was queued')
})

t.test('a family without permits refuses every kind', async (t) => {
  const svmOrigin = executeFor(792703809)
  const error = await refusal(t, svmOrigin.post('eip3009-receive'))
  t.equal(error.code, 'UNSUPPORTED_EXECUTION_TYPE')
  t.match(error.message, /Solana \(792703809\) accepts no permits, not eip3009-receive/)
})

t.test('a declared kind the quote did not issue is still refused', async (t) => {
  const error = await refusal(t, executeFor(31337).post('eip3009-receive'))
  t.equal(error.code, 'UNSUPPORTED_EXECUTION_TYPE')
  t.match(error.message, /issued no signature of kind eip3009-receive/)
})
