import { type Hash, type PublicClient, type TransactionReceipt, TransactionReceiptNotFoundError } from 'viem'

/** How long set-up waits for one of its own transactions to be mined. */
const MINED_WITHIN_MS = 120_000
const POLL_MS = 25
/** Polls without a receipt before the devnet mines a block itself (250 ms). */
const POLLS_BEFORE_MINING = 10

/**
 * The receipt of a transaction the devnet sent, once anvil has mined it.
 *
 * Automine builds one block when a transaction arrives, filled with the ready transactions that fit
 * its gas limit; ready transactions that did not fit wait for the next block, which a quiet devnet
 * never mines (receipts.test.ts). So after a short wait without a receipt, this mines a block itself.
 * Not the whole story: with a core kept busy, one DEX set-up transaction was still seen pending for
 * the full 120 s (crash-recovery, scale-out and prices-live start-ups, one in each such run); open.
 */
export async function minedReceipt(client: PublicClient, hash: Hash): Promise<TransactionReceipt> {
  const deadline = Date.now() + MINED_WITHIN_MS
  for (let poll = 1; ; poll++) {
    const receipt = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
      if (error instanceof TransactionReceiptNotFoundError) return undefined
      throw error
    })
    if (receipt) return receipt
    if (Date.now() > deadline)
      throw new Error(`devnet set-up: transaction ${hash} was not mined within ${MINED_WITHIN_MS / 1000} s`)
    if (poll % POLLS_BEFORE_MINING === 0) await client.request({ method: 'evm_mine' } as never)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}
