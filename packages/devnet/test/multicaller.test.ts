import t from 'tap'
import {
  type Address,
  concat,
  decodeErrorResult,
  encodeFunctionData,
  getAddress,
  type Hex,
  parseEther,
  parseEventLogs,
  zeroAddress,
} from 'viem'
import { type DevAccount, SOLVER, USERS } from '../src/accounts.js'
import {
  pontisCallExecutorAbi,
  pontisDepositoryAbi,
  pontisMulticallerAbi,
  pontisUsdAbi,
} from '../src/artifacts.js'
import { MULTICALLER_EXECUTOR_ADDRESS } from '../src/devnet.js'
import { clientsFor, randomBytes32, revertName, startTestDevnet } from './fixtures/helpers.js'

interface Payment {
  token: Address
  recipient: Address
  amount: bigint
}
interface Call {
  to: Address
  value: bigint
  data: Hex
}

t.test('multicaller', async (t) => {
  const devnet = await startTestDevnet(t)
  const chain = devnet.chains[0]!
  const { publicClient, wallet, mined } = clientsFor(chain)
  const { depository, stablecoin, multicaller } = chain.contracts
  const [alice, bob, mallory] = USERS as [DevAccount, DevAccount, DevAccount]
  const abi = [...pontisMulticallerAbi, ...pontisUsdAbi.filter((item) => item.type === 'error')]

  const usdcOf = (address: Address) =>
    publicClient.readContract({
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName: 'balanceOf',
      args: [address],
    })
  const ethOf = (address: Address) => publicClient.getBalance({ address })
  /** The fill calldata as the plugin sends it: ABI data, then the order id as the last 32 bytes. */
  const fillData = (orderId: Hex, payments: Payment[], calls: Call[]): Hex =>
    concat([
      encodeFunctionData({
        abi: pontisMulticallerAbi,
        functionName: 'fill',
        args: [orderId, payments, calls],
      }),
      orderId,
    ])
  const fill = (orderId: Hex, payments: Payment[], calls: Call[], value: bigint, from: DevAccount = SOLVER) =>
    wallet(from).sendTransaction({ to: multicaller, data: fillData(orderId, payments, calls), value })
  /** The revert of a fill, decoded against the multicaller's (and the token's) errors. */
  const fillRevert = async (payments: Payment[], calls: Call[], value: bigint) => {
    const data = await publicClient
      .call({
        account: SOLVER.address,
        to: multicaller,
        data: fillData(randomBytes32(), payments, calls),
        value,
      })
      .then(
        () => undefined,
        (error: unknown) => revertData(error),
      )
    if (data === undefined) return undefined
    return decodeErrorResult({ abi, data })
  }

  await t.test('pays native and token, runs calls with value, tags the calldata, emits Filled', async (t) => {
    const orderId = randomBytes32()
    const depositId = randomBytes32()
    const payments: Payment[] = [
      { token: zeroAddress, recipient: alice.address, amount: parseEther('1.5') },
      { token: stablecoin, recipient: alice.address, amount: 25_000_000n },
      // A gas top-up: a second native payment to the same recipient.
      { token: zeroAddress, recipient: alice.address, amount: 7n },
    ]
    const calls: Call[] = [
      { to: bob.address, value: 11n, data: '0x' },
      {
        to: depository,
        value: parseEther('0.25'),
        data: encodeFunctionData({
          abi: pontisDepositoryAbi,
          functionName: 'depositNative',
          args: [bob.address, depositId],
        }),
      },
    ]
    const [aliceEth, aliceUsdc, bobEth, solverUsdc, depositoryEth] = await Promise.all([
      ethOf(alice.address),
      usdcOf(alice.address),
      ethOf(bob.address),
      usdcOf(SOLVER.address),
      ethOf(depository),
    ])
    const hash = await fill(orderId, payments, calls, parseEther('1.75') + 18n)
    const receipt = await mined(hash)
    t.equal(await ethOf(alice.address), aliceEth + parseEther('1.5') + 7n)
    t.equal(await usdcOf(alice.address), aliceUsdc + 25_000_000n)
    t.equal(await usdcOf(SOLVER.address), solverUsdc - 25_000_000n, 'the token came from the solver')
    t.equal(await ethOf(bob.address), bobEth + 11n)
    t.equal(await ethOf(depository), depositoryEth + parseEther('0.25'))
    t.equal(await ethOf(multicaller), 0n, 'nothing stays in the multicaller')
    t.equal(await ethOf(MULTICALLER_EXECUTOR_ADDRESS), 0n, 'nothing stays in the executor')

    const transaction = await publicClient.getTransaction({ hash })
    t.equal(transaction.input.slice(-64), orderId.slice(2), 'the calldata ends with the order id')
    const filled = parseEventLogs({ abi: pontisMulticallerAbi, logs: receipt.logs, eventName: 'Filled' })
    t.same(
      filled.map((event) => event.args),
      [{ orderId, solver: getAddress(SOLVER.address) }],
    )
    const [deposit] = parseEventLogs({
      abi: pontisDepositoryAbi,
      logs: receipt.logs,
      eventName: 'RelayNativeDeposit',
    })
    t.same(
      deposit?.args,
      { from: getAddress(bob.address), amount: parseEther('0.25'), id: depositId },
      'the call ran',
    )
  })

  await t.test('unspent value goes back to the solver', async (t) => {
    const payments: Payment[] = [{ token: zeroAddress, recipient: alice.address, amount: 1000n }]
    const before = await ethOf(SOLVER.address)
    const receipt = await mined(await fill(randomBytes32(), payments, [], parseEther('3')))
    const gas = receipt.gasUsed * receipt.effectiveGasPrice
    t.equal(await ethOf(SOLVER.address), before - 1000n - gas, 'only the payment and the gas were spent')
    t.equal(await ethOf(multicaller), 0n)
  })

  await t.test('a reverting call reverts everything and bubbles its reason', async (t) => {
    const aliceEth = await ethOf(alice.address)
    const aliceUsdc = await usdcOf(alice.address)
    const payments: Payment[] = [
      { token: zeroAddress, recipient: alice.address, amount: 5n },
      { token: stablecoin, recipient: alice.address, amount: 5n },
    ]
    // The calls run from the executor, which holds no approval: the solver's allowance is safe.
    const steal: Call = {
      to: stablecoin,
      value: 0n,
      data: encodeFunctionData({
        abi: pontisUsdAbi,
        functionName: 'transferFrom',
        args: [SOLVER.address, mallory.address, 1n],
      }),
    }
    const calls: Call[] = [{ to: bob.address, value: 1n, data: '0x' }, steal]
    const decoded = await fillRevert(payments, calls, 6n)
    t.equal(decoded?.errorName, 'CallFailed')
    t.equal(decoded?.args?.[0], 1n, 'the index of the failing call')
    const inner = decodeErrorResult({ abi, data: decoded?.args?.[1] as Hex })
    t.equal(inner.errorName, 'InsufficientAllowance', "the token's own reason")

    const hash = await wallet(SOLVER).sendTransaction({
      to: multicaller,
      data: fillData(randomBytes32(), payments, calls),
      value: 6n,
      gas: 500_000n,
    })
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    t.equal(receipt.status, 'reverted')
    t.equal(await ethOf(alice.address), aliceEth, 'the native payment was undone')
    t.equal(await usdcOf(alice.address), aliceUsdc, 'the token payment was undone')
    t.equal(await usdcOf(mallory.address), 10_000n * 10n ** 6n, 'nothing was stolen')
  })

  await t.test('payment failures and short value are named', async (t) => {
    const tooMuch: Payment[] = [{ token: stablecoin, recipient: alice.address, amount: 10n ** 30n }]
    const payment = await fillRevert(tooMuch, [], 0n)
    t.equal(payment?.errorName, 'PaymentFailed')
    t.equal(decodeErrorResult({ abi, data: payment?.args?.[1] as Hex }).errorName, 'InsufficientBalance')

    const native: Payment[] = [{ token: zeroAddress, recipient: alice.address, amount: 10n }]
    const short = await fillRevert(native, [{ to: bob.address, value: 5n, data: '0x' }], 14n)
    t.equal(short?.errorName, 'InsufficientValue')
    t.same(short?.args, [14n, 15n])

    // A recipient that refuses native currency (the stablecoin has no receive) fails the payment.
    const refused = await fillRevert([{ token: zeroAddress, recipient: stablecoin, amount: 1n }], [], 1n)
    t.equal(refused?.errorName, 'PaymentFailed')

    // Another account's fill pulls its own tokens, never the solver's.
    t.equal(
      await revertName(
        publicClient.simulateContract({
          account: mallory.address,
          address: multicaller,
          abi,
          functionName: 'fill',
          args: [randomBytes32(), [{ token: stablecoin, recipient: mallory.address, amount: 1n }], []],
        }),
      ),
      'PaymentFailed',
      'mallory has not approved the multicaller',
    )
  })

  await t.test('only the multicaller runs the executor', async (t) => {
    t.equal(
      await revertName(
        publicClient.simulateContract({
          account: mallory.address,
          address: MULTICALLER_EXECUTOR_ADDRESS,
          abi: pontisCallExecutorAbi,
          functionName: 'run',
          args: [[], mallory.address],
        }),
      ),
      'OnlyMulticaller',
    )
  })
})

/** The revert data carried by a failed `eth_call`, wherever viem put it in the cause chain. */
function revertData(error: unknown): Hex | undefined {
  for (let current = error; current; current = (current as { cause?: unknown }).cause) {
    const data = (current as { data?: unknown }).data
    if (typeof data === 'string' && data.startsWith('0x')) return data as Hex
    if (typeof data === 'object' && data !== null) {
      const inner = (data as { data?: unknown }).data
      if (typeof inner === 'string' && inner.startsWith('0x')) return inner as Hex
    }
  }
  return undefined
}
