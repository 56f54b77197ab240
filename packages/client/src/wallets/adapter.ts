/**
 * The contract between `executeQuote` and wallets. The step loop knows no chain family: it hands
 * each step item to the first adapter in the caller's list that claims it. An adapter knows its
 * own format(s) and the chain ids it serves, so a new family (or a format a newer service sends)
 * needs a new adapter, never a change to the client.
 */
import type { Step, StepItemData } from '@pontis/generated/intents'

/**
 * The data of a step item as an adapter sees it: one of the formats of the generated types, or a
 * format this client's types do not know (a newer service, a plugin's own format) that only a
 * third-party adapter claims.
 */
export type ItemData = StepItemData | { readonly format: string; readonly chainId?: number }

/** What the step loop tells an adapter besides the item's data. */
export interface ItemContext {
  /** The step the item belongs to (`id` such as `approve` or `deposit`, `kind`, `requestId`). */
  readonly step: Step
  /** The request the quote created, when it names one. */
  readonly requestId: string | undefined
  /**
   * Aborted when the execution's deadline passes or the caller aborts it; an adapter that can stop
   * waiting (an HTTP call, a receipt poll) should. The execution rejects at that moment either way.
   */
  readonly signal: AbortSignal
}

/**
 * What executing an item produced: a transaction on `chainId` (`txHash` absent when the chain
 * gives none, as a venue that is found by scanning), or a signature the step loop posts where the
 * item says (`post` of a `signature` item).
 */
export type ItemResult = { chainId: number; txHash?: string } | { signature: string }

/**
 * A wallet adapter: claims the step items it can execute and executes them. `Data` is what its
 * claim narrows the item's data to, so `execute` gets it typed.
 *
 * @example A third-party adapter for a format this client does not know:
 * const toy: WalletAdapter<ToyTransfer> = {
 *   name: 'toy wallet',
 *   claims: claimsFormat<ToyTransfer>('toy-transfer'),
 *   async execute(data) { return { chainId: data.chainId, txHash: await toyChain.send(data) } },
 * }
 */
export interface WalletAdapter<Data extends ItemData = ItemData> {
  /** Names the adapter in errors, e.g. `viem wallet on chain 31337`. */
  readonly name: string
  /** True when this adapter executes `data`: its format, on a chain it serves. Synchronous, never throws. */
  claims(data: ItemData): data is Data
  /**
   * Executes a claimed item: sends the transaction (answering once the next step may start, e.g.
   * after inclusion) or signs the payload. A rejection stops the execution with that error.
   */
  execute(data: Data, context: ItemContext): Promise<ItemResult>
}

/** The option every ready-made adapter takes. */
export interface ChainIdsOption {
  /** Serve only items on these chain ids; default every chain of the adapter's format(s). */
  chainIds?: readonly number[]
}

/** Options of the adapters over a family's wallet interface (`evmWalletAdapter`, `svmWalletAdapter`, ...). */
export interface WalletAdapterOptions extends ChainIdsOption {
  /** Names the adapter in errors; default the family's (`svm wallet`), with the chains it serves. */
  name?: string
}

/**
 * The claim most adapters make: items of `format` whose `chainId` is in `chainIds` (every chain
 * when `chainIds` is absent).
 */
export function claimsFormat<Data extends ItemData & { chainId: number }>(
  format: Data['format'],
  chainIds?: readonly number[],
): (data: ItemData) => data is Data {
  return (data): data is Data =>
    data.format === format && (chainIds === undefined || chainIds.includes((data as Data).chainId))
}

/** `base`, and the chains it is limited to: `svm wallet`, `svm wallet on chain 792703809`. */
export function adapterName(base: string, chainIds: readonly number[] | undefined): string {
  if (chainIds === undefined) return base
  return `${base} on chain${chainIds.length === 1 ? '' : 's'} ${chainIds.join(', ')}`
}

/**
 * The adapter of one transaction format: claims it on `options.chainIds`, named `options.name` or
 * `family wallet`; `execute` does the family's part.
 */
export function formatAdapter<Data extends ItemData & { chainId: number }>(
  format: Data['format'],
  family: string,
  options: WalletAdapterOptions,
  execute: (data: Data, context: ItemContext) => Promise<ItemResult>,
): WalletAdapter<Data> {
  return {
    name: options.name ?? adapterName(`${family} wallet`, options.chainIds),
    claims: claimsFormat<Data>(format, options.chainIds),
    execute,
  }
}
