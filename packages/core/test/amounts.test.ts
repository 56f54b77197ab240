import fc from 'fast-check'
import t from 'tap'
import {
  amountToString,
  applyBps,
  applyBpsCeil,
  applyBpsFloor,
  BPS_DENOMINATOR,
  bpsOf,
  createAjv,
  formatUnits,
  isUint256,
  MAX_UINT256,
  mulDiv,
  PontisError,
  parseAmount,
  parseSignedAmount,
  parseUnits,
} from '../src/index.js'

t.test('parseAmount accepts digits only and names the field when it refuses', async (t) => {
  t.equal(parseAmount('0'), 0n)
  t.equal(parseAmount('1500000'), 1500000n)
  t.equal(
    parseAmount('115792089237316195423570985008687907853269984665640564039457584007913129639935'),
    2n ** 256n - 1n,
  )
  for (const bad of ['', '-1', '1.5', '1e6', ' 1', '1 ', '+1', '0x10', '１']) {
    const error = t.throws(() => parseAmount(bad, 'amount')) as PontisError
    t.type(error, PontisError, `rejects ${JSON.stringify(bad)}`)
    t.equal(error.code, 'INVALID_REQUEST')
    t.match(error.message, /^amount '/)
    t.same(error.errorData, { field: 'amount', value: bad })
  }
  const error = t.throws(() => parseAmount('12.5', 'txs[0].value')) as PontisError
  t.match(error.message, "txs[0].value '12.5' is not a non-negative integer")
})

t.test('isUint256 admits 0 to 2^256 - 1 and the uint256 format checks it', async (t) => {
  const max = MAX_UINT256.toString()
  for (const good of ['0', '000', '1', max, `000${max}`]) t.ok(isUint256(good), `admits ${good.slice(0, 12)}`)
  const over = (MAX_UINT256 + 1n).toString()
  for (const bad of [over, '9'.repeat(78), '9'.repeat(10_000), '', '-1', '1.5', '1e6', '0x10'])
    t.notOk(isUint256(bad), `refuses ${bad.slice(0, 12)}`)
  const validate = createAjv().compile({ type: 'string', format: 'uint256' })
  t.ok(validate(max))
  t.notOk(validate(over))
  t.match(validate.errors?.[0]?.params, { format: 'uint256' })
})

t.test('parseAmount does not echo a huge value in full', async (t) => {
  const error = t.throws(() => parseAmount(`x${'9'.repeat(10_000)}`)) as PontisError
  t.ok(error.message.length < 250, 'message stays short')
})

t.test('parseSignedAmount accepts an optional minus', async (t) => {
  t.equal(parseSignedAmount('-42'), -42n)
  t.equal(parseSignedAmount('42'), 42n)
  t.equal(parseSignedAmount('-0'), 0n)
  for (const bad of ['--1', '-', '+1', '1-', '-1.0']) {
    t.throws(() => parseSignedAmount(bad), { code: 'INVALID_REQUEST' }, `rejects ${bad}`)
  }
})

t.test('amountToString is the wire form', async (t) => {
  t.equal(amountToString(0n), '0')
  t.equal(amountToString(-5n), '-5')
  t.equal(amountToString(10n ** 30n), '1000000000000000000000000000000')
})

t.test('formatUnits', async (t) => {
  t.equal(formatUnits(1500000n, 6), '1.5')
  t.equal(formatUnits(0n, 6), '0')
  t.equal(formatUnits(-500000n, 6), '-0.5')
  t.equal(formatUnits(1n, 18), '0.000000000000000001')
  t.equal(formatUnits(10n ** 18n, 18), '1')
  t.equal(formatUnits(123n, 0), '123')
  t.equal(formatUnits(1000n, 2), '10')
  t.equal(formatUnits(-1n, 1), '-0.1')
  t.throws(() => formatUnits(1n, -1), RangeError)
  t.throws(() => formatUnits(1n, 1.5), RangeError)
  t.throws(() => formatUnits(1n, 256), RangeError)
})

t.test('parseUnits is exact and strict', async (t) => {
  t.equal(parseUnits('1.5', 6), 1500000n)
  t.equal(parseUnits('0', 6), 0n)
  t.equal(parseUnits('-0.5', 6), -500000n)
  t.equal(parseUnits('1', 0), 1n)
  t.equal(parseUnits('0.000000000000000001', 18), 1n)
  t.equal(parseUnits('007.10', 2), 710n)
  const tooPrecise = t.throws(() => parseUnits('1.2345678', 6, 'topupGasAmount')) as PontisError
  t.equal(tooPrecise.code, 'INVALID_REQUEST')
  t.match(tooPrecise.message, "topupGasAmount '1.2345678' is not representable with 6 decimals (it has 7)")
  t.throws(() => parseUnits('1.0', 0), { code: 'INVALID_REQUEST' }, 'even a zero beyond the decimals')
  for (const bad of ['', '.5', '1.', '1e3', '1,5', 'abc', '+1', '--1', '1.2.3', ' 1']) {
    t.throws(() => parseUnits(bad, 6), { code: 'INVALID_REQUEST' }, `rejects ${JSON.stringify(bad)}`)
  }
  t.throws(() => parseUnits('1', -2), RangeError)
})

t.test('formatUnits and parseUnits round-trip (property)', async (t) => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(10n ** 80n), max: 10n ** 80n }),
      fc.integer({ min: 0, max: 30 }),
      (amount, decimals) => {
        const text = formatUnits(amount, decimals)
        return parseUnits(text, decimals) === amount && !/\.\d*0$/.test(text)
      },
    ),
    { numRuns: 2000 },
  )
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
      fc.integer({ min: 0, max: 30 }),
      fc.integer({ min: 0, max: 30 }),
      (amount, decimals, extraZeros) => {
        // A decimal with trailing zeros (within the allowed digits) parses to the same amount.
        const text = formatUnits(amount, decimals)
        const room = decimals - (text.split('.')[1]?.length ?? 0)
        const zeros = '0'.repeat(Math.min(room, extraZeros))
        const padded = zeros === '' ? text : text.includes('.') ? text + zeros : `${text}.${zeros}`
        return parseUnits(padded, decimals) === amount
      },
    ),
  )
  t.pass('round-trips hold')
})

t.test('mulDiv rounds in the asked direction', async (t) => {
  t.equal(mulDiv(10n, 1n, 3n, 'floor'), 3n)
  t.equal(mulDiv(10n, 1n, 3n, 'ceil'), 4n)
  t.equal(mulDiv(9n, 1n, 3n, 'ceil'), 3n)
  t.equal(mulDiv(-10n, 1n, 3n, 'floor'), -4n, 'floor goes toward negative infinity')
  t.equal(mulDiv(-10n, 1n, 3n, 'ceil'), -3n)
  t.equal(mulDiv(10n, 1n, -3n, 'floor'), -4n)
  t.equal(mulDiv(-10n, 1n, -3n, 'ceil'), 4n)
  t.equal(mulDiv(2n ** 255n, 2n ** 255n, 2n ** 255n, 'floor'), 2n ** 255n, 'no overflow')
  t.throws(() => mulDiv(1n, 1n, 0n, 'floor'), RangeError)
})

t.test('mulDiv: floor <= exact <= ceil, and they differ by at most one (property)', async (t) => {
  const big = fc.bigInt({ min: -(2n ** 256n), max: 2n ** 256n })
  fc.assert(
    fc.property(
      big,
      big,
      big.filter((d) => d !== 0n),
      (a, b, d) => {
        const floor = mulDiv(a, b, d, 'floor')
        const ceil = mulDiv(a, b, d, 'ceil')
        // Compare against the exact rational a*b/d without dividing: multiply through by |d|.
        const sign = d < 0n ? -1n : 1n
        const exactTimesAbsD = a * b * sign
        const absD = d * sign
        return (
          floor * absD <= exactTimesAbsD &&
          exactTimesAbsD <= ceil * absD &&
          ceil - floor <= 1n &&
          (ceil === floor) === ((a * b) % d === 0n)
        )
      },
    ),
    { numRuns: 2000 },
  )
  t.pass('bounds hold')
})

t.test('basis points', async (t) => {
  t.equal(BPS_DENOMINATOR, 10_000n)
  t.equal(applyBps(1000n, 25), 2n)
  t.equal(applyBps(1000n, 25, 'ceil'), 3n)
  t.equal(applyBpsFloor(1000n, 25n), 2n)
  t.equal(applyBpsCeil(1000n, 25n), 3n)
  t.equal(applyBps(1_000_000n, 10_000), 1_000_000n)
  t.equal(applyBps(1_000_000n, 0), 0n)
  t.throws(() => applyBps(1000n, 2.5), RangeError)
  t.equal(bpsOf(25n, 1000n), 250n)
  t.equal(bpsOf(1n, 3n), 3333n)
  t.equal(bpsOf(1n, 3n, 'ceil'), 3334n)
  t.equal(bpsOf(-1n, 3n), -3334n)
  t.throws(() => bpsOf(1n, 0n), RangeError)
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: 10n ** 30n }),
      fc.integer({ min: 0, max: 10_000 }),
      (amount, bps) => {
        const floor = applyBpsFloor(amount, bps)
        const ceil = applyBpsCeil(amount, bps)
        return floor <= ceil && ceil - floor <= 1n && floor >= 0n && ceil <= amount
      },
    ),
  )
})
