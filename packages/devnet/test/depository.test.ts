import t from 'tap'
import {
  type Address,
  encodeFunctionData,
  getAddress,
  type Hex,
  hashStruct,
  hashTypedData,
  maxUint256,
  parseEther,
  parseEventLogs,
  zeroAddress,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { ALLOCATOR, type DevAccount, SOLVER, USERS } from '../src/accounts.js'
import { pontisDepositoryAbi, pontisUsdAbi } from '../src/artifacts.js'
import {
  clientsFor,
  latestTimestamp,
  malleate,
  randomBytes32,
  revertName,
  startTestDevnet,
} from './fixtures/helpers.js'

const CALL_REQUEST_TYPES = {
  CallRequest: [
    { name: 'calls', type: 'Call[]' },
    { name: 'nonce', type: 'uint256' },
    { name: 'expiration', type: 'uint256' },
  ],
  Call: [
    { name: 'to', type: 'address' },
    { name: 'data', type: 'bytes' },
    { name: 'value', type: 'uint256' },
    { name: 'allowFailure', type: 'bool' },
  ],
} as const

interface Call {
  to: Address
  data: Hex
  value: bigint
  allowFailure: boolean
}
interface CallRequest {
  calls: Call[]
  nonce: bigint
  expiration: bigint
}

t.test('depository', async (t) => {
  const devnet = await startTestDevnet(t)
  const chain = devnet.chains[0]!
  const { publicClient, wallet, mined } = clientsFor(chain)
  const { depository, stablecoin } = chain.contracts
  const [alice, bob, carol, dave] = USERS as [DevAccount, DevAccount, DevAccount, DevAccount]
  const domain = {
    name: 'RelayDepository',
    version: '1',
    chainId: chain.chainId,
    verifyingContract: depository,
  }
  // Token errors appear when a deposit's transferFrom fails; both ABIs let viem name them.
  const abi = [...pontisDepositoryAbi, ...pontisUsdAbi.filter((item) => item.type === 'error')]

  const usdcOf = (address: Address) =>
    publicClient.readContract({
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName: 'balanceOf',
      args: [address],
    })
  const sign = (request: CallRequest, signer: DevAccount = ALLOCATOR) =>
    privateKeyToAccount(signer.privateKey).signTypedData({
      domain,
      types: CALL_REQUEST_TYPES,
      primaryType: 'CallRequest',
      message: request,
    })
  const execute = (request: CallRequest, signature: Hex) =>
    wallet(SOLVER).writeContract({
      address: depository,
      abi: pontisDepositoryAbi,
      functionName: 'execute',
      args: [request, signature],
    })
  const simulateExecute = (request: CallRequest, signature: Hex) =>
    publicClient.simulateContract({
      account: SOLVER.address,
      address: depository,
      abi,
      functionName: 'execute',
      args: [request, signature],
    })

  await t.test('depositNative credits msg.sender or the named depositor', async (t) => {
    const id = randomBytes32()
    const receipt = await mined(
      await wallet(alice).writeContract({
        address: depository,
        abi: pontisDepositoryAbi,
        functionName: 'depositNative',
        args: [zeroAddress, id],
        value: parseEther('2'),
      }),
    )
    const [event] = parseEventLogs({
      abi: pontisDepositoryAbi,
      logs: receipt.logs,
      eventName: 'RelayNativeDeposit',
    })
    t.same(event?.args, { from: getAddress(alice.address), amount: parseEther('2'), id })

    const other = randomBytes32()
    const second = await mined(
      await wallet(alice).writeContract({
        address: depository,
        abi: pontisDepositoryAbi,
        functionName: 'depositNative',
        args: [bob.address, other],
        value: 1n,
      }),
    )
    const [named] = parseEventLogs({
      abi: pontisDepositoryAbi,
      logs: second.logs,
      eventName: 'RelayNativeDeposit',
    })
    t.same(named?.args, { from: getAddress(bob.address), amount: 1n, id: other })
    t.equal(await publicClient.getBalance({ address: depository }), parseEther('2') + 1n)
  })

  await t.test('depositErc20 with an amount emits the deposit right after the Transfer', async (t) => {
    await mined(
      await wallet(alice).writeContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'approve',
        args: [depository, maxUint256],
      }),
    )
    const id = randomBytes32()
    const receipt = await mined(
      await wallet(alice).writeContract({
        address: depository,
        abi: pontisDepositoryAbi,
        functionName: 'depositErc20',
        args: [zeroAddress, stablecoin, 100_000_000n, id],
      }),
    )
    const logs = parseEventLogs({ abi: [...pontisUsdAbi, ...pontisDepositoryAbi], logs: receipt.logs })
    t.same(
      logs.map((log) => log.eventName),
      ['Transfer', 'RelayErc20Deposit'],
    )
    t.same(logs[0]?.args, { from: getAddress(alice.address), to: depository, value: 100_000_000n })
    t.same(logs[1]?.args, { from: getAddress(alice.address), token: stablecoin, amount: 100_000_000n, id })
    t.equal(logs[1]!.logIndex, logs[0]!.logIndex + 1)
    t.equal(await usdcOf(depository), 100_000_000n)
  })

  await t.test('depositErc20 without an amount takes the whole allowance', async (t) => {
    await mined(
      await wallet(bob).writeContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'approve',
        args: [depository, 55_000_000n],
      }),
    )
    const id = randomBytes32()
    const receipt = await mined(
      await wallet(bob).writeContract({
        address: depository,
        abi: pontisDepositoryAbi,
        functionName: 'depositErc20',
        args: [carol.address, stablecoin, id],
      }),
    )
    const [event] = parseEventLogs({
      abi: pontisDepositoryAbi,
      logs: receipt.logs,
      eventName: 'RelayErc20Deposit',
    })
    t.same(event?.args, { from: getAddress(carol.address), token: stablecoin, amount: 55_000_000n, id })
    t.equal(
      await publicClient.readContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'allowance',
        args: [bob.address, depository],
      }),
      0n,
    )
    t.equal(await usdcOf(depository), 155_000_000n)

    // Without an allowance the token's own error reaches the depositor.
    const reason = await revertName(
      publicClient.simulateContract({
        account: dave.address,
        address: depository,
        abi,
        functionName: 'depositErc20',
        args: [zeroAddress, stablecoin, 1n, id],
      }),
    )
    t.equal(reason, 'InsufficientAllowance')
  })

  await t.test('execute pays out native and ERC-20 under an allocator signature, once', async (t) => {
    const now = await latestTimestamp(chain)
    const request: CallRequest = {
      calls: [
        { to: dave.address, data: '0x', value: parseEther('1'), allowFailure: false },
        {
          to: stablecoin,
          data: encodeFunctionData({
            abi: pontisUsdAbi,
            functionName: 'transfer',
            args: [dave.address, 40_000_000n],
          }),
          value: 0n,
          allowFailure: false,
        },
      ],
      nonce: 1n,
      expiration: now + 3600n,
    }
    const id = hashStruct({ data: request, types: CALL_REQUEST_TYPES, primaryType: 'CallRequest' })
    const digest = hashTypedData({
      domain,
      types: CALL_REQUEST_TYPES,
      primaryType: 'CallRequest',
      message: request,
    })
    t.same(
      await publicClient.readContract({
        address: depository,
        abi: pontisDepositoryAbi,
        functionName: 'hashCallRequest',
        args: [request],
      }),
      [id, digest],
      'the contract hashes the request like viem',
    )

    const ethBefore = await publicClient.getBalance({ address: dave.address })
    const usdcBefore = await usdcOf(dave.address)
    const signature = await sign(request)
    const receipt = await mined(await execute(request, signature))
    t.equal(await publicClient.getBalance({ address: dave.address }), ethBefore + parseEther('1'))
    t.equal(await usdcOf(dave.address), usdcBefore + 40_000_000n)
    const events = parseEventLogs({
      abi: pontisDepositoryAbi,
      logs: receipt.logs,
      eventName: 'RelayCallExecuted',
    })
    t.same(
      events.map((event) => event.args),
      request.calls.map((call) => ({ id, call })),
    )
    t.equal(
      await publicClient.readContract({
        address: depository,
        abi: pontisDepositoryAbi,
        functionName: 'callRequests',
        args: [id],
      }),
      true,
    )
    t.equal(
      await revertName(simulateExecute(request, signature)),
      'CallRequestAlreadyUsed',
      'replay rejected',
    )
  })

  await t.test('execute rejects expired requests and signatures not made by the allocator', async (t) => {
    const now = await latestTimestamp(chain)
    const payout: Call = { to: dave.address, data: '0x', value: 1n, allowFailure: false }
    const expired: CallRequest = { calls: [payout], nonce: 2n, expiration: now - 1n }
    t.equal(await revertName(simulateExecute(expired, await sign(expired))), 'CallRequestExpired')

    const request: CallRequest = { calls: [payout], nonce: 3n, expiration: now + 3600n }
    t.equal(
      await revertName(simulateExecute(request, await sign(request, alice))),
      'InvalidSignature',
      'wrong signer',
    )
    const good = await sign(request)
    t.equal(await revertName(simulateExecute(request, malleate(good))), 'InvalidSignature', 'high-s rejected')
    t.equal(
      await revertName(simulateExecute(request, good.slice(0, 130) as Hex)),
      'InvalidSignature',
      'short',
    )
    t.equal(
      await revertName(simulateExecute({ ...request, nonce: 4n }, good)),
      'InvalidSignature',
      'a signature covers the nonce',
    )
    t.equal(
      await revertName(
        simulateExecute(request, `${good.slice(0, 130)}${good.slice(130) === '1b' ? '00' : '01'}` as Hex),
      ),
      'no revert',
      'v given as 0/1 is accepted',
    )
    t.equal(
      await revertName(simulateExecute(request, `${good.slice(0, 130)}1d` as Hex)),
      'InvalidSignature',
      'bad v rejected',
    )
  })

  await t.test('allowFailure lets a failing call pass; otherwise the request reverts', async (t) => {
    const now = await latestTimestamp(chain)
    const failing: Call = {
      to: stablecoin,
      data: encodeFunctionData({
        abi: pontisUsdAbi,
        functionName: 'transfer',
        args: [dave.address, maxUint256],
      }),
      value: 0n,
      allowFailure: true,
    }
    const payout: Call = { to: carol.address, data: '0x', value: 5n, allowFailure: false }
    const strict: CallRequest = {
      calls: [{ ...failing, allowFailure: false }, payout],
      nonce: 5n,
      expiration: now + 60n,
    }
    t.equal(await revertName(simulateExecute(strict, await sign(strict))), 'CallFailed')

    const lenient: CallRequest = { calls: [failing, payout], nonce: 6n, expiration: now + 60n }
    const signature = await sign(lenient)
    const { result } = await simulateExecute(lenient, signature)
    t.same(
      result.map((entry) => entry.success),
      [false, true],
    )
    const before = await publicClient.getBalance({ address: carol.address })
    const receipt = await mined(await execute(lenient, signature))
    t.equal(await publicClient.getBalance({ address: carol.address }), before + 5n)
    const events = parseEventLogs({
      abi: pontisDepositoryAbi,
      logs: receipt.logs,
      eventName: 'RelayCallExecuted',
    })
    t.same(
      events.map((event) => event.args.call),
      [payout],
      'only the call that took effect is reported',
    )
  })
})
