/**
 * Inventory targets are found by the chain family's own currency identity: on a case-sensitive
 * family (SVM base58 mints) a target written in another case is another currency, not the same one
 * lower-cased; on EVM any case of the same address is the same token.
 */
import type { RegisteredChain, Registry } from '@pontis/core'
import evm, { EVM_NATIVE_CURRENCY_ID } from '@pontis/plugin-evm'
import t from 'tap'
import { createSvmIdentity } from '../../../plugins/svm/src/index.js'
import { inventoryLookup } from '../src/quote/inventory.js'

const SVM_CHAIN_ID = 792703809
const EVM_CHAIN_ID = 8453
/** A mint whose lower-cased form is another valid key (another 32 bytes). */
const MINT = '8ivVMYDXQAcModb1Y9aJXJvqSD7ckn1Em8JQtiZxSyEK'
const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'

const svmIdentity = createSvmIdentity({ id: SVM_CHAIN_ID, displayName: 'Solana' })
const evmAdapter = await evm.createAdapter(
  {
    id: EVM_CHAIN_ID,
    name: 'base',
    displayName: 'Base',
    vmType: 'evm',
    depositEnabled: true,
    disabled: false,
    currency: { id: 'eth', symbol: 'ETH', name: 'Ether', address: EVM_NATIVE_CURRENCY_ID, decimals: 18 },
    rpc: { url: 'http://127.0.0.1:1' },
    plugin: {
      confirmations: 2,
      fastConfirmations: 1,
      waitForFinalized: true,
      eip1559: true,
      maxLogBlockRange: 1000,
      readCacheSeconds: 2,
    },
  },
  { logger: { debug() {}, info() {}, warn() {}, error() {} }, environment: 'test' },
)
t.teardown(() => evmAdapter.close?.())

const chains = new Map<number, Pick<RegisteredChain, 'id' | 'adapter'>>([
  [SVM_CHAIN_ID, { id: SVM_CHAIN_ID, adapter: { identity: svmIdentity } as RegisteredChain['adapter'] }],
  [EVM_CHAIN_ID, { id: EVM_CHAIN_ID, adapter: evmAdapter }],
])
const registry = { tryChain: (id: number) => chains.get(id) } as unknown as Registry

t.test('a case-sensitive family: another case is another currency', async (t) => {
  const lowered = MINT.toLowerCase()
  t.ok(svmIdentity.isValidAddress(lowered), 'the lower-cased mint is itself a valid key')
  const target = { chainId: SVM_CHAIN_ID, currency: MINT, targetAmount: '1000' }
  const find = inventoryLookup(registry, [target])
  t.equal(find(SVM_CHAIN_ID, MINT), target)
  t.equal(find(SVM_CHAIN_ID, lowered), undefined, 'not the lower-cased mint')
  t.equal(
    inventoryLookup(registry, [{ ...target, currency: lowered }])(SVM_CHAIN_ID, MINT),
    undefined,
    'nor the other way round',
  )
})

t.test('a case-insensitive family: any case of the address is the same token', async (t) => {
  const target = { chainId: EVM_CHAIN_ID, currency: USDC_BASE.toLowerCase(), targetAmount: '1000' }
  const find = inventoryLookup(registry, [target])
  t.equal(find(EVM_CHAIN_ID, evmAdapter.identity.normalizeCurrency(USDC_BASE, 'output')), target)
})

t.test('targets on chains not served are left out; a bad id stops start-up', async (t) => {
  t.equal(inventoryLookup(registry, [{ chainId: 1, currency: 'x', targetAmount: '1' }])(1, 'x'), undefined)
  t.throws(
    () => inventoryLookup(registry, [{ chainId: EVM_CHAIN_ID, currency: 'not-a-token', targetAmount: '1' }]),
    { code: 'UNSUPPORTED_CURRENCY' },
  )
})
