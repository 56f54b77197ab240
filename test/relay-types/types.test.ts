/**
 * Relay's published API types as a contract (issue 18): `contract.ts` states, per route, where the
 * types generated from `openapi/intents.yaml` disagree with `api.d.ts` of the pinned Relay SDK.
 * This test evaluates each statement with the TypeScript compiler and requires it to be exactly the
 * exceptions listed here, each with what decides it. A document change that breaks a client typed
 * from Relay's types fails here, naming the path.
 */
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const contractFile = fileURLToPath(new URL('./contract.ts', import.meta.url))
const configFile = fileURLToPath(new URL('../../configs/tsconfig.base.json', import.meta.url))

/** Why a disagreement stands. */
type Reason = string

const SPEC = '../shared/specs/intent-service.md'

/** The specs decide (quoted): where they speak, they win over Relay's published shape. */
const statusRequired: Reason = `${SPEC}, Endpoints: "GET /intents/status/v3 | Query \`requestId\` (string, required)"`
const detailsObject: Reason = `${SPEC}, Request status record: "details | object or null | Extra context, for example decoded revert data on failures. Null when none."`
const fallbackState: Reason = `${SPEC}, States: "Request status values" lists \`fallback\` ("Named only in the \`failReason\` rule")`
const oldStatusPath: Reason = `${SPEC}, Endpoints: "GET /intents/status | Older status path that appears in \`check.endpoint\` values with query \`requestId\`"; Step item: \`check.endpoint\` is "the status path with the \`requestId\` query" polled until the status record says \`success\`: it answers the specs' status record (Relay's older enum has \`received\`, no \`waiting\`; the SDK rewrites this path to \`/v3\` before polling anyway)`
/** Rules kept because they protect users (issue 18: "keep the strict rules that protect users"). */
const callTarget: Reason =
  'protects users: a destination call without `to` would be a contract creation run with the user\'s funds; the specs give `to` a pattern ("Items: `to` (string, `^0x[a-fA-F0-9]{40}$`)")'
const appFeeParts: Reason =
  'protects users: an app fee without a recipient would be charged and paid to nobody, one without `fee` means nothing; the specs list both ("Items: `recipient` (string, address receiving the fee), `fee` (string ...)")'
/** Not a disagreement on the wire. */
const noNullInQuery: Reason =
  "a query string has no null: the SDK's HTTP client (axios) leaves a null parameter out, so the service never receives one"
/** Request-history query members Pontis accepts and ignores (named in `Ignored-Members`), with why. */
const historyIgnored = (why: string): Reason => `accepted and ignored (Ignored-Members), ${why}`
const notStored = historyIgnored(
  'a filter on data the store does not keep per request (USD values, fill times, blocks, symbols, request types, features, free text); the swap widget and the SDK never send it',
)
const historyUnused: Record<string, Reason> = {
  '$.apiKey': historyIgnored(
    "the scope comes from the caller's own credentials (x-api-key, the operator's bearer token); naming another key's requests would let a caller browse them",
  ),
  '$.includeAuthenticatedData': historyIgnored('every item already shows all Pontis keeps of a request'),
  '$.includeChildRequests': historyIgnored(
    'Pontis has no child requests (a refund is a transaction of its request)',
  ),
  '$.privateChainsToInclude': historyIgnored('Pontis has no private chains'),
  '$.startBlock': notStored,
  '$.endBlock': notStored,
}

/** Members Pontis answers beyond Relay's type: additions a Relay client simply does not read. */
const addition = (what: string): Reason => `a Pontis addition: ${what}`

const quoteRequestExceptions = {
  '$.txs[].to': callTarget,
  '$.appFees[].recipient': appFeeParts,
  '$.appFees[].fee': appFeeParts,
}

const EXPECTED: Record<string, Record<string, Reason>> = {
  // Controls: an evaluation that always answered "agree" would fail here.
  ControlRenamedMember: { '$.fees.relay': 'a control: a renamed member is reported missing' },
  ControlUnlistedMember: { '$.fees.service': 'a control: a member the other side does not name is listed' },
  // Requests: every request Relay's types allow is a Pontis request.
  QuoteV2Requests: quoteRequestExceptions,
  QuoteRequests: quoteRequestExceptions,
  PriceRequests: quoteRequestExceptions,
  IndexRequests: {},
  PermitRequests: {},
  PermitQueryRequests: {},
  ChainsQueryRequests: { '$.includeChains': noNullInQuery },
  StatusV3QueryRequests: { '$.requestId': statusRequired },
  StatusQueryRequests: { '$.requestId': statusRequired },
  RequestsV3QueryRequests: {
    '$.sortBy':
      'sorting by `amountUsd` needs a USD value per request that the store does not keep (prices move; quotes store their own): answered 400 INVALID_REQUEST naming `createdAt` and `updatedAt`, never silently in another order',
  },
  RequestsV2QueryRequests: {},
  CurrenciesV2Requests: {},
  TrendingQueryRequests: {},
  TokenPriceQueryRequests: {},
  // Members of Relay's requests the document does not list (they would be ignored): none.
  QuoteV2RequestUnlisted: {},
  PriceRequestUnlisted: {},
  IndexRequestUnlisted: {},
  PermitRequestUnlisted: {},
  ChainsQueryUnlisted: {},
  RequestsV3QueryUnlisted: {
    ...historyUnused,
    '$.includeTotal': historyIgnored(
      'counting every matching request on each page costs what keyset paging saves (a million rows); `continuation` says whether more follow',
    ),
    '$.failReason': historyIgnored('no index serves it; `status` narrows a listing'),
    '$.refundFailReason': historyIgnored('no index serves it; `status` narrows a listing'),
    ...Object.fromEntries(
      [
        'amountUsdMax',
        'amountUsdMin',
        'appFeesAmountUsdMax',
        'appFeesAmountUsdMin',
        'currencyInAddress',
        'currencyInChainId',
        'currencyInSymbol',
        'currencyOutAddress',
        'currencyOutChainId',
        'currencyOutSymbol',
        'features',
        'fillTimeMax',
        'fillTimeMin',
        'filters',
        'requestType',
        'term',
      ].map((member) => [`$.${member}`, notStored]),
    ),
  },
  RequestsV2QueryUnlisted: {
    ...historyUnused,
    '$.includeOrderData': historyIgnored(
      'items carry `protocol.orderId`; the signed order is served by the quote',
    ),
  },
  CurrenciesV2RequestUnlisted: {},
  TrendingQueryUnlisted: {},
  TokenPriceQueryUnlisted: {},
  // Answers: every Pontis answer is a Relay answer.
  QuoteV2Answers: {},
  QuoteAnswers: {},
  PriceAnswers: {},
  ChainsAnswers: {},
  StatusV3Answers: { '$.details': detailsObject, '$.status': fallbackState },
  StatusAnswers: { '$.details': detailsObject, '$.status': oldStatusPath },
  IndexAnswers: {},
  PermitAnswers: {},
  RequestsV3Answers: { '$.requests[].status': fallbackState },
  RequestsV2Answers: {},
  CurrenciesV2Answers: {},
  TrendingAnswers: {},
  TokenPriceAnswers: {},
  TokenPriceErrorAnswers: {},
  QuoteV2ErrorAnswers: {},
  QuoteErrorAnswers: {},
  PriceErrorAnswers: {},
  IndexErrorAnswers: {},
  PermitErrorAnswers: {},
  AppFeeClaimRequests: {},
  AppFeeClaimRequestUnlisted: {},
  AppFeeBalancesAnswers: {},
  AppFeeClaimAnswers: {},
  AppFeeErrorAnswers: {},
  AppFeeBalancesAnswerUnlisted: {},
  AppFeeClaimAnswerUnlisted: {
    '$.claim': addition(
      "the claim's terms and state (amount, recipient, expiry), as its execute post answers them",
    ),
  },
  AppFeeClaimsQueries: {},
  AppFeeClaimsQueryUnlisted: {},
  AppFeeClaimsAnswers: {},
  AppFeeClaimsAnswerUnlisted: {},
  // Members Pontis answers that Relay's types do not name: additions, never renames.
  QuoteV2AnswerUnlisted: {
    '$.steps[].items[].check.finalStatuses': addition(
      'where polling may stop (`submitted` for a Bitcoin destination), so a client needs no chain-id list',
    ),
    '$.details.expandedPriceImpact.service': `the same value as \`relay\`, under the specs' name (${SPEC}: "\`expandedPriceImpact\` (members \`swap\`, \`execution\`, \`service\`, \`app\`, \`sponsored\`)")`,
  },
  PriceAnswerUnlisted: {
    '$.details.refundCurrency': addition("the quote's details, which the specs list for quotes"),
    '$.details.expandedPriceImpact': addition("the quote's details"),
    '$.details.isFixedRate': addition("the quote's details"),
    '$.details.route': addition("the quote's details"),
    '$.feeSponsorship': addition("the quote's sponsorship, when asked for"),
    '$.protocol': addition('protocol data, when asked for'),
  },
  ChainsAnswerUnlisted: {
    '$.chains[].solverCurrencies[].supportsBridging': addition('as on the other currency lists'),
    '$.chains[].currency.metadata': addition(
      "the currency's `logoURI` on the deployment itself, so no client builds one on Relay's CDN (issue 26)",
    ),
    '$.chains[].erc20Currencies[].metadata': addition(
      "each token's `logoURI`, as on featuredTokens (issue 26)",
    ),
    '$.chains[].solverCurrencies[].metadata': addition(
      "each currency's `logoURI`, as on featuredTokens (issue 26)",
    ),
    '$.chains[].featuredTokens[].metadata.isNative': addition('the currency metadata of /currencies/v2'),
    '$.chains[].featuredTokens[].metadata.verified': addition('the currency metadata of /currencies/v2'),
  },
  CurrenciesV2AnswerUnlisted: {},
  TrendingAnswerUnlisted: {},
  TokenPriceAnswerUnlisted: {},
  StatusV3AnswerUnlisted: {
    '$.requestId': addition('the request the record describes'),
    '$.failReason': `${SPEC}, Request status record: "failReason | string"`,
    '$.refundFailReason': `${SPEC}, Request status record: "refundFailReason | string"`,
    '$.details.${string}': detailsObject,
  },
  RequestsV3AnswerUnlisted: {
    '$.requests[].data.referrerAddress': addition(
      "the quote's `referrerAddress`, which the history routes also filter by",
    ),
  },
  RequestsV2AnswerUnlisted: {},
  IndexAnswerUnlisted: {
    '$.requestId': addition('the request the transaction was matched to'),
    '$.indexed': addition('whether the transaction was found (200) or is still awaited (202)'),
  },
  PermitAnswerUnlisted: {
    '$.requestId': addition('the request'),
    '$.status': addition("the request's status after the permit"),
    '$.txHash': addition('the deposit the service submitted'),
    '$.steps[].requestId': addition('as on quote steps'),
    '$.steps[].depositAddress': addition('as on quote steps'),
    '$.steps[].items[].check.finalStatuses': addition('as on quote steps'),
    ...Object.fromEntries(
      [
        'format',
        'from',
        'gas',
        'maxFeePerGas',
        'maxPriorityFeePerGas',
        'transaction',
        'instructions',
        'addressLookupTableAddresses',
        'size',
        'sizeLimit',
        'headroom',
        'psbt',
        'action',
        'nonce',
        'post',
        'sign',
      ].map((member) => [
        `$.steps[].items[].data.${member}`,
        addition(
          "further steps carry the quote steps' item data; Relay types these items as EVM transactions only",
        ),
      ]),
    ),
  },
}

/** Each exported alias of contract.ts with the paths its type evaluates to. */
function evaluateContract(): { diagnostics: string[]; aliases: Map<string, Set<string>> } {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configFile,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
      },
    },
  )
  if (!parsed) throw new Error(`cannot read ${configFile}`)
  const program = ts.createProgram({ rootNames: [contractFile], options: parsed.options })
  const diagnostics = ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(contractFile)
  if (!source) throw new Error(`cannot load ${contractFile}`)
  const aliases = new Map<string, Set<string>>()
  ts.forEachChild(source, (node) => {
    if (!ts.isTypeAliasDeclaration(node)) return
    const exported = node.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
    if (!exported || node.typeParameters) return
    const type = checker.getTypeAtLocation(node.name)
    const members = type.isUnion() ? type.types : type.flags & ts.TypeFlags.Never ? [] : [type]
    const paths = new Set(
      members.map((member) => {
        const text = member.isStringLiteral()
          ? member.value
          : checker.typeToString(member).replaceAll('`', '')
        // `$.status: 'fallback', expected 'waiting'` → `$.status`: one disagreement per path.
        return text.split(': ')[0] as string
      }),
    )
    aliases.set(node.name.text, paths)
  })
  return { diagnostics, aliases }
}

t.test("Pontis's requests and answers against Relay's published API types", async (t) => {
  const { diagnostics, aliases } = evaluateContract()
  t.same(diagnostics, [], 'contract.ts compiles against the pinned SDK and the generated types')
  t.same(
    [...aliases.keys()].sort(),
    Object.keys(EXPECTED).sort(),
    'every statement of contract.ts is checked',
  )
  for (const [alias, expected] of Object.entries(EXPECTED)) {
    const found = [...(aliases.get(alias) ?? [])].sort()
    t.same(
      found,
      Object.keys(expected).sort(),
      `${alias}: ${found.length === 0 ? 'agree' : found.join(', ')}`,
    )
    for (const [path, reason] of Object.entries(expected))
      t.ok(reason.length > 20, `${alias} ${path}: ${reason}`)
  }
})
