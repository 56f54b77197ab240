import { PontisError } from '@pontis/core'
import fc from 'fast-check'
import t from 'tap'
import {
  type AmountBreakdown,
  breakdownForInput,
  breakdownForOutput,
  type Conversion,
  DEFAULT_SPONSORED_COMPONENTS,
  FEE_COMPONENTS,
  type FeeComponent,
  type FeeTerms,
  parseBps,
  withSlippage,
} from '../src/quote/fees.js'

const amount = fc.bigInt({ min: 1n, max: 10n ** 30n })
const bps = fc.bigInt({ min: 0n, max: 300n })
const conversion: fc.Arbitrary<Conversion> = fc.record({
  numerator: fc.bigInt({ min: 1n, max: 10n ** 24n }),
  denominator: fc.bigInt({ min: 1n, max: 10n ** 24n }),
})
const components = fc.subarray<FeeComponent>([...FEE_COMPONENTS], { minLength: 1 })
const terms: fc.Arbitrary<FeeTerms> = fc.record(
  {
    executionCost: fc.bigInt({ min: 0n, max: 10n ** 20n }),
    rentCost: fc.bigInt({ min: 0n, max: 10n ** 12n }),
    serviceBps: bps,
    minimumServiceFee: fc.bigInt({ min: 0n, max: 10n ** 12n }),
    rebalanceRewardBps: fc.bigInt({ min: 0n, max: 20n }),
    appFees: fc.array(
      fc.record({
        numerator: fc.bigInt({ min: 0n, max: 5000n }),
        denominator: fc.constantFrom(1n, 10n, 100n),
      }),
      { maxLength: 4 },
    ),
    swapSpreadBps: fc.bigInt({ min: 0n, max: 100n }),
    sponsorship: fc.option(
      fc.record(
        { components: components.map((list) => new Set(list)), cap: fc.bigInt({ min: 0n, max: 10n ** 20n }) },
        { requiredKeys: ['components'] },
      ),
      { nil: undefined },
    ),
  },
  {
    requiredKeys: [
      'executionCost',
      'rentCost',
      'serviceBps',
      'minimumServiceFee',
      'rebalanceRewardBps',
      'appFees',
      'swapSpreadBps',
    ],
  },
)

function tryBreakdown(run: () => AmountBreakdown): AmountBreakdown | undefined {
  try {
    return run()
  } catch (error) {
    if (error instanceof PontisError && error.code === 'AMOUNT_TOO_LOW') return undefined
    throw error
  }
}

/** The invariants every answer holds, whatever the trade type. */
function checkInvariants(result: AmountBreakdown, fee: FeeTerms, rate: Conversion): void {
  const lhs = result.amountIn + result.subsidized
  const rhs = result.relayerGas + result.relayerService + result.app + result.swapCost + result.convertible
  if (lhs !== rhs) throw new Error(`identity broken: ${lhs} != ${rhs}`)
  if (result.amountOut !== (result.convertible * rate.numerator) / rate.denominator)
    throw new Error('output is not the converted amount')
  if (result.amountOut <= 0n || result.convertible <= 0n) throw new Error('non-positive output')
  if (result.app !== result.appFees.reduce((sum, fee) => sum + fee, 0n)) throw new Error('app total')
  if (result.relayerGas !== fee.executionCost + fee.rentCost) throw new Error('relayerGas')
  let sponsored = 0n
  for (const component of FEE_COMPONENTS) {
    const { total, sponsored: part } = result.components[component]
    if (part < 0n || part > (total > 0n ? total : 0n))
      throw new Error(`${component}: sponsored outside 0..total`)
    if (part > 0n && !fee.sponsorship?.components.has(component))
      throw new Error(`${component} sponsored unselected`)
    sponsored += part
  }
  if (sponsored !== result.subsidized) throw new Error('subsidized is not the sum of sponsored parts')
  const cap = fee.sponsorship?.cap
  if (cap !== undefined && result.subsidized > cap) throw new Error('cap exceeded')
  if (result.capHit && (cap === undefined || result.subsidized !== cap))
    throw new Error('capHit without the cap spent')
  if (!fee.sponsorship && result.subsidized !== 0n) throw new Error('sponsorship without subsidizeFees')
}

t.test('EXACT_INPUT: input, fees, sponsorship and output add up exactly', async (t) => {
  fc.assert(
    fc.property(amount, terms, conversion, (amountIn, fee, rate) => {
      const result = tryBreakdown(() => breakdownForInput(amountIn, fee, rate))
      if (!result) return
      if (result.amountIn !== amountIn) throw new Error('input changed')
      checkInvariants(result, fee, rate)
    }),
    { numRuns: 2000, seed: 424242 },
  )
  t.pass('2000 generated cases hold the identity')
})

t.test(
  'EXACT_OUTPUT: the output reaches the target with a tiny surplus and a near-minimal input',
  async (t) => {
    fc.assert(
      fc.property(amount, terms, conversion, (target, fee, rate) => {
        const result = tryBreakdown(() => breakdownForOutput(target, fee, rate))
        if (!result) return
        checkInvariants(result, fee, rate)
        if (result.amountOut < target) throw new Error('output below target')
        // Each per-unit fee's rounding can cost one unit per step; when fees take a large share of the
        // input, one more output unit needs several input units. Together they bound the distance.
        const unitsPerConvertible = (result.amountIn + result.convertible - 1n) / result.convertible
        const slack = (BigInt(fee.appFees.length) + 2n) * (unitsPerConvertible + 1n)
        if (result.amountIn > slack) {
          const smaller = tryBreakdown(() => breakdownForInput(result.amountIn - slack, fee, rate))
          if (smaller && smaller.amountOut >= target)
            throw new Error('a clearly smaller input also reaches the target')
        }
      }),
      { numRuns: 1000, seed: 777 },
    )
    t.pass('1000 generated cases reach their target')
  },
)

t.test('slippage bounds: the minimum never exceeds the amount and never goes negative', async (t) => {
  fc.assert(
    fc.property(amount, fc.bigInt({ min: 0n, max: 10000n }), (value, tolerance) => {
      const minimum = withSlippage(value, tolerance)
      if (minimum > value || minimum < 0n) throw new Error('out of bounds')
      if (tolerance === 0n && minimum !== value) throw new Error('zero tolerance must keep the amount')
    }),
    { numRuns: 1000, seed: 99 },
  )
  t.equal(withSlippage(1000n, 10000n), 0n)
  t.equal(withSlippage(1000n, 50n), 995n)
})

t.test('worked example: fees, cap and rebalance reward', async (t) => {
  const rate = { numerator: 1n, denominator: 1n }
  const base: FeeTerms = {
    executionCost: 1000n,
    rentCost: 0n,
    serviceBps: 5n,
    minimumServiceFee: 10n,
    rebalanceRewardBps: 0n,
    appFees: [parseBps('25'), parseBps('12.5')],
    swapSpreadBps: 0n,
  }
  const plain = breakdownForInput(1_000_000n, base, rate)
  t.equal(plain.relayerService, 500n, '5 bps of 1,000,000')
  t.same(plain.appFees, [2500n, 1250n], '25 bps and 12.5 bps')
  t.equal(plain.amountOut, 1_000_000n - 1000n - 500n - 3750n)

  const sponsored = breakdownForInput(
    1_000_000n,
    {
      ...base,
      sponsorship: { components: new Set(DEFAULT_SPONSORED_COMPONENTS), cap: 1200n },
    },
    rate,
  )
  t.equal(sponsored.components.execution.sponsored, 1000n, 'execution is paid first')
  t.equal(sponsored.components.relay.sponsored, 200n, 'the cap stops in the service (relay) bucket')
  t.equal(sponsored.components.app.sponsored, 0n)
  t.ok(sponsored.capHit)
  t.equal(sponsored.amountOut, plain.amountOut + 1200n)

  const rewarded = breakdownForInput(
    1_000_000n,
    { ...base, serviceBps: 0n, minimumServiceFee: 0n, rebalanceRewardBps: 2n },
    rate,
  )
  t.equal(rewarded.relayerService, -200n, 'a rebalancing fill earns a negative service fee')

  t.throws(() => breakdownForInput(900n, base, rate), { code: 'AMOUNT_TOO_LOW' })
  t.same(parseBps('0'), { numerator: 0n, denominator: 1n })
  t.throws(() => parseBps('-1'), { code: 'INVALID_REQUEST' })
})
