/**
 * What a plugin hands the conformance suite: a chain entry pointing at its devnet, tables of valid
 * and invalid identities, requests to quote, and hooks that make a real deposit and stop the devnet.
 */
import type {
  ChainAdapter,
  ChainEntry,
  DepositFact,
  DepositStepsRequest,
  FillCostRequest,
  Logger,
  OriginCostRequest,
  PreparedStep,
  SolverCredentials,
  TransactionState,
} from '@pontis/core'

/** One step item as a wallet gets it: its `data` (a StepItemData variant) and the step it is in. */
export interface ExecutableItem {
  readonly data: Readonly<Record<string, unknown>>
  /** The whole step, as built or as served (served steps carry their items' `data` only). */
  readonly step: PreparedStep
}

/** A running intent service that serves the fixture chain, and a quote request whose origin it is. */
export interface ServedQuoteFixtures {
  /** Base URL of the service on loopback, e.g. from `startConformanceService`. */
  readonly url: string
  /** The body of `POST /quote`: its origin is the fixture chain; the depositor (`user`) is funded. */
  readonly quoteRequest: Readonly<Record<string, unknown>>
}

/**
 * How the suite executes the deposit steps the plugin serves, as the depositor's wallet does: a
 * plugin whose steps cannot be executed on its devnet fails conformance.
 */
export interface ExecutionFixtures {
  /**
   * Sends one `transaction` item to the devnet (signed by the depositor) and answers its
   * transaction id once the devnet has it in a block. Required when the plugin serves transactions.
   */
  sendTransaction?(item: ExecutableItem): Promise<string>
  /** Signs one `signature` item as the depositor; answers the signature the execute API takes. */
  sign?(item: ExecutableItem): Promise<string>
  /**
   * Execute the steps of a quote this service serves, posting its signature items to the service's
   * execute API (`data.post`). Required when the plugin serves signature steps; without it the
   * suite executes the steps of `buildDepositSteps` directly.
   */
  readonly served?: ServedQuoteFixtures
  /** Without `served`: the deposit whose steps are built and executed. Default `quoting.depositRequest`. */
  readonly depositRequest?: DepositStepsRequest
  /** What reads report as the deposit's `depositId`; default the request id (families tagging by nonce give their tag). */
  readonly depositId?: string
}

/** Values the family must accept and values it must refuse. */
export interface IdentityTable {
  /** Accepted values, in any spelling the family accepts (e.g. lower-case EVM addresses). At least one. */
  readonly valid: readonly string[]
  /** Refused values (wrong length, wrong alphabet, another family's form…). At least one. */
  readonly invalid: readonly string[]
}

/** How the suite exercises the quoting capability. */
export interface QuotingFixtures {
  /**
   * A deposit request the chain can build steps for on its devnet (a funded depositor, a currency
   * the depository takes). Its steps are checked against the document's `StepItemData`.
   */
  readonly depositRequest: DepositStepsRequest
  /** Priced with `estimateOriginCost`; default: derived from `depositRequest` (no permit, no deposit address). */
  readonly originCostRequest?: OriginCostRequest
  /**
   * Priced with `estimateFillCost`; default: `depositRequest`'s depositor paying itself
   * `depositRequest`'s amount and currency, tagged with its request id, no calls, no top-up.
   */
  readonly fillCostRequest?: FillCostRequest
}

/** A deposit made on the devnet, and what `readDeposits` must answer for it. */
export interface DepositRoundTrip {
  /** The deposit transaction's id, as the family spells it. */
  readonly transactionId: string
  /** The facts `readDeposits(transactionId).facts` must equal, in order. */
  readonly facts: readonly DepositFact[]
  /** The state `readDeposits` must report. Default `success`. */
  readonly state?: TransactionState
  /** The finality `readDeposits` must report, when the fixture knows it. Not checked when absent. */
  readonly final?: boolean
}

/** How the suite exercises the reading capability. */
export interface ReadingFixtures {
  /**
   * Makes one deposit on the devnet (for example: builds it with `adapter.quoting`, signs it as a
   * wallet does, sends it and waits until the chain has it) and says what reading it must answer.
   * `adapter` is the one under test, made by the registry from `PluginConformanceFixtures.chain`.
   */
  makeDeposit(adapter: ChainAdapter): Promise<DepositRoundTrip>
  /** A well-formed transaction id the devnet has never seen: `readDeposits` must answer `not_found`. */
  readonly unknownTransactionId: string
  /** Whose native balance is read; default the first valid address. */
  readonly balanceOwner?: string
}

/** How the suite exercises the filling capability. */
export interface FillingFixtures {
  /** The reference solver's keys on the devnet. */
  readonly credentials: SolverCredentials
}

/**
 * Everything {@link runPluginConformance} needs. The capability members (`quoting`, `reading`,
 * `filling`) are required exactly when the adapter declares that capability: a declared capability
 * without its fixture fails the suite, so nothing a plugin offers goes unchecked.
 */
export interface PluginConformanceFixtures {
  /**
   * One chain of the plugin's family as written in `chains.<environment>.json` (placeholders
   * resolved), pointing at the devnet. The suite registers the plugin and adds this chain through
   * the core registry, so the adapter under test is made exactly as the services make it.
   */
  readonly chain: ChainEntry
  /** What `createAdapter` is told: default a silent logger and the `local` environment. */
  readonly context?: { readonly logger?: Logger; readonly environment?: string }
  /** Addresses of the family. */
  readonly addresses: IdentityTable
  /** Currency ids of the family (the native one is checked by the suite itself). */
  readonly currencies: IdentityTable
  /**
   * Extra strings `encodeTransactionId` must refuse with INVALID_REQUEST, on top of the suite's own
   * garbage (empty, spaces, punctuation, too short).
   */
  readonly invalidTransactionIds?: readonly string[]
  /** `plugin` option objects the registry must refuse because of the plugin's `configSchema`. */
  readonly invalidPluginOptions?: readonly Readonly<Record<string, unknown>>[]
  readonly quoting?: QuotingFixtures
  readonly reading?: ReadingFixtures
  readonly filling?: FillingFixtures
  /** Required with `quoting`: how the served deposit steps are executed on the devnet. */
  readonly execution?: ExecutionFixtures
  /** The intent service's OpenAPI document; default `openapi/intents.yaml` of this repository. */
  readonly openApiDocumentPath?: string
  /** Stops the devnet; called once when the suite ends, pass or fail. */
  close?(): Promise<void> | void
}
