import { randomBytes } from 'node:crypto'
import { encodeOrder, hashOrderStruct, type IntentsApi, type Registry } from '@pontis/core'
import type { Hex } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'

/** A fresh 256-bit salt: every quote is a distinct order (and so a distinct request id). */
export function randomSalt(): Hex {
  return `0x${randomBytes(32).toString('hex')}`
}

/**
 * The order id: EIP-712 struct hash of the order (no domain), also the deposit id that pays it.
 * Addresses and currencies are hashed as their chains' bytes (see `encodeOrder`), as the oracle does.
 */
export function orderId(registry: Registry, plain: IntentsApi.Order): Hex {
  const order = encodeOrder(registry, plain)
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
