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
 * its gas limit. When several arrive while the miner is busy (a loaded machine, set-up sending back to
 * back), those that did not fit stay ready and wait for the next block, which a quiet devnet never
 * mines: the crash-recovery and scale-out start-ups waited out viem's 180 s for one with a core kept
 * busy. So after a short wait without a receipt, this mines a block itself (`evm_mine`).
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
