/** What the widget page is told by the server that serves it (see ./page.ts), as `window.pontisWidget`. */
export interface WidgetPageConfig {
  /** The Pontis intent service (the widget's `baseApiUrl`). */
  readonly baseApiUrl: string
  /** The app's name: `appName` and `source` of the widget, `referrer` of `/chains`. */
  readonly appName: string
  /** The EVM chains the wallet (wagmi) knows, with their RPC URLs. */
  readonly evmChains: ReadonlyArray<{ readonly id: number; readonly name: string; readonly rpcUrl: string }>
  /** The account of the mock wallet; its chain node signs for it (an anvil default account). */
  readonly account: string
}

/** What the page reports to the test driving it: the widget's callbacks and the app's own steps. */
export interface WidgetEvent {
  readonly name: string
  readonly detail?: unknown
}

declare global {
  interface Window {
    /** Set by the page (index.html) before the bundle runs. */
    pontisWidget: WidgetPageConfig
    /** Appended to by the page (./app.ts), read by the test. */
    pontisWidgetEvents: WidgetEvent[]
  }
}
