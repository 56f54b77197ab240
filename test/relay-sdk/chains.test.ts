/**
 * What the Relay SDK reads from `GET /chains`, for every record of every family the stack `npm start`
 * serves (evm, svm, bvm, lvm, hypevm, tvm): a numeric `id` (the SDK compares chain ids with ===), a
 * `currency` (its `configureViemChain` reads `currency.name`, `decimals` and `symbol` of every record)
 * and an `httpRpcUrl` that answers its family's own API (the SDK's wallets confirm transactions
 * through it). Each record's URL is called with a request of its family.
 */
import { fetchChainConfigs } from '@relayprotocol/relay-sdk/chain-utils'
import t from 'tap'
import { relay, startSdkStack } from './fixtures/sdk-stack.js'

// Starting the stack npm start serves (two anvil chains, LiteSVM, the simulators, both services) takes
// 15–40 s on a busy 2-core machine, and the flows wait for blocks: beyond tap's 120 s default.
t.setTimeout(300_000)

interface ChainRecord {
  id: unknown
  vmType: string
  httpRpcUrl?: unknown
  currency?: { address?: unknown; decimals?: unknown; symbol?: unknown; name?: unknown }
  protocol?: { v2?: { depository?: string } }
}

async function jsonRpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = (await answer.json()) as { result?: unknown; error?: unknown }
  if (body.error !== undefined) throw new Error(`${method} at ${url}: ${JSON.stringify(body.error)}`)
  return body.result
}

async function getJson(url: string, init?: RequestInit): Promise<unknown> {
  const answer = await fetch(url, init)
  if (!answer.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${answer.status} ${await answer.text()}`)
  return answer.json()
}

const postJson = (url: string, body: unknown) =>
  getJson(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** Calls `record.httpRpcUrl` with a read of its family's API; answers what shows it is that chain. */
const FAMILY_PROBES: Record<
  string,
  (url: string, record: ChainRecord) => Promise<{ ok: boolean; seen: unknown }>
> = {
  async evm(url, record) {
    const chainId = await jsonRpc(url, 'eth_chainId')
    return { ok: chainId === `0x${Number(record.id).toString(16)}`, seen: chainId }
  },
  async svm(url) {
    const [health, slot] = await Promise.all([jsonRpc(url, 'getHealth'), jsonRpc(url, 'getSlot')])
    return { ok: health === 'ok' && Number.isInteger(slot), seen: { health, slot } }
  },
  async bvm(url) {
    // Esplora: the tip height is a bare number.
    const answer = await fetch(`${url}/blocks/tip/height`)
    const height = Number(await answer.text())
    return { ok: answer.ok && Number.isInteger(height) && height >= 0, seen: height }
  },
  async lvm(url, record) {
    // The venue's REST API: the depository is the solver's account index.
    const account = (await getJson(
      `${url}/api/v1/account?by=index&value=${record.protocol?.v2?.depository}`,
    )) as { code?: number; accounts?: Array<{ index?: number }> }
    return {
      ok: account.code === 200 && account.accounts?.[0]?.index === Number(record.protocol?.v2?.depository),
      seen: account.code,
    }
  },
  async hypevm(url) {
    const meta = (await postJson(`${url}/info`, { type: 'spotMeta' })) as { tokens?: unknown[] }
    return { ok: Array.isArray(meta.tokens) && meta.tokens.length > 0, seen: meta.tokens?.length }
  },
  async tvm(url) {
    const block = (await postJson(`${url}/wallet/getnowblock`, {})) as {
      block_header?: { raw_data?: { number?: number } }
    }
    const number = block.block_header?.raw_data?.number
    return { ok: Number.isInteger(number), seen: number }
  },
}

t.test('every /chains record has what the Relay SDK reads, and its httpRpcUrl answers', async (t) => {
  const sdk = await startSdkStack(t)
  const answer = await fetch(`${sdk.baseApiUrl}/chains`)
  t.equal(answer.status, 200)
  const { chains } = (await answer.json()) as { chains: ChainRecord[] }
  t.same(
    [...new Set(chains.map((chain) => chain.vmType))].sort(),
    Object.keys(FAMILY_PROBES).sort(),
    'every family npm start serves is listed',
  )
  for (const record of chains) {
    t.test(`${record.vmType} chain ${String(record.id)}`, async (t) => {
      t.ok(Number.isSafeInteger(record.id) && (record.id as number) > 0, 'the id is a JSON integer')
      t.match(
        record.currency,
        { address: String, decimals: Number, symbol: String, name: String },
        'a native currency with address, decimals, symbol and name',
      )
      t.type(record.httpRpcUrl, 'string', 'an httpRpcUrl')
      const url = String(record.httpRpcUrl)
      t.doesNotThrow(() => new URL(url), 'an absolute URL')
      const probe = FAMILY_PROBES[record.vmType]
      if (!probe) {
        t.fail(`no probe for the ${record.vmType} family`)
        return
      }
      const { ok, seen } = await probe(url, record)
      t.ok(
        ok,
        `it answers a ${record.vmType} request as chain ${String(record.id)} (saw ${JSON.stringify(seen)})`,
      )
    })
  }

  t.test('the SDK configures every chain from them', async (t) => {
    t.same(
      sdk.chains.map((chain) => chain.id),
      chains.map((chain) => chain.id),
      'configureDynamicChains kept every record',
    )
    for (const chain of sdk.chains) {
      const record = chains.find((candidate) => candidate.id === chain.id)
      t.equal(chain.httpRpcUrl, record?.httpRpcUrl, `${chain.id}: the SDK's httpRpcUrl is ours`)
      t.ok(chain.viemChain, `${chain.id}: the SDK built a viem chain`)
    }
    // The SDK's own reader, with the referrer it appends, answers the same list.
    const again = await fetchChainConfigs(sdk.baseApiUrl, relay().source)
    t.equal(again.length, chains.length)
  })
})
