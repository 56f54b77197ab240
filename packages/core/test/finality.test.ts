/**
 * The confirmation depth the service waits for: the family's rule and the chain entry's `finality`
 * (per chain, and per currency above an amount), the deeper of them.
 */
import t from 'tap'
import {
  type ChainAdapter,
  type ChainConfig,
  depositConfirmations,
  type RegisteredChain,
  settlementConfirmations,
} from '../src/index.js'

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3'

/** A chain whose family normalises ids to lower case and needs `family` blocks (4 above 1000 of any currency). */
function chainWith(finality: ChainConfig['finality'], family = 1): RegisteredChain {
  const adapter = {
    identity: {
      normalizeCurrency: (value: string) => {
        if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw new Error(`not a currency: ${value}`)
        return value.toLowerCase()
      },
    },
    finality: {
      fastConfirmations: 1,
      slowConfirmations: family,
      slowRequiresFinalized: false,
      confirmationsFor: (_currency: string, amount: bigint) => (amount > 1000n ? 4 : family),
    },
  } as unknown as ChainAdapter
  return { id: 1, entry: { finality } as ChainConfig, adapter } as RegisteredChain
}

t.test('the family rule alone when the entry sets nothing', async (t) => {
  const chain = chainWith(undefined, 2)
  t.equal(settlementConfirmations(chain), 2)
  t.equal(depositConfirmations(chain, TOKEN, 10n), 2)
  t.equal(depositConfirmations(chain, TOKEN, 1001n), 4, "the family's own amount rule")
})

t.test('the chain depth raises every deposit and settlement, never lowers the family rule', async (t) => {
  t.equal(settlementConfirmations(chainWith({ confirmations: 6 })), 6)
  t.equal(depositConfirmations(chainWith({ confirmations: 6 }), TOKEN, 10n), 6)
  t.equal(settlementConfirmations(chainWith({ confirmations: 1 }, 3)), 3, 'the family asks more')
})

t.test('a high-value rule applies to its currency strictly above its amount', async (t) => {
  const chain = chainWith({
    highValue: [{ currency: TOKEN.toLowerCase(), above: '5000', confirmations: 12 }],
  })
  t.equal(depositConfirmations(chain, TOKEN, 5000n), 4, 'at the threshold: not high value')
  t.equal(depositConfirmations(chain, TOKEN, 5001n), 12, 'above it, whatever the case of the id')
  t.equal(
    depositConfirmations(chain, '0x0000000000000000000000000000000000000000', 10n ** 30n),
    4,
    'another currency is not concerned',
  )
  t.equal(depositConfirmations(chain, 'garbage', 10n ** 30n), 4, 'an id the family refuses matches no rule')
  t.equal(settlementConfirmations(chain), 1, 'fills and refunds are not deposits')
})
