/**
 * The app-fee routes existing clients call (the Relay SDK's `getAppFees` and `claimAppFees`):
 * balances, a claim offered as a signature step, and the post of its signature, verified through the
 * chain family's own message scheme before anything is paid.
 */
import { createHash } from 'node:crypto'
import { canonicalId, formatUnits, type IntentsApi, PontisError, type Registry } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import { toHex } from 'viem'
import { decodeContinuation, encodeContinuation } from '../history/cursor.js'
import type { LifecycleStore } from '../lifecycle/lifecycle-store.js'
import { CurrencyCatalog } from '../quote/currencies.js'
import { formatUsd, type PriceSource, usdValue } from '../quote/prices.js'
import type { AppFeeBalance, AppFeeClaim, AppFeeLedger } from './ledger.js'

/** Claims per page at most (`limit` above it is answered with it). */
const MAX_CLAIMS_PAGE = 50
const CLAIM_ID = /^clm_[0-9a-f]{32}$/

/** The claims history's cursors belong to one wallet's listing. */
function claimsDigest(wallet: string): string {
  return createHash('sha256')
    .update(`app-fee-claims:${canonicalId(wallet)}`)
    .digest('hex')
    .slice(0, 32)
}

type Handler<Data, Responses> = OperationHandler<RequestOf<Data>, ResponseOf<Responses>>

export type AppFeeHandlers = {
  getAppFeeBalances: Handler<IntentsApi.GetAppFeeBalancesData, IntentsApi.GetAppFeeBalancesResponses>
  getAppFeeClaims: Handler<IntentsApi.GetAppFeeClaimsData, IntentsApi.GetAppFeeClaimsResponses>
  claimAppFees: Handler<IntentsApi.ClaimAppFeesData, IntentsApi.ClaimAppFeesResponses>
  executeAppFeeClaim: Handler<IntentsApi.ExecuteAppFeeClaimData, IntentsApi.ExecuteAppFeeClaimResponses>
}

export interface AppFeeHandlerOptions {
  readonly registry: Registry
  readonly prices: PriceSource
  readonly lifecycle: LifecycleStore
  readonly appFees: AppFeeLedger
}

export function createAppFeeHandlers(options: AppFeeHandlerOptions): AppFeeHandlers {
  const { registry, prices, lifecycle, appFees } = options
  const catalogs = new Map<number, CurrencyCatalog>()
  const catalogOf = (chainId: number): CurrencyCatalog => {
    let catalog = catalogs.get(chainId)
    if (!catalog) {
      catalog = new CurrencyCatalog(registry.chain(chainId))
      catalogs.set(chainId, catalog)
    }
    return catalog
  }

  /** An amount of a currency as the app-fee routes answer it (its USD value when priced now). */
  const amountOf = async (
    balance: AppFeeBalance,
  ): Promise<{ answer: IntentsApi.AppFeeBalance; usd: bigint | undefined } | undefined> => {
    const catalog = catalogOf(balance.chainId)
    const currency = catalog.find(balance.currency)
    if (!currency) return undefined
    const usd = await prices
      .usdPrice(currency.entry)
      .then((usdPrice) => usdValue(balance.amount, { usdPrice, decimals: currency.entry.decimals }))
      .catch(() => undefined)
    return {
      answer: {
        currency: catalog.toApi(currency, balance.chainId),
        amount: balance.amount.toString(),
        amountFormatted: formatUnits(balance.amount, currency.entry.decimals),
        ...(usd !== undefined ? { amountUsd: formatUsd(usd) } : {}),
        minimumAmount: balance.amount.toString(),
      },
      usd,
    }
  }

  return {
    getAppFeeBalances: async ({ path }) => {
      let totalUsd = 0n
      const balances: IntentsApi.AppFeeBalance[] = []
      for (const balance of await appFees.balances(path.wallet)) {
        const amount = await amountOf(balance)
        if (!amount) continue
        if (amount.usd !== undefined) totalUsd += amount.usd
        balances.push(amount.answer)
      }
      const total = Number(formatUsd(totalUsd))
      return {
        status: 200,
        body: {
          balances,
          totalBalanceUsd: total,
          outstandingFastFillBalanceUsd: 0,
          availableBalanceUsd: total,
        },
      }
    },

    getAppFeeClaims: async ({ path, query }) => {
      const digest = claimsDigest(path.wallet)
      const after =
        query.continuation === undefined
          ? undefined
          : decodeContinuation(query.continuation, digest, CLAIM_ID)
      const limit = Math.min(Number(query.limit ?? 20), MAX_CLAIMS_PAGE)
      const page = await appFees.claims(path.wallet, limit, after)
      const claims: IntentsApi.AppFeeClaimRecord[] = []
      for (const claim of page.claims) {
        const amount = await amountOf(claim)
        if (!amount) continue
        claims.push({
          claimId: claim.id,
          wallet: claim.wallet,
          recipient: claim.recipient,
          currency: amount.answer,
          txHash: claim.transactionId,
          status: claim.state,
          createdAt: new Date(claim.createdAt).toISOString(),
        })
      }
      return {
        status: 200,
        body: {
          claims,
          ...(page.next ? { continuation: encodeContinuation(page.next, digest) } : {}),
        },
      }
    },

    claimAppFees: async ({ path, body }) => {
      const chain = registry.chain(Number(body.chainId))
      const { identity } = chain.adapter
      const claim = await appFees.offer({
        wallet: identity.normalizeAddress(path.wallet, 'recipient'),
        recipient: identity.normalizeAddress(body.recipient, 'recipient'),
        chainId: chain.id,
        currency: identity.normalizeCurrency(body.currency, 'currency'),
        ...(body.amount !== undefined ? { amount: BigInt(body.amount) } : {}),
      })
      return {
        status: 200,
        body: {
          steps: [
            {
              id: 'claim',
              action: 'Confirm claim in your wallet',
              description: `Sign to claim ${claim.amount} of ${claim.currency} in app fees on ${chain.record.displayName}.`,
              kind: 'signature',
              items: [
                {
                  status: 'incomplete',
                  data: {
                    format: 'signature',
                    sign: { signatureKind: 'eip191', message: claim.message },
                    post: {
                      endpoint: `/app-fees/${encodeURIComponent(path.wallet)}/claim/execute`,
                      method: 'POST',
                      body: { claimId: claim.id },
                    },
                  },
                },
              ],
            },
          ],
          claim: claimAnswer(claim),
        },
      }
    },

    executeAppFeeClaim: async ({ path, query, body }) => {
      const claim = await appFees.claim(body.claimId)
      // Another wallet's claim is answered as unknown: claim ids are not for guessing.
      if (!claim || claim.wallet !== canonicalId(path.wallet)) {
        throw new PontisError(
          'ROUTE_NOT_FOUND',
          `No app fee claim ${body.claimId} was offered to ${path.wallet}.`,
        )
      }
      const chain = registry.chain(claim.chainId)
      const { identity } = chain.adapter
      if (!identity.verifyMessage) {
        throw new PontisError(
          'UNSUPPORTED_CHAIN',
          `${chain.record.displayName} has no message signatures, so app fees there cannot be claimed.`,
        )
      }
      const signed = await identity.verifyMessage(
        claim.wallet,
        toHex(claim.message),
        query.signature as `0x${string}`,
      )
      if (!signed) {
        throw new PontisError(
          'INVALID_SIGNATURE',
          `The signature is not ${path.wallet}'s signature of claim ${claim.id}'s message; sign data.sign.message with that wallet.`,
        )
      }
      const authorized = await appFees.authorize(claim.id, async (tx, terms) => {
        await lifecycle.enqueue(
          {
            jobKey: `app-fee-claim:${terms.id}`,
            requestId: null,
            kind: 'app_fee_claim',
            chainId: terms.chainId,
            payload: {
              claimId: terms.id,
              recipient: terms.recipient,
              currency: terms.currency,
              amount: terms.amount.toString(),
              source: { kind: 'depository' },
              reason: 'app_fee_claim',
            },
          },
          tx,
        )
      })
      return { status: 200, body: claimAnswer(authorized) }
    },
  }
}

function claimAnswer(claim: AppFeeClaim): IntentsApi.AppFeeClaim {
  return {
    claimId: claim.id,
    wallet: claim.wallet,
    recipient: claim.recipient,
    chainId: claim.chainId,
    currency: claim.currency,
    amount: claim.amount.toString(),
    status: claim.state,
    expiresAt: claim.expiresAt,
    txHash: claim.transactionId,
  }
}
