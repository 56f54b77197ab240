/**
 * Quote stage 4, build the order: the settlement order with its chains as chains, its id (the
 * request id) and the solver's signature; chains become protocol ids only where it is encoded.
 */
import { randomBytes } from 'node:crypto'
import {
  type ChainOrder,
  type DestinationCall,
  encodeOrder,
  hashOrderStruct,
  type IntentsApi,
  ORDER_VERSION,
  PontisError,
  protocolChainIdOf,
  type QuotingCapability,
  type RegisteredChain,
  settlementOrder,
} from '@pontis/core'
import type { Hex } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'
import type { PricedQuote } from './priced-quote.js'
import type { QuoteRequest } from './route.js'

/** One destination call in the order's encoding, which is the destination family's. */
function encodeCall(quoting: QuotingCapability, chain: RegisteredChain, call: DestinationCall): Hex {
  if (!quoting.encodeDestinationCall) {
    throw new PontisError(
      'EXTRA_TXS_NOT_SUPPORTED',
      `${chain.record.displayName} (${chain.record.vmType}) cannot run txs calls: its plugin does not encode them.`,
    )
  }
  return quoting.encodeDestinationCall(call)
}

/** A fresh 256-bit salt: every quote is a distinct order (and so a distinct request id). */
function randomSalt(): Hex {
  return `0x${randomBytes(32).toString('hex')}`
}

/**
 * The order of a priced quote: one input on the origin, refundable an hour after the deadline; one
 * output on the destination; the app fees. `hubName` names the solver's chain when there is a hub;
 * else the origin is the solver's chain.
 */
export function buildOrder(priced: PricedQuote, solver: Hex, hubName: string | undefined): ChainOrder {
  const { route, payout } = priced
  const { origin, destination } = route
  const swap = priced.destinationSwap
  const deadline = Math.floor(priced.expiresAt / 1000)
  return {
    version: ORDER_VERSION,
    solverChainId: hubName ?? protocolChainIdOf(origin.chain),
    solver,
    salt: randomSalt(),
    inputs: [
      {
        payment: {
          chain: origin.chain,
          currency: origin.currency.address,
          amount: priced.charges.breakdown.amountIn.toString(),
          weight: '1',
        },
        refunds: [
          {
            chain: origin.chain,
            recipient: route.refundTo,
            currency: origin.currency.address,
            minimumAmount: '0',
            deadline: deadline + 3600,
            extraData: '0x',
          },
        ],
      },
    ],
    output: {
      chain: destination.chain,
      payments: [
        {
          // A destination swap promises the swapped token: the recipient's payout the fill's logs show.
          recipient: route.recipient,
          currency: swap ? swap.currency.address : destination.currency.address,
          minimumAmount: (swap ? swap.minimumAmountOut : payout.minimumAmountOut).toString(),
          expectedAmount: (swap ? swap.amountOut : payout.paidOut).toString(),
        },
      ],
      calls: priced.calls.map((call) => encodeCall(destination.quoting, destination.chain, call)),
      deadline,
      extraData: '0x',
    },
    fees: priced.charges.breakdown.appFees.map((fee, index) => ({
      recipientChain: origin.chain,
      recipient: route.appFeeRecipients[index] as string,
      currencyChain: origin.chain,
      currency: origin.currency.address,
      amount: fee.toString(),
    })),
  }
}

/**
 * The order id: EIP-712 struct hash of the order (no domain), also the deposit id that pays it.
 * Addresses and currencies are hashed as their chains' bytes (see `encodeOrder`), as the oracle does.
 */
export function orderId(plain: ChainOrder): Hex {
  const order = encodeOrder(plain)
  return hashOrderStruct({
    version: order.version,
    solverChainId: order.solverChainId,
    solver: order.solver,
    salt: BigInt(order.salt),
    inputs: order.inputs.map((input) => ({
      payment: {
        chainId: input.payment.chainId,
        currency: input.payment.currency,
        amount: BigInt(input.payment.amount),
        weight: BigInt(input.payment.weight),
      },
      refunds: input.refunds.map((refund) => ({
        chainId: refund.chainId,
        recipient: refund.recipient,
        currency: refund.currency,
        minimumAmount: BigInt(refund.minimumAmount),
        deadline: refund.deadline,
        extraData: refund.extraData,
      })),
    })),
    output: {
      chainId: order.output.chainId,
      payments: order.output.payments.map((payment) => ({
        recipient: payment.recipient,
        currency: payment.currency,
        minimumAmount: BigInt(payment.minimumAmount),
        expectedAmount: BigInt(payment.expectedAmount),
      })),
      deadline: order.output.deadline,
      calls: [...order.output.calls],
      extraData: order.output.extraData,
    },
    fees: order.fees.map((fee) => ({
      recipientChainId: fee.recipientChainId,
      recipient: fee.recipient,
      currencyChainId: fee.currencyChainId,
      currency: fee.currency,
      amount: BigInt(fee.amount),
    })),
  })
}

/** The solver's order signature: an EIP-191 signature of the order id, as the oracle verifies it. */
export function signOrder(solver: PrivateKeyAccount, id: Hex): Promise<Hex> {
  return solver.signMessage({ message: { raw: id } })
}

/** An order as the quote hands it out: its API form and, where the quote needs them, id, signature, deposit address. */
export interface IssuedOrder {
  readonly order: IntentsApi.Order
  readonly id: Hex | undefined
  readonly orderSignature: Hex | undefined
  readonly depositAddress: string | undefined
}

/**
 * Issues `order`. The id (a struct hash) and the signature are the costly part of a quote: a price
 * without protocol data needs neither, and only protocol data returns the signature.
 */
export async function issueOrder(
  order: ChainOrder,
  request: QuoteRequest,
  withSteps: boolean,
  solver: PrivateKeyAccount,
  originQuoting: QuotingCapability,
): Promise<IssuedOrder> {
  const id = withSteps || request.includeProtocolData ? orderId(order) : undefined
  const orderSignature = id && request.includeProtocolData ? await signOrder(solver, id) : undefined
  const depositAddress =
    id && request.useDepositAddress
      ? await (originQuoting.createDepositAddress as (requestId: string) => Promise<string>)(id)
      : undefined
  // The API's order type is the same shape, with mutable arrays.
  return { order: settlementOrder(order) as IntentsApi.Order, id, orderSignature, depositAddress }
}
