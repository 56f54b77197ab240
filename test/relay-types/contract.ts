/**
 * Relay's published API types (`api.d.ts` of the pinned `@relayprotocol/relay-sdk`, openapi-typescript
 * output of the public document) held against the types generated from `openapi/intents.yaml`.
 *
 * Each exported `*Requests` / `*Answers` alias below evaluates to the union of the paths where the
 * two disagree, `never` when they agree. `relay-types.test.ts` evaluates them with the TypeScript
 * compiler and requires each to be exactly the exceptions it lists, each with the spec line that
 * decides it. A change to the document that breaks a client typed from Relay's types shows up
 * there as a new path.
 *
 * - Requests: what Relay's types allow must be a Pontis request (`Relay → Pontis` assignable).
 * - Answers: what Pontis answers must be a Relay answer (`Pontis → Relay` assignable).
 * - `*Unlisted`: members one side has and the other's type does not name. A member Relay's request
 *   has that the document does not list would be ignored (and reported); a member Pontis answers
 *   that Relay's type does not name is either an addition or a rename a Relay client would miss.
 */
import type * as Pontis from '@pontis/generated/intents/types'
import type { paths } from '@relayprotocol/relay-sdk'

type JsonOf<R> = R extends { content: { 'application/json': infer Body } } ? Body : never
type Operation<Path extends keyof paths, Method extends string> = Method extends keyof paths[Path]
  ? paths[Path][Method]
  : never
type RelayBody<Path extends keyof paths> =
  Operation<Path, 'post'> extends { requestBody?: infer Body } ? JsonOf<NonNullable<Body>> : never
type RelayQuery<Path extends keyof paths> =
  Operation<Path, 'get'> extends { parameters: { query?: infer Query } } ? NonNullable<Query> : never
type RelayAnswer<Path extends keyof paths, Method extends string, Status extends number> =
  Operation<Path, Method> extends { responses: infer Responses }
    ? Status extends keyof Responses
      ? JsonOf<Responses[Status]>
      : never
    : never

type MembersOf<T> = T extends unknown ? keyof T : never
type MemberOf<T, K> = T extends unknown ? (K extends keyof T ? T[K] : never) : never
type RequiredMembers<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T]
type Describe<T> = [T] extends [never]
  ? 'never'
  : T extends string
    ? string extends T
      ? 'string'
      : `'${T}'`
    : T extends number
      ? 'number'
      : T extends boolean
        ? 'boolean'
        : T extends null
          ? 'null'
          : T extends undefined
            ? 'undefined'
            : T extends readonly unknown[]
              ? 'array'
              : 'object'

/** The paths under which `Source` is not assignable to `Target`, each with what differs. */
export type Mismatch<Source, Target, Path extends string = '$'> = [Source] extends [Target]
  ? never
  : Source extends unknown // one union member at a time
    ? [Source] extends [Target]
      ? never
      : Source extends readonly (infer Item)[]
        ? NonNullable<Target> extends readonly (infer TargetItem)[]
          ? Mismatch<Item, TargetItem, `${Path}[]`>
          : `${Path}: array, expected ${Describe<Target>}`
        : Source extends object
          ? Exclude<Target, null | undefined> extends infer TargetObject
            ? [TargetObject] extends [object]
              ? TargetObject extends readonly unknown[]
                ? `${Path}: object, expected array`
                : MemberMismatch<Source, TargetObject, Path>
              : `${Path}: object, expected ${Describe<Target>}`
            : never
          : `${Path}: ${Describe<Source>}, expected ${Describe<Target>}`
    : never
type MemberMismatch<Source, Target, Path extends string> =
  | {
      [K in keyof Source & string]: K extends MembersOf<Target>
        ? Mismatch<Source[K], MemberOf<Target, K>, `${Path}.${K}`>
        : never
    }[keyof Source & string]
  | {
      [K in RequiredMembers<Target> & string]: K extends keyof Source ? never : `${Path}.${K}: missing`
    }[RequiredMembers<Target> & string]

/** Members `Source` has that `Target` does not name (not counting where `Target` is `unknown`). */
export type Unlisted<Source, Target, Path extends string = '$'> = unknown extends Target
  ? never
  : Source extends readonly (infer Item)[]
    ? Unlisted<
        Item,
        NonNullable<Target> extends readonly (infer TargetItem)[] ? TargetItem : never,
        `${Path}[]`
      >
    : Source extends object
      ? {
          [K in keyof Source & string]: K extends MembersOf<NonNullable<Target>>
            ? Unlisted<NonNullable<Source[K]>, MemberOf<NonNullable<Target>, K>, `${Path}.${K}`>
            : `${Path}.${K}`
        }[keyof Source & string]
      : never

// ------------------------------------------------------------------------------------------------
// Requests: Relay → Pontis

export type QuoteV2Requests = Mismatch<RelayBody<'/quote/v2'>, Pontis.GetQuoteV2Data['body']>
export type QuoteRequests = Mismatch<RelayBody<'/quote'>, Pontis.GetQuoteData['body']>
export type PriceRequests = Mismatch<RelayBody<'/price'>, Pontis.GetPriceData['body']>
export type IndexRequests = Mismatch<RelayBody<'/transactions/index'>, Pontis.IndexTransactionData['body']>
export type PermitRequests = Mismatch<RelayBody<'/execute/permits'>, Pontis.ExecutePermitData['body']>
export type PermitQueryRequests = Mismatch<
  NonNullable<Operation<'/execute/permits', 'post'>['parameters']['query']>,
  Pontis.ExecutePermitData['query']
>
export type ChainsQueryRequests = Mismatch<RelayQuery<'/chains'>, Pontis.GetChainsData['query']>
export type StatusV3QueryRequests = Mismatch<
  RelayQuery<'/intents/status/v3'>,
  Pontis.GetIntentStatusV3Data['query']
>
export type StatusQueryRequests = Mismatch<RelayQuery<'/intents/status'>, Pontis.GetIntentStatusData['query']>
export type CurrenciesV2Requests = Mismatch<RelayBody<'/currencies/v2'>, Pontis.ListCurrenciesData['body']>
export type TrendingQueryRequests = Mismatch<
  RelayQuery<'/currencies/trending'>,
  Pontis.GetTrendingCurrenciesData['query']
>
export type TokenPriceQueryRequests = Mismatch<
  RelayQuery<'/currencies/token/price'>,
  Pontis.GetTokenPriceData['query']
>

export type RequestsV3QueryRequests = Mismatch<RelayQuery<'/requests/v3'>, Pontis.GetRequestsV3Data['query']>
export type RequestsV2QueryRequests = Mismatch<RelayQuery<'/requests/v2'>, Pontis.GetRequestsV2Data['query']>

export type QuoteV2RequestUnlisted = Unlisted<RelayBody<'/quote/v2'>, Pontis.GetQuoteV2Data['body']>
export type PriceRequestUnlisted = Unlisted<RelayBody<'/price'>, Pontis.GetPriceData['body']>
export type IndexRequestUnlisted = Unlisted<
  RelayBody<'/transactions/index'>,
  Pontis.IndexTransactionData['body']
>
export type PermitRequestUnlisted = Unlisted<RelayBody<'/execute/permits'>, Pontis.ExecutePermitData['body']>
export type ChainsQueryUnlisted = Unlisted<RelayQuery<'/chains'>, Pontis.GetChainsData['query']>
export type RequestsV3QueryUnlisted = Unlisted<RelayQuery<'/requests/v3'>, Pontis.GetRequestsV3Data['query']>
export type RequestsV2QueryUnlisted = Unlisted<RelayQuery<'/requests/v2'>, Pontis.GetRequestsV2Data['query']>
export type CurrenciesV2RequestUnlisted = Unlisted<
  RelayBody<'/currencies/v2'>,
  Pontis.ListCurrenciesData['body']
>
export type TrendingQueryUnlisted = Unlisted<
  RelayQuery<'/currencies/trending'>,
  Pontis.GetTrendingCurrenciesData['query']
>
export type TokenPriceQueryUnlisted = Unlisted<
  RelayQuery<'/currencies/token/price'>,
  Pontis.GetTokenPriceData['query']
>

// ------------------------------------------------------------------------------------------------
// Answers: Pontis → Relay

export type QuoteV2Answers = Mismatch<Pontis.GetQuoteV2Responses[200], RelayAnswer<'/quote/v2', 'post', 200>>
export type QuoteAnswers = Mismatch<Pontis.GetQuoteResponses[200], RelayAnswer<'/quote', 'post', 200>>
export type PriceAnswers = Mismatch<Pontis.GetPriceResponses[200], RelayAnswer<'/price', 'post', 200>>
export type ChainsAnswers = Mismatch<Pontis.GetChainsResponses[200], RelayAnswer<'/chains', 'get', 200>>
export type StatusV3Answers = Mismatch<
  Pontis.GetIntentStatusV3Responses[200],
  RelayAnswer<'/intents/status/v3', 'get', 200>
>
export type StatusAnswers = Mismatch<
  Pontis.GetIntentStatusResponses[200],
  RelayAnswer<'/intents/status', 'get', 200>
>
export type IndexAnswers = Mismatch<
  Pontis.IndexTransactionResponses[200] | Pontis.IndexTransactionResponses[202],
  RelayAnswer<'/transactions/index', 'post', 200>
>
export type PermitAnswers = Mismatch<
  Pontis.ExecutePermitResponses[200],
  RelayAnswer<'/execute/permits', 'post', 200>
>
export type RequestsV3Answers = Mismatch<
  Pontis.GetRequestsV3Responses[200],
  RelayAnswer<'/requests/v3', 'get', 200>
>
export type RequestsV2Answers = Mismatch<
  Pontis.GetRequestsV2Responses[200],
  RelayAnswer<'/requests/v2', 'get', 200>
>
export type CurrenciesV2Answers = Mismatch<
  Pontis.ListCurrenciesResponses[200],
  RelayAnswer<'/currencies/v2', 'post', 200>
>
export type TrendingAnswers = Mismatch<
  Pontis.GetTrendingCurrenciesResponses[200],
  RelayAnswer<'/currencies/trending', 'get', 200>
>
export type TokenPriceAnswers = Mismatch<
  Pontis.GetTokenPriceResponses[200],
  RelayAnswer<'/currencies/token/price', 'get', 200>
>

/** Error answers: every status Relay's types give a body, for the routes above. */
export type QuoteV2ErrorAnswers =
  | Mismatch<Pontis.GetQuoteV2Errors[400], RelayAnswer<'/quote/v2', 'post', 400>, '$400'>
  | Mismatch<Pontis.GetQuoteV2Errors[401], RelayAnswer<'/quote/v2', 'post', 401>, '$401'>
  | Mismatch<Pontis.GetQuoteV2Errors[429], RelayAnswer<'/quote/v2', 'post', 429>, '$429'>
  | Mismatch<Pontis.GetQuoteV2Errors[500], RelayAnswer<'/quote/v2', 'post', 500>, '$500'>
export type QuoteErrorAnswers =
  | Mismatch<Pontis.GetQuoteErrors[400], RelayAnswer<'/quote', 'post', 400>, '$400'>
  | Mismatch<Pontis.GetQuoteErrors[401], RelayAnswer<'/quote', 'post', 401>, '$401'>
  | Mismatch<Pontis.GetQuoteErrors[429], RelayAnswer<'/quote', 'post', 429>, '$429'>
  | Mismatch<Pontis.GetQuoteErrors[500], RelayAnswer<'/quote', 'post', 500>, '$500'>
export type PriceErrorAnswers =
  | Mismatch<Pontis.GetPriceErrors[400], RelayAnswer<'/price', 'post', 400>, '$400'>
  | Mismatch<Pontis.GetPriceErrors[401], RelayAnswer<'/price', 'post', 401>, '$401'>
  | Mismatch<Pontis.GetPriceErrors[500], RelayAnswer<'/price', 'post', 500>, '$500'>
export type IndexErrorAnswers =
  | Mismatch<Pontis.IndexTransactionErrors[400], RelayAnswer<'/transactions/index', 'post', 400>, '$400'>
  | Mismatch<Pontis.IndexTransactionErrors[404], RelayAnswer<'/transactions/index', 'post', 404>, '$404'>
export type PermitErrorAnswers = Mismatch<
  Pontis.ExecutePermitErrors[400],
  RelayAnswer<'/execute/permits', 'post', 400>,
  '$400'
>
export type TokenPriceErrorAnswers = Mismatch<
  Pontis.GetTokenPriceErrors[400],
  RelayAnswer<'/currencies/token/price', 'get', 400>,
  '$400'
>

export type QuoteV2AnswerUnlisted = Unlisted<
  Pontis.GetQuoteV2Responses[200],
  RelayAnswer<'/quote/v2', 'post', 200>
>
export type PriceAnswerUnlisted = Unlisted<Pontis.GetPriceResponses[200], RelayAnswer<'/price', 'post', 200>>
export type ChainsAnswerUnlisted = Unlisted<
  Pontis.GetChainsResponses[200],
  RelayAnswer<'/chains', 'get', 200>
>
export type StatusV3AnswerUnlisted = Unlisted<
  Pontis.GetIntentStatusV3Responses[200],
  RelayAnswer<'/intents/status/v3', 'get', 200>
>
export type IndexAnswerUnlisted = Unlisted<
  Pontis.IndexTransactionResponses[200],
  RelayAnswer<'/transactions/index', 'post', 200>
>
export type PermitAnswerUnlisted = Unlisted<
  Pontis.ExecutePermitResponses[200],
  RelayAnswer<'/execute/permits', 'post', 200>
>
export type RequestsV3AnswerUnlisted = Unlisted<
  Pontis.GetRequestsV3Responses[200],
  RelayAnswer<'/requests/v3', 'get', 200>
>
export type RequestsV2AnswerUnlisted = Unlisted<
  Pontis.GetRequestsV2Responses[200],
  RelayAnswer<'/requests/v2', 'get', 200>
>
export type CurrenciesV2AnswerUnlisted = Unlisted<
  Pontis.ListCurrenciesResponses[200],
  RelayAnswer<'/currencies/v2', 'post', 200>
>
export type TrendingAnswerUnlisted = Unlisted<
  Pontis.GetTrendingCurrenciesResponses[200],
  RelayAnswer<'/currencies/trending', 'get', 200>
>
export type TokenPriceAnswerUnlisted = Unlisted<
  Pontis.GetTokenPriceResponses[200],
  RelayAnswer<'/currencies/token/price', 'get', 200>
>

// ------------------------------------------------------------------------------------------------
// Controls: the evaluation must see a disagreement where one is made.

export type ControlRenamedMember = Mismatch<{ fees: { service: string } }, { fees: { relay: string } }>
export type ControlUnlistedMember = Unlisted<{ fees: { service: string } }, { fees: { relay?: string } }>

// App fees (issue 22): the routes the SDK's getAppFees and claimAppFees call.
export type AppFeeClaimRequests = Mismatch<
  RelayBody<'/app-fees/{wallet}/claim'>,
  Pontis.ClaimAppFeesData['body']
>
export type AppFeeClaimRequestUnlisted = Unlisted<
  RelayBody<'/app-fees/{wallet}/claim'>,
  Pontis.ClaimAppFeesData['body']
>
export type AppFeeBalancesAnswers = Mismatch<
  Pontis.GetAppFeeBalancesResponses[200],
  RelayAnswer<'/app-fees/{wallet}/balances', 'get', 200>
>
export type AppFeeClaimAnswers = Mismatch<
  Pontis.ClaimAppFeesResponses[200],
  RelayAnswer<'/app-fees/{wallet}/claim', 'post', 200>
>
export type AppFeeErrorAnswers =
  | Mismatch<
      Pontis.GetAppFeeBalancesErrors[400],
      RelayAnswer<'/app-fees/{wallet}/balances', 'get', 400>,
      '$400'
    >
  | Mismatch<Pontis.ClaimAppFeesErrors[400], RelayAnswer<'/app-fees/{wallet}/claim', 'post', 400>, '$400'>
export type AppFeeBalancesAnswerUnlisted = Unlisted<
  Pontis.GetAppFeeBalancesResponses[200],
  RelayAnswer<'/app-fees/{wallet}/balances', 'get', 200>
>
export type AppFeeClaimAnswerUnlisted = Unlisted<
  Pontis.ClaimAppFeesResponses[200],
  RelayAnswer<'/app-fees/{wallet}/claim', 'post', 200>
>
export type AppFeeClaimsQueries = Mismatch<
  RelayQuery<'/app-fees/{wallet}/claims'>,
  NonNullable<Pontis.GetAppFeeClaimsData['query']>
>
export type AppFeeClaimsQueryUnlisted = Unlisted<
  RelayQuery<'/app-fees/{wallet}/claims'>,
  NonNullable<Pontis.GetAppFeeClaimsData['query']>
>
export type AppFeeClaimsAnswers = Mismatch<
  Pontis.GetAppFeeClaimsResponses[200],
  RelayAnswer<'/app-fees/{wallet}/claims', 'get', 200>
>
export type AppFeeClaimsAnswerUnlisted = Unlisted<
  Pontis.GetAppFeeClaimsResponses[200],
  RelayAnswer<'/app-fees/{wallet}/claims', 'get', 200>
>
