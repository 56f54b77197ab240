/**
 * Why the Bitcoin devnet refuses a transaction, in bitcoind's terms: the JSON-RPC error code
 * `sendrawtransaction` would answer and its reject reason, which Esplora passes on as
 * `sendrawtransaction RPC error: {"code":-26,"message":"<reason>"}` with HTTP 400.
 */

/** The bitcoind RPC error codes the devnet uses. */
export const BITCOIN_RPC_ERROR = Object.freeze({
  /** RPC_DESERIALIZATION_ERROR: the hex is not a transaction. */
  deserialization: -22,
  /** RPC_TRANSACTION_ERROR: missing or spent inputs, fee or burn above the broadcast limits. */
  transaction: -25,
  /** RPC_TRANSACTION_REJECTED: refused by consensus or policy (mempool acceptance). */
  rejected: -26,
  /** RPC_TRANSACTION_ALREADY_IN_CHAIN. */
  alreadyInChain: -27,
})

/** A refused transaction: `code` is the bitcoind RPC error code, `reason` its message. */
export class BitcoinRejection extends Error {
  readonly code: number
  readonly reason: string

  constructor(code: number, reason: string) {
    super(reason)
    this.name = 'BitcoinRejection'
    this.code = code
    this.reason = reason
  }

  /** Refused by mempool acceptance (-26), e.g. `txn-mempool-conflict`. */
  static rejected(reason: string): BitcoinRejection {
    return new BitcoinRejection(BITCOIN_RPC_ERROR.rejected, reason)
  }

  /** The text Esplora answers a refused `POST /tx` with. */
  esploraMessage(): string {
    return `sendrawtransaction RPC error: ${JSON.stringify({ code: this.code, message: this.reason })}`
  }
}
