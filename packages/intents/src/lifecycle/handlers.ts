import { type IntentsApi, PontisError, type Registry } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import type { Indexer } from './indexer.js'
import type { LifecycleStore } from './lifecycle-store.js'
import type { Solver } from './solver.js'

type IndexHandler = OperationHandler<
  RequestOf<IntentsApi.IndexTransactionData>,
  ResponseOf<IntentsApi.IndexTransactionResponses>
>
type ExecuteHandler = OperationHandler<
  RequestOf<IntentsApi.ExecutePermitData>,
  ResponseOf<IntentsApi.ExecutePermitResponses>
>

/** `POST /transactions/index` and the execute API `POST /execute/permits`. */
export function createLifecycleHandlers(options: {
  registry: Registry
  indexer: Indexer
  lifecycle: LifecycleStore
  solver: Solver
  now?: () => number
}): { indexTransaction: IndexHandler; executePermit: ExecuteHandler } {
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

  const executePermit: ExecuteHandler = async ({ body, query }) => {
    const request = await options.lifecycle.requests.getRequest(body.requestId)
    if (!request)
      throw new PontisError(
        'REQUEST_NOT_FOUND',
        `No request ${body.requestId}; quote first and post the signature step's body.`,
      )
    if (body.kind !== 'eip3009-receive') {
      throw new PontisError(
        'UNSUPPORTED_EXECUTION_TYPE',
        `Permits of kind ${body.kind} are not accepted; sign the quote's eip3009-receive step.`,
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
    const chain = options.registry.chain(request.originChainId)
    const mismatch = [
      body.chainId !== request.originChainId &&
        `chainId is ${body.chainId}, the request's origin is ${request.originChainId}`,
      body.currency.toLowerCase() !== request.originCurrency.toLowerCase() &&
        `currency ${body.currency} is not the quoted ${request.originCurrency}`,
      body.from.toLowerCase() !== request.userAddress.toLowerCase() &&
        `from ${body.from} is not the quoted user ${request.userAddress}`,
      body.value !== request.amountIn.toString() &&
        `value ${body.value} is not the quoted ${request.amountIn}`,
      body.nonce.toLowerCase() !== request.id && 'nonce must be the request id',
      body.to.toLowerCase() !== (chain.record.protocol?.v2?.depository ?? '').toLowerCase() &&
        `to ${body.to} is not the depository`,
    ].filter(Boolean)
    if (mismatch.length > 0) {
      throw new PontisError(
        'INVALID_SIGNATURE',
        `The permit does not match request ${request.id}: ${mismatch.join('; ')}.`,
      )
    }
    if (BigInt(body.validBefore) * 1000n <= BigInt(now())) {
      throw new PontisError(
        'SIGNATURE_EXPIRED',
        `The permit expired at ${new Date(Number(body.validBefore) * 1000).toISOString()}; quote again.`,
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
        depositor: body.from,
        currency: body.currency,
        amount: body.value,
        validAfter: body.validAfter,
        validBefore: body.validBefore,
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
  return { indexTransaction, executePermit }
}
