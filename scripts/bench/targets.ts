/**
 * The named targets of `npm run bench`. A target is one HTTP request sent over and over; `server`
 * says which child process answers it. Adding an endpoint is adding an entry here.
 */

/** `pontis` is `scripts/start.ts` (devnet, intent service, oracle); `bare` is bare-koa.ts. */
export type ServerName = 'pontis' | 'bare'
/** The base URL a target is sent to: one of the URLs its server logged. */
export type ServiceName = 'intents' | 'oracle' | 'bare'

export interface Target {
  readonly server: ServerName
  readonly service: ServiceName
  readonly method: 'GET' | 'POST'
  readonly path: string
  readonly body?: unknown
  readonly description: string
}

/** Devnet test user #3 (funded), native ETH from chain 31337 to chain 31338: a quote the devnet answers. */
export const QUOTE_BODY = {
  user: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: '0x0000000000000000000000000000000000000000',
  destinationCurrency: '0x0000000000000000000000000000000000000000',
  amount: '100000000000000000',
  tradeType: 'EXACT_INPUT',
} as const

export const TARGETS = {
  quote: {
    server: 'pontis',
    service: 'intents',
    method: 'POST',
    path: '/quote/v2',
    body: QUOTE_BODY,
    description: 'POST /quote/v2: validate, price, sign the order, build steps, store the request (PGlite)',
  },
  price: {
    server: 'pontis',
    service: 'intents',
    method: 'POST',
    path: '/price',
    body: QUOTE_BODY,
    description: 'POST /price: the same quote without steps; nothing stored',
  },
  bare: {
    server: 'bare',
    service: 'bare',
    method: 'POST',
    path: '/bare',
    body: QUOTE_BODY,
    description: 'POST /bare on a minimal koa app: read and parse the same JSON body, answer small JSON',
  },
} as const satisfies Record<string, Target>

export type TargetName = keyof typeof TARGETS
export const DEFAULT_TARGETS: readonly TargetName[] = ['quote', 'price', 'bare']
/** The target the others' throughput is divided by. */
export const BASELINE: TargetName = 'bare'

export function isTargetName(name: string): name is TargetName {
  return Object.hasOwn(TARGETS, name)
}
