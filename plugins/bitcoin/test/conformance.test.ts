/**
 * The Bitcoin plugin against the plugin contract (@pontis/plugin-testkit), on the regtest devnet
 * (the Esplora HTTP API of the devnet's simulator).
 */
import type { ChainAdapter } from '@pontis/core/plugin'
import { type DepositRoundTrip, type ExecutableItem, runPluginConformance } from '@pontis/plugin-testkit'
import t from 'tap'
import bitcoinPlugin, { BITCOIN_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  BITCOIN_USERS,
  BITCOIN_VAULT,
  bitcoinEntry,
  psbtOf,
  SOLVER_KEY,
  signAsWallet,
  startDevnet,
} from './fixtures/bitcoin-devnet.js'

const devnet = await startDevnet()
const depositor = BITCOIN_USERS.p2wpkh
const requestIdOf = (n: number) => `0x${(0xc0f0 + n).toString(16).padStart(64, '0')}`

/** A native deposit of the depositor's. */
const depositRequestOf = (requestId: string, amount: bigint) => ({
  requestId,
  depositor: depositor.address,
  currencyId: BITCOIN_NATIVE_CURRENCY_ID,
  amount,
  usePermit: false,
  permitExpiry: 0,
  executeEndpoint: '/execute',
  nowSeconds: 0,
})

/** Signs a served PSBT item as the depositor's wallet does, broadcasts it to the devnet and mines it. */
async function sendTransaction({ step }: ExecutableItem): Promise<string> {
  const signed = signAsWallet(psbtOf([step]), depositor)
  const reply = await fetch(`${devnet.url}/tx`, { method: 'POST', body: signed.hex })
  if (!reply.ok) throw new Error(`broadcast refused: ${await reply.text()}`)
  devnet.mine(1)
  return signed.id
}

/** A deposit PSBT built by the plugin, signed as a wallet signs it, broadcast and mined. */
async function makeDeposit(adapter: ChainAdapter): Promise<DepositRoundTrip> {
  const requestId = requestIdOf(1)
  const amount = 3_000_000n
  const [step] = (await adapter.quoting?.buildDepositSteps(depositRequestOf(requestId, amount))) ?? []
  if (step === undefined) throw new Error('no deposit step was built')
  return {
    transactionId: await sendTransaction({ data: {}, step }),
    // The plugin's PSBT pays the vault first, then the OP_RETURN tag, then the change.
    facts: [
      {
        index: 0,
        depository: BITCOIN_VAULT.address,
        depositId: requestId,
        depositor: depositor.address,
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount,
      },
    ],
    state: 'success',
    final: true,
  }
}

const [p2pkh, p2tr] = [BITCOIN_USERS.p2pkh.address, BITCOIN_USERS.p2tr.address]
await runPluginConformance(t, bitcoinPlugin, {
  chain: bitcoinEntry(devnet.url),
  addresses: {
    valid: [depositor.address, depositor.address.toUpperCase(), p2pkh, p2tr, BITCOIN_VAULT.address],
    invalid: [
      // mainnet addresses are another network's
      'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      BITCOIN_NATIVE_CURRENCY_ID,
      `0x${'ab'.repeat(20)}`,
      `${depositor.address.slice(0, -1)}${depositor.address.endsWith('q') ? 'p' : 'q'}`,
      'not an address',
      '',
    ],
  },
  currencies: {
    valid: [BITCOIN_NATIVE_CURRENCY_ID],
    invalid: [`0x${'0'.repeat(40)}`, 'btc', depositor.address],
  },
  invalidTransactionIds: ['ab'.repeat(31), `${'ab'.repeat(32)}00`],
  invalidPluginOptions: [{ network: 'signet' }, { confirmations: 0 }, { unknownOption: 1 }],
  quoting: {
    depositRequest: {
      requestId: requestIdOf(2),
      depositor: depositor.address,
      currencyId: BITCOIN_NATIVE_CURRENCY_ID,
      amount: 2_000_000n,
      usePermit: false,
      permitExpiry: 600,
      executeEndpoint: '/execute',
      nowSeconds: 1_700_000_000,
    },
  },
  reading: { makeDeposit, unknownTransactionId: 'ab'.repeat(32), balanceOwner: depositor.address },
  filling: { credentials: { solverKey: SOLVER_KEY } },
  execution: { sendTransaction, depositRequest: depositRequestOf(requestIdOf(3), 1_000_000n) },
  close: () => devnet.stop(),
})
