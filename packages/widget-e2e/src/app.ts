/**
 * The page: Relay's released swap widget (`SwapWidget` of `@relayprotocol/relay-kit-ui`, unmodified)
 * configured as its documentation says for a self-hosted API: `RelayKitProvider` with `baseApiUrl` (the
 * Pontis intent service), `appName` and the chains the API's own `/chains` lists; wagmi with the `mock`
 * connector on one account, whose transactions the devnet's anvil signs (its default accounts are
 * unlocked). No token is preset: the user picks both through the widget's selector.
 *
 * Runs in the browser (bundled by ./bundle.ts); written without JSX so the repository's TypeScript
 * configuration checks it as it is.
 */
import { RelayKitProvider, SwapWidget, type Token } from '@relayprotocol/relay-kit-ui'
import { adaptViemWallet } from '@relayprotocol/relay-sdk'
import { fetchChainConfigs } from '@relayprotocol/relay-sdk/chain-utils'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { mock } from '@wagmi/core'
import { createElement, useMemo, useState } from 'react'
import { createRoot } from 'react-dom/client'
import { type Address, type Chain, defineChain } from 'viem'
import { createConfig, http, useConnect, useWalletClient, WagmiProvider } from 'wagmi'
import './config.js'

const config = window.pontisWidget
window.pontisWidgetEvents = []
const report = (name: string, detail?: unknown) => window.pontisWidgetEvents.push({ name, detail })

/** The devnet's EVM chains as wagmi knows them: id, name and the devnet RPC URL. */
const [firstChain, ...otherChains] = config.evmChains.map((chain) =>
  defineChain({
    id: chain.id,
    name: chain.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl] } },
  }),
)
if (!firstChain) throw new Error('the page was given no EVM chain')
const wagmiChains: [Chain, ...Chain[]] = [firstChain, ...otherChains]

const wagmiConfig = createConfig({
  chains: wagmiChains,
  connectors: [mock({ accounts: [config.account as Address], features: { reconnect: false } })],
  transports: Object.fromEntries(wagmiChains.map((chain) => [chain.id, http()])),
})

const queryClient = new QueryClient()

function Widget() {
  const [fromToken, setFromToken] = useState<Token | undefined>(undefined)
  const [toToken, setToToken] = useState<Token | undefined>(undefined)
  const { connectAsync, connectors } = useConnect()
  // As Relay's documentation shows: the connected wallet, adapted with the SDK's adaptViemWallet.
  const { data: walletClient } = useWalletClient()
  const wallet = useMemo(() => (walletClient ? adaptViemWallet(walletClient) : undefined), [walletClient])
  return createElement(SwapWidget, {
    supportedWalletVMs: ['evm'],
    wallet,
    fromToken,
    setFromToken,
    toToken,
    setToToken,
    // The widget's "Connect" button asks the app to connect a wallet: the mock connector here.
    onConnectWallet: () => {
      const connector = connectors[0]
      if (!connector) throw new Error('no wallet connector configured')
      connectAsync({ connector }).then(
        () => report('connected'),
        (error: unknown) => report('connectError', String(error)),
      )
    },
    onSwapSuccess: (data) =>
      report('swapSuccess', {
        requestId: data.steps.find((step) => step.requestId)?.requestId,
        amountOut: data.details?.currencyOut?.amount,
        recipient: data.details?.recipient,
      }),
    onSwapError: (error) => report('swapError', error),
    onAnalyticEvent: (name) => report(`analytics:${name}`),
  })
}

async function main(): Promise<void> {
  // As relay.link's own app does: the chains come from the API's /chains, with the app as referrer.
  const chains = await fetchChainConfigs(config.baseApiUrl, config.appName)
  report(
    'chains',
    chains.map((chain) => chain.id),
  )
  const root = document.getElementById('root')
  if (!root) throw new Error('the page has no #root element')
  createRoot(root).render(
    createElement(
      WagmiProvider,
      { config: wagmiConfig },
      createElement(
        QueryClientProvider,
        { client: queryClient },
        createElement(RelayKitProvider, {
          options: {
            baseApiUrl: config.baseApiUrl,
            appName: config.appName,
            source: config.appName,
            chains,
            // The status of a request is polled every second (the API's advice) instead of every 5 s.
            pollingInterval: 1000,
          },
          // biome-ignore lint/correctness/noChildrenProp: without JSX, the provider's required `children` is a prop for the type checker
          children: createElement(Widget),
        }),
      ),
    ),
  )
}

main().then(
  () => report('rendered'),
  (error: unknown) => report('startError', String(error)),
)
