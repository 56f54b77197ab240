import { type Hash, type PublicClient, type TransactionReceipt, TransactionReceiptNotFoundError } from 'viem'

/** How long set-up waits for one of its own transactions to be mined. */
const MINED_WITHIN_MS = 120_000
const POLL_MS = 25

/**
 * The receipt of a transaction the devnet sent, asked for directly until anvil has mined it.
 * viem's `waitForTransactionReceipt` goes through its block-number watcher; with a core kept busy,
 * two devnet start-ups waited out its 180 s for a set-up transaction of an automining chain (seen in
 * crash-recovery and scale-out; the same files pass on a quiet machine). Reading the receipt itself
 * depends on nothing but the transaction being mined.
 */
export async function minedReceipt(client: PublicClient, hash: Hash): Promise<TransactionReceipt> {
  const deadline = Date.now() + MINED_WITHIN_MS
  for (;;) {
    const receipt = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
      if (error instanceof TransactionReceiptNotFoundError) return undefined
      throw error
    })
    if (receipt) return receipt
    if (Date.now() > deadline)
      throw new Error(`devnet set-up: transaction ${hash} was not mined within ${MINED_WITHIN_MS / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}
