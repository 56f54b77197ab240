import { type IntentsApi, PontisError, type Registry } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import type { StoredQuote } from '../quote/persist.js'
import type { Indexer } from './indexer.js'
import type { LifecycleStore } from './lifecycle-store.js'
import type { Solver } from './solver.js'

type IndexHandler = OperationHandler<
  RequestOf<IntentsApi.IndexTransactionData>,
  ResponseOf<IntentsApi.IndexTransactionResponses>
>
type SameChainHandler = OperationHandler<
  RequestOf<IntentsApi.IndexSameChainTransactionData>,
  ResponseOf<IntentsApi.IndexSameChainTransactionResponses>
>
type ExecuteHandler = OperationHandler<
  RequestOf<IntentsApi.ExecutePermitData>,
  ResponseOf<IntentsApi.ExecutePermitResponses>
>

/** The transaction hash in the Relay SDK's `tx` (the step item's data as JSON): a replacement's first. */
function reportedHash(tx: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(tx)
  } catch {
    parsed = undefined
  }
  const item = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {}
  const hash = item.replacementTxHash ?? item.txHash
  if (typeof hash !== 'string' || hash.length === 0 || hash.length > 128) {
    throw new PontisError(
      'INVALID_REQUEST',
      'tx must be the executed step item as JSON with its txHash (or replacementTxHash).',
    )
  }
  return hash
}

/** `POST /transactions/index`, `POST /transactions/single` and the execute API `POST /execute/permits`. */
export function createLifecycleHandlers(options: {
  registry: Registry
  indexer: Indexer
  lifecycle: LifecycleStore
  solver: Solver
  now?: () => number
}): {
  indexTransaction: IndexHandler
  indexSameChainTransaction: SameChainHandler
  executePermit: ExecuteHandler
} {
  const now = options.now ?? Date.now
  const indexTransaction: IndexHandler = async ({ body }) => {
    const chainId = typeof body.chainId === 'string' ? Number(body.chainId) : body.chainId
    const result = await options.indexer.indexTransaction(chainId, body.txHash)
    return {
      status: result.indexed ? 200 : 202,
      body: {
        message: result.message,
        indexed: result.indexed,
        ...(result.requestId ? { requestId: result.requestId } : {}),
      },
    }
  }

  const indexSameChainTransaction: SameChainHandler = async ({ body }) => {
    const chainId = typeof body.chainId === 'string' ? Number(body.chainId) : body.chainId
    const result = await options.indexer.indexTransaction(chainId, reportedHash(body.tx))
    return {
      status: result.indexed ? 200 : 202,
      body: {
        message: result.message,
        indexed: result.indexed,
        ...(result.requestId ? { requestId: result.requestId } : {}),
      },
    }
  }

  const executePermit: ExecuteHandler = async ({ body, query }) => {
    const request = await options.lifecycle.requests.getRequest(body.requestId)
    if (!request)
      throw new PontisError(
        'REQUEST_NOT_FOUND',
        `No request ${body.requestId}; quote first and post the signature step's body.`,
      )
    // The origin's family says which authorizations it redeems; nothing else reaches the solver.
    const origin = options.registry.chain(request.originChainId)
    const accepted = origin.plugin.permitKinds ?? []
    if (!accepted.includes(body.kind)) {
      throw new PontisError(
        'UNSUPPORTED_EXECUTION_TYPE',
        `${origin.record.displayName} (${origin.id}) accepts ${accepted.length > 0 ? `permits of kind ${accepted.join(', ')}` : 'no permits'}, not ${body.kind}; post the quote's signature step body as issued.`,
        { kind: body.kind, accepted },
      )
    }
    // The quote kept what its signature item authorizes; the body only names it.
    const issued = ((request.quote as Partial<StoredQuote>).permits ?? []).find(
      (permit) => permit.kind === body.kind,
    )
    if (!issued) {
      throw new PontisError(
        'UNSUPPORTED_EXECUTION_TYPE',
        `Request ${request.id} issued no signature of kind ${body.kind}; post its signature step's data.post.body as issued.`,
      )
    }
    const jobKey = `submit_deposit:${request.id}`
    if (request.status !== 'waiting') {
      // A repeated submission of an accepted permit answers the current status.
      return {
        status: 200,
        body: {
          requestId: request.id,
          status: request.status,
          ...(request.inTxHashes[0] ? { txHash: request.inTxHashes[0] } : {}),
        },
      }
    }
    if (BigInt(issued.validBefore) * 1000n <= BigInt(now())) {
      throw new PontisError(
        'SIGNATURE_EXPIRED',
        `The permit expired at ${new Date(Number(issued.validBefore) * 1000).toISOString()}; quote again.`,
        { deadline: Number(issued.validBefore) },
      )
    }
    await options.lifecycle.enqueue({
      jobKey,
      requestId: request.id,
      kind: 'submit_deposit',
      chainId: request.originChainId,
      // Reserved for the synchronous run below; the background solver only picks it up if that failed.
      notBefore: now() + 60_000,
      payload: {
        depositor: request.userAddress,
        currency: request.originCurrency,
        amount: request.amountIn.toString(),
        validAfter: issued.validAfter,
        validBefore: issued.validBefore,
        signature: query.signature,
      },
    })
    // Signed and broadcast now, so the answer carries the transaction; a bad signature is a 400.
    const job = await options.solver.runNow(jobKey)
    const current = await options.lifecycle.requests.getRequest(request.id)
    return {
      status: 200,
      body: {
        requestId: request.id,
        status: current?.status ?? 'waiting',
        ...(job?.transactionId ? { txHash: job.transactionId } : {}),
      },
    }
  }
  return { indexTransaction, indexSameChainTransaction, executePermit }
}
