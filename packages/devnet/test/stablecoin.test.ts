import t from 'tap'
import { type Address, getAddress, type Hex, parseEventLogs, zeroAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { type DevAccount, MINTER, SOLVER, USERS } from '../src/accounts.js'
import { pontisDepositoryAbi, pontisUsdAbi } from '../src/artifacts.js'
import {
  clientsFor,
  latestTimestamp,
  malleate,
  randomBytes32,
  revertName,
  startTestDevnet,
  vrs,
} from './fixtures/helpers.js'

const PERMIT_TYPES = {
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const

const AUTHORIZATION_FIELDS = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const
const TRANSFER_TYPES = { TransferWithAuthorization: AUTHORIZATION_FIELDS } as const
const RECEIVE_TYPES = { ReceiveWithAuthorization: AUTHORIZATION_FIELDS } as const
const CANCEL_TYPES = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const

interface Authorization {
  from: Address
  to: Address
  value: bigint
  validAfter: bigint
  validBefore: bigint
  nonce: Hex
}

t.test('stablecoin', async (t) => {
  const devnet = await startTestDevnet(t)
  const chain = devnet.chains[0]!
  const { publicClient, wallet, mined } = clientsFor(chain)
  const { depository, stablecoin } = chain.contracts
  const [alice, bob, carol] = USERS as [DevAccount, DevAccount, DevAccount]
  const domain = { name: 'Pontis USD', version: '2', chainId: chain.chainId, verifyingContract: stablecoin }
  const signer = (account: DevAccount) => privateKeyToAccount(account.privateKey)
  const usdcOf = (address: Address) =>
    publicClient.readContract({
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName: 'balanceOf',
      args: [address],
    })
  const used = (authorizer: Address, nonce: Hex) =>
    publicClient.readContract({
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName: 'authorizationState',
      args: [authorizer, nonce],
    })
  const authorization = async (overrides: Partial<Authorization> = {}): Promise<Authorization> => ({
    from: alice.address,
    to: bob.address,
    value: 1_000_000n,
    validAfter: 0n,
    validBefore: (await latestTimestamp(chain)) + 3600n,
    nonce: randomBytes32(),
    ...overrides,
  })
  const args = (message: Authorization, signature: Hex) => {
    const { v, r, s } = vrs(signature)
    return [
      message.from,
      message.to,
      message.value,
      message.validAfter,
      message.validBefore,
      message.nonce,
      v,
      r,
      s,
    ] as const
  }
  const simulate = (
    account: DevAccount,
    functionName: 'transferWithAuthorization' | 'receiveWithAuthorization',
    message: Authorization,
    signature: Hex,
  ) =>
    publicClient.simulateContract({
      account: account.address,
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName,
      args: args(message, signature),
    })

  await t.test('only the owner mints', async (t) => {
    t.equal(
      await publicClient.readContract({ address: stablecoin, abi: pontisUsdAbi, functionName: 'owner' }),
      getAddress(MINTER.address),
    )
    const attempt = publicClient.simulateContract({
      account: alice.address,
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName: 'mint',
      args: [alice.address, 1n],
    })
    t.equal(await revertName(attempt), 'Unauthorized')
  })

  await t.test('EIP-2612 permit, then a whole-allowance deposit by the user', async (t) => {
    const deadline = (await latestTimestamp(chain)) + 3600n
    const nonce = await publicClient.readContract({
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName: 'nonces',
      args: [alice.address],
    })
    const message = { owner: alice.address, spender: depository, value: 25_000_000n, nonce, deadline }
    const signature = await signer(alice).signTypedData({
      domain,
      types: PERMIT_TYPES,
      primaryType: 'Permit',
      message,
    })
    const { v, r, s } = vrs(signature)
    // A relayer (the solver) submits the permit; the user pays no gas for the approval.
    await mined(
      await wallet(SOLVER).writeContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'permit',
        args: [alice.address, depository, 25_000_000n, deadline, v, r, s],
      }),
    )
    t.equal(
      await publicClient.readContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'nonces',
        args: [alice.address],
      }),
      nonce + 1n,
    )
    const replay = publicClient.simulateContract({
      account: SOLVER.address,
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName: 'permit',
      args: [alice.address, depository, 25_000_000n, deadline, v, r, s],
    })
    t.equal(await revertName(replay), 'InvalidSignature', 'a used permit no longer verifies')

    const id = randomBytes32()
    const receipt = await mined(
      await wallet(alice).writeContract({
        address: depository,
        abi: pontisDepositoryAbi,
        functionName: 'depositErc20',
        args: [zeroAddress, stablecoin, id],
      }),
    )
    const [event] = parseEventLogs({
      abi: pontisDepositoryAbi,
      logs: receipt.logs,
      eventName: 'RelayErc20Deposit',
    })
    t.same(event?.args, { from: getAddress(alice.address), token: stablecoin, amount: 25_000_000n, id })

    const expired = { ...message, nonce: nonce + 1n, deadline: (await latestTimestamp(chain)) - 1n }
    const late = await signer(alice).signTypedData({
      domain,
      types: PERMIT_TYPES,
      primaryType: 'Permit',
      message: expired,
    })
    const lateAttempt = publicClient.simulateContract({
      account: SOLVER.address,
      address: stablecoin,
      abi: pontisUsdAbi,
      functionName: 'permit',
      args: [alice.address, depository, 25_000_000n, expired.deadline, late],
    })
    t.equal(await revertName(lateAttempt), 'PermitExpired')

    // The packed-signature overload works the same way.
    const packed = { ...message, nonce: nonce + 1n, value: 7n }
    const packedSignature = await signer(alice).signTypedData({
      domain,
      types: PERMIT_TYPES,
      primaryType: 'Permit',
      message: packed,
    })
    await mined(
      await wallet(SOLVER).writeContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'permit',
        args: [alice.address, depository, 7n, deadline, packedSignature],
      }),
    )
    t.equal(
      await publicClient.readContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'allowance',
        args: [alice.address, depository],
      }),
      7n,
    )
  })

  await t.test('EIP-3009 transferWithAuthorization, submitted by anyone, once', async (t) => {
    const message = await authorization()
    const signature = await signer(alice).signTypedData({
      domain,
      types: TRANSFER_TYPES,
      primaryType: 'TransferWithAuthorization',
      message,
    })
    const aliceBefore = await usdcOf(alice.address)
    const bobBefore = await usdcOf(bob.address)
    const receipt = await mined(
      await wallet(SOLVER).writeContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'transferWithAuthorization',
        args: args(message, signature),
      }),
    )
    t.equal(await usdcOf(alice.address), aliceBefore - message.value)
    t.equal(await usdcOf(bob.address), bobBefore + message.value)
    const logs = parseEventLogs({ abi: pontisUsdAbi, logs: receipt.logs })
    t.same(
      logs.map((log) => log.eventName),
      ['AuthorizationUsed', 'Transfer'],
    )
    t.same(logs[0]?.args, { authorizer: getAddress(alice.address), nonce: message.nonce })
    t.equal(await used(alice.address, message.nonce), true)

    t.equal(
      await revertName(simulate(SOLVER, 'transferWithAuthorization', message, signature)),
      'AuthorizationUsedOrCanceled',
    )

    const expired = await authorization({ validBefore: await latestTimestamp(chain) })
    const expiredSignature = await signer(alice).signTypedData({
      domain,
      types: TRANSFER_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: expired,
    })
    t.equal(
      await revertName(simulate(SOLVER, 'transferWithAuthorization', expired, expiredSignature)),
      'AuthorizationExpired',
    )

    const early = await authorization({
      validAfter: (await latestTimestamp(chain)) + 3600n,
      validBefore: 2n ** 64n,
    })
    const earlySignature = await signer(alice).signTypedData({
      domain,
      types: TRANSFER_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: early,
    })
    t.equal(
      await revertName(simulate(SOLVER, 'transferWithAuthorization', early, earlySignature)),
      'AuthorizationNotYetValid',
    )

    const fresh = await authorization()
    const byBob = await signer(bob).signTypedData({
      domain,
      types: TRANSFER_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: fresh,
    })
    t.equal(
      await revertName(simulate(SOLVER, 'transferWithAuthorization', fresh, byBob)),
      'InvalidSignature',
      'signed by someone else',
    )
    const byAlice = await signer(alice).signTypedData({
      domain,
      types: TRANSFER_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: fresh,
    })
    t.equal(
      await revertName(simulate(SOLVER, 'transferWithAuthorization', fresh, malleate(byAlice))),
      'InvalidSignature',
      'high-s',
    )
    t.equal(
      await revertName(simulate(bob, 'receiveWithAuthorization', fresh, byAlice)),
      'InvalidSignature',
      'a transfer authorization is not a receive authorization',
    )
  })

  await t.test('EIP-3009 receiveWithAuthorization only by the payee', async (t) => {
    const message = await authorization({ to: carol.address, value: 3_000_000n })
    const signature = await signer(alice).signTypedData({
      domain,
      types: RECEIVE_TYPES,
      primaryType: 'ReceiveWithAuthorization',
      message,
    })
    t.equal(
      await revertName(simulate(SOLVER, 'receiveWithAuthorization', message, signature)),
      'CallerMustBePayee',
    )

    const before = await usdcOf(carol.address)
    // The payee submits with the packed-signature overload.
    await mined(
      await wallet(carol).writeContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'receiveWithAuthorization',
        args: [
          message.from,
          message.to,
          message.value,
          message.validAfter,
          message.validBefore,
          message.nonce,
          signature,
        ],
      }),
    )
    t.equal(await usdcOf(carol.address), before + 3_000_000n)
    t.equal(
      await revertName(simulate(carol, 'receiveWithAuthorization', message, signature)),
      'AuthorizationUsedOrCanceled',
    )
  })

  await t.test('cancelAuthorization burns an unused nonce', async (t) => {
    const message = await authorization()
    const transferSignature = await signer(alice).signTypedData({
      domain,
      types: TRANSFER_TYPES,
      primaryType: 'TransferWithAuthorization',
      message,
    })
    const cancelSignature = await signer(alice).signTypedData({
      domain,
      types: CANCEL_TYPES,
      primaryType: 'CancelAuthorization',
      message: { authorizer: alice.address, nonce: message.nonce },
    })
    const { v, r, s } = vrs(cancelSignature)
    const receipt = await mined(
      await wallet(SOLVER).writeContract({
        address: stablecoin,
        abi: pontisUsdAbi,
        functionName: 'cancelAuthorization',
        args: [alice.address, message.nonce, v, r, s],
      }),
    )
    const [event] = parseEventLogs({
      abi: pontisUsdAbi,
      logs: receipt.logs,
      eventName: 'AuthorizationCanceled',
    })
    t.same(event?.args, { authorizer: getAddress(alice.address), nonce: message.nonce })
    t.equal(await used(alice.address, message.nonce), true)
    t.equal(
      await revertName(simulate(SOLVER, 'transferWithAuthorization', message, transferSignature)),
      'AuthorizationUsedOrCanceled',
    )
  })
})
