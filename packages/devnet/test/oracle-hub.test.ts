// The oracle produces these encodings; the contract must decode exactly them.
import {
  decodeHubAction,
  encodeHubAction,
  HUB_ACTION,
  EXECUTION_TYPES as HUB_EXECUTION_TYPES,
  type HubAction,
  hubAccountKey,
  hubAssetKey,
} from '@pontis/oracle'
import t from 'tap'
import {
  type Address,
  concat,
  getAddress,
  type Hex,
  hashDomain,
  hashTypedData,
  isAddressEqual,
  keccak256,
  numberToHex,
  padHex,
  parseEventLogs,
  recoverAddress,
  size,
  sliceHex,
  toHex,
  zeroAddress,
  zeroHash,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts'
import { type DevAccount, ORACLE_SIGNER, SOLVER, USERS } from '../src/accounts.js'
import { pontisOracleHubAbi } from '../src/artifacts.js'
import { type DevnetChain, deployOracleHub, HUB_ORACLE_ADDRESS } from '../src/devnet.js'
import {
  clientsFor,
  malleate,
  randomBytes32,
  revertDetails,
  SECP256K1_N,
  startTestDevnet,
} from './fixtures/helpers.js'

/** A signing key: a devnet account or a fresh one. */
interface Signer {
  address: Address
  privateKey: Hex
}

function freshSigner(): Signer {
  const privateKey = generatePrivateKey()
  return { address: privateKeyToAccount(privateKey).address, privateKey }
}

/** Orders signers by address as the contract demands (ascending uint160). */
function sortedBySigner<T extends { address: Address }>(signers: readonly T[]): T[] {
  return [...signers].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1))
}

/** Signatures of `digest` by `signers`, in the order given (viem's `sign` is low-s, v 27/28). */
function signDigest(digest: Hex, signers: readonly Signer[]): Promise<Hex[]> {
  return Promise.all(
    signers.map((signer) => sign({ hash: digest, privateKey: signer.privateKey, to: 'hex' })),
  )
}

/** Replaces the last byte (v) of a 65-byte signature. */
function withV(signature: Hex, v: number): Hex {
  return concat([sliceHex(signature, 0, 64), numberToHex(v, { size: 1 })])
}

t.test('oracle hub', async (t) => {
  const devnet = await startTestDevnet(t)
  const chain: DevnetChain = devnet.chains[0]!
  const { publicClient, wallet, mined } = clientsFor(chain)
  const [alice, bob, carol, dave] = USERS as [DevAccount, DevAccount, DevAccount, DevAccount]
  const hubDomain = (address: Address, name = 'PontisOracle', version = '1') => ({
    name,
    version,
    chainId: chain.chainId,
    verifyingContract: address,
  })
  const digestOf = (domain: ReturnType<typeof hubDomain>, idempotencyKey: Hex, actions: readonly Hex[]) =>
    hashTypedData({
      domain,
      types: HUB_EXECUTION_TYPES,
      primaryType: 'Execution',
      message: { idempotencyKey, actions },
    })
  const read = {
    executed: (hub: Address, key: Hex) =>
      publicClient.readContract({
        address: hub,
        abi: pontisOracleHubAbi,
        functionName: 'executed',
        args: [key],
      }),
    balanceOf: (account: Hex, asset: Hex, hub: Address = HUB_ORACLE_ADDRESS) =>
      publicClient.readContract({
        address: hub,
        abi: pontisOracleHubAbi,
        functionName: 'balanceOf',
        args: [account, asset],
      }),
    returnAccountOf: (account: Hex) =>
      publicClient.readContract({
        address: HUB_ORACLE_ADDRESS,
        abi: pontisOracleHubAbi,
        functionName: 'returnAccountOf',
        args: [account],
      }),
  }
  /** Sends `execute` from `sender` (anyone may) and returns the mined receipt. */
  const execute = async (
    hub: Address,
    idempotencyKey: Hex,
    actions: readonly Hex[],
    signatures: readonly Hex[],
    sender: DevAccount = SOLVER,
  ) =>
    mined(
      await wallet(sender).writeContract({
        address: hub,
        abi: pontisOracleHubAbi,
        functionName: 'execute',
        args: [idempotencyKey, actions, signatures],
      }),
    )
  const simulateExecute = (
    hub: Address,
    idempotencyKey: Hex,
    actions: readonly Hex[],
    signatures: readonly Hex[],
  ) =>
    revertDetails(
      publicClient.simulateContract({
        account: SOLVER.address,
        address: hub,
        abi: pontisOracleHubAbi,
        functionName: 'execute',
        args: [idempotencyKey, actions, signatures],
      }),
    )
  /** Signs with the devnet hub's only signer and executes there. */
  const executeOnDevnetHub = async (idempotencyKey: Hex, actions: readonly Hex[]) => {
    const signatures = await signDigest(digestOf(hubDomain(HUB_ORACLE_ADDRESS), idempotencyKey, actions), [
      ORACLE_SIGNER,
    ])
    return execute(HUB_ORACLE_ADDRESS, idempotencyKey, actions, signatures)
  }
  const simulateOnDevnetHub = async (idempotencyKey: Hex, actions: readonly Hex[]) => {
    const signatures = await signDigest(digestOf(hubDomain(HUB_ORACLE_ADDRESS), idempotencyKey, actions), [
      ORACLE_SIGNER,
    ])
    return simulateExecute(HUB_ORACLE_ADDRESS, idempotencyKey, actions, signatures)
  }

  const usdcOnA = hubAssetKey('local-a', '0x5FbDB2315678afecb367f032d93F642f64180aa3')
  const usdcOnB = hubAssetKey('local-b', '0x5FbDB2315678afecb367f032d93F642f64180aa3')
  const aliceKey = hubAccountKey('local-a', alice.address)
  const bobKey = hubAccountKey('local-a', bob.address)
  const escrowKey = hubAccountKey('hub', '0x00000000000000000000000000000000000000e5')
  const action = (partial: Partial<HubAction> & Pick<HubAction, 'kind'>): Hex =>
    encodeHubAction({ asset: usdcOnA, amount: 0n, ...partial })

  await t.test('the domain and the execution digest equal viem hashTypedData', async (t) => {
    const hub = { address: HUB_ORACLE_ADDRESS, abi: pontisOracleHubAbi } as const
    t.equal(
      await publicClient.readContract({ ...hub, functionName: 'DOMAIN_SEPARATOR' }),
      hashDomain({
        domain: { ...hubDomain(HUB_ORACLE_ADDRESS), chainId: BigInt(chain.chainId) },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      }),
    )
    t.equal(
      await publicClient.readContract({ ...hub, functionName: 'EXECUTION_TYPEHASH' }),
      keccak256(toHex('Execution(bytes32 idempotencyKey,bytes[] actions)')),
    )
    const key = randomBytes32()
    const cases: Hex[][] = [
      [],
      ['0x'],
      [action({ kind: HUB_ACTION.CREDIT, to: aliceKey, amount: 5n })],
      [
        action({ kind: HUB_ACTION.CREDIT, to: aliceKey, amount: 5n }),
        '0x01',
        toHex('bytes of any length, not only actions, hash as EIP-712 bytes'),
      ],
    ]
    for (const actions of cases) {
      t.equal(
        await publicClient.readContract({ ...hub, functionName: 'hashExecution', args: [key, actions] }),
        digestOf(hubDomain(HUB_ORACLE_ADDRESS), key, actions),
        `${actions.length} action(s)`,
      )
    }
    // Order matters: swapping two actions changes the digest.
    const [first, second] = cases[3]!
    t.not(
      await publicClient.readContract({
        ...hub,
        functionName: 'hashExecution',
        args: [key, [second!, first!]],
      }),
      digestOf(hubDomain(HUB_ORACLE_ADDRESS), key, [first!, second!]),
    )
  })

  await t.test('the TS keys and action encoding match what the contract computes', async (t) => {
    const hub = { address: HUB_ORACLE_ADDRESS, abi: pontisOracleHubAbi } as const
    const owners: Array<[string, Hex]> = [
      ['local-a', alice.address],
      ['solana', padHex('0x1234', { size: 32 })],
      ['bitcoin', toHex('bc1qexampleaddress')],
      ['', '0x'],
    ]
    for (const [chainId, owner] of owners) {
      t.equal(
        await publicClient.readContract({ ...hub, functionName: 'accountKey', args: [chainId, owner] }),
        hubAccountKey(chainId, owner),
        `accountKey(${JSON.stringify(chainId)}, ${owner})`,
      )
      t.equal(
        await publicClient.readContract({ ...hub, functionName: 'assetKey', args: [chainId, owner] }),
        hubAssetKey(chainId, owner),
        `assetKey(${JSON.stringify(chainId)}, ${owner})`,
      )
    }
    t.not(hubAccountKey('local-a', alice.address), hubAccountKey('local-b', alice.address))
    t.same(HUB_ACTION, { CREDIT: 0, TRANSFER: 1, LOCK: 2, RELEASE: 3, BURN: 4 })
    const transfer: HubAction = {
      kind: HUB_ACTION.TRANSFER,
      from: aliceKey,
      to: bobKey,
      asset: usdcOnA,
      amount: 123n,
    }
    const encoded = encodeHubAction(transfer)
    t.equal(size(encoded), 160, 'five ABI words')
    t.equal(sliceHex(encoded, 0, 32), padHex('0x01', { size: 32 }), 'the kind is the first word')
    t.same(decodeHubAction(encoded), transfer)
    const credit = encodeHubAction({ kind: HUB_ACTION.CREDIT, to: bobKey, asset: usdcOnA, amount: 1n })
    t.same(
      decodeHubAction(credit),
      { kind: HUB_ACTION.CREDIT, from: zeroHash, to: bobKey, asset: usdcOnA, amount: 1n },
      'an omitted key encodes as zero',
    )
    t.throws(
      () => decodeHubAction(encodeHubAction({ ...transfer, kind: 9 as HubAction['kind'] })),
      /unknown hub action kind 9/,
    )
  })

  await t.test('1-of-1 on the devnet hub: anyone submits, applied once, events emitted', async (t) => {
    const hub = { address: HUB_ORACLE_ADDRESS, abi: pontisOracleHubAbi } as const
    t.same(await publicClient.readContract({ ...hub, functionName: 'signers' }), [
      getAddress(ORACLE_SIGNER.address),
    ])
    t.equal(await publicClient.readContract({ ...hub, functionName: 'threshold' }), 1n)
    t.equal(
      await publicClient.readContract({ ...hub, functionName: 'isSigner', args: [ORACLE_SIGNER.address] }),
      true,
    )
    t.equal(
      await publicClient.readContract({ ...hub, functionName: 'isSigner', args: [alice.address] }),
      false,
    )

    const key = randomBytes32()
    const carolKey = hubAccountKey('local-a', carol.address)
    const actions = [action({ kind: HUB_ACTION.CREDIT, to: carolKey, amount: 250n })]
    const digest = digestOf(hubDomain(HUB_ORACLE_ADDRESS), key, actions)
    const signatures = await signDigest(digest, [ORACLE_SIGNER])
    t.equal(
      await publicClient.readContract({
        ...hub,
        functionName: 'verifySignatures',
        args: [digest, signatures],
      }),
      1n,
    )
    t.equal(await read.executed(HUB_ORACLE_ADDRESS, key), false)
    const receipt = await execute(HUB_ORACLE_ADDRESS, key, actions, signatures, dave)
    const events = parseEventLogs({ abi: pontisOracleHubAbi, logs: receipt.logs })
    t.same(
      events.map((event) => [event.eventName, event.args]),
      [
        ['BalanceChanged', { account: carolKey, asset: usdcOnA, balance: 250n }],
        ['Executed', { idempotencyKey: key, actionCount: 1n }],
      ],
    )
    t.equal(await read.executed(HUB_ORACLE_ADDRESS, key), true)
    t.equal(await read.balanceOf(carolKey, usdcOnA), 250n)

    t.same(await simulateExecute(HUB_ORACLE_ADDRESS, key, actions, signatures), {
      name: 'AlreadyExecuted',
      args: [key],
    })
    // A key is spent whatever the actions: a new batch under the same key is refused too.
    const other = [action({ kind: HUB_ACTION.CREDIT, to: carolKey, amount: 1n })]
    t.same(await simulateOnDevnetHub(key, other), { name: 'AlreadyExecuted', args: [key] })
    t.equal(await read.balanceOf(carolKey, usdcOnA), 250n)
  })

  await t.test('each action kind moves balances as specified', async (t) => {
    // CREDIT then TRANSFER in one execution: applied in order, so the transfer is funded.
    const first = await executeOnDevnetHub(randomBytes32(), [
      action({ kind: HUB_ACTION.CREDIT, to: aliceKey, amount: 100n }),
      action({ kind: HUB_ACTION.TRANSFER, from: aliceKey, to: bobKey, amount: 30n }),
      action({ kind: HUB_ACTION.CREDIT, to: aliceKey, asset: usdcOnB, amount: 7n }),
    ])
    t.same(
      parseEventLogs({ abi: pontisOracleHubAbi, logs: first.logs, eventName: 'BalanceChanged' }).map(
        (event) => event.args,
      ),
      [
        { account: aliceKey, asset: usdcOnA, balance: 100n },
        { account: aliceKey, asset: usdcOnA, balance: 70n },
        { account: bobKey, asset: usdcOnA, balance: 30n },
        { account: aliceKey, asset: usdcOnB, balance: 7n },
      ],
    )
    t.equal(await read.balanceOf(aliceKey, usdcOnA), 70n)
    t.equal(await read.balanceOf(bobKey, usdcOnA), 30n)
    t.equal(await read.balanceOf(aliceKey, usdcOnB), 7n, 'assets are separate balances')

    // LOCK: a transfer that records where RELEASE returns the funds.
    t.equal(await read.returnAccountOf(escrowKey), zeroHash)
    await executeOnDevnetHub(randomBytes32(), [
      action({ kind: HUB_ACTION.LOCK, from: bobKey, to: escrowKey, amount: 10n }),
    ])
    t.equal(await read.balanceOf(bobKey, usdcOnA), 20n)
    t.equal(await read.balanceOf(escrowKey, usdcOnA), 10n)
    t.equal(await read.returnAccountOf(escrowKey), bobKey)

    // RELEASE: from the locked account back to its return account; `to` is not used.
    const release = await executeOnDevnetHub(randomBytes32(), [
      action({ kind: HUB_ACTION.RELEASE, from: escrowKey, to: aliceKey, amount: 4n }),
    ])
    t.same(
      parseEventLogs({ abi: pontisOracleHubAbi, logs: release.logs, eventName: 'BalanceChanged' }).map(
        (event) => event.args,
      ),
      [
        { account: escrowKey, asset: usdcOnA, balance: 6n },
        { account: bobKey, asset: usdcOnA, balance: 24n },
      ],
    )
    t.equal(await read.balanceOf(aliceKey, usdcOnA), 70n, 'the `to` of a RELEASE is ignored')

    // BURN: only a debit.
    const burn = await executeOnDevnetHub(randomBytes32(), [
      action({ kind: HUB_ACTION.BURN, from: aliceKey, to: bobKey, amount: 20n }),
    ])
    t.same(
      parseEventLogs({ abi: pontisOracleHubAbi, logs: burn.logs, eventName: 'BalanceChanged' }).map(
        (event) => event.args,
      ),
      [{ account: aliceKey, asset: usdcOnA, balance: 50n }],
    )
    t.equal(await read.balanceOf(bobKey, usdcOnA), 24n)
  })

  await t.test(
    'ledger reverts: insufficient balance, no return account, unknown or malformed action',
    async (t) => {
      const poorKey = hubAccountKey('local-a', dave.address)
      const before = await read.balanceOf(aliceKey, usdcOnA)
      const key = randomBytes32()
      // The first action succeeds, the second overdraws: the whole execution reverts.
      t.same(
        await simulateOnDevnetHub(key, [
          action({ kind: HUB_ACTION.CREDIT, to: poorKey, amount: 5n }),
          action({ kind: HUB_ACTION.TRANSFER, from: poorKey, to: aliceKey, amount: 6n }),
        ]),
        { name: 'InsufficientBalance', args: [poorKey, usdcOnA, 5n, 6n] },
      )
      for (const kind of [HUB_ACTION.TRANSFER, HUB_ACTION.LOCK, HUB_ACTION.BURN]) {
        t.same(
          await simulateOnDevnetHub(key, [action({ kind, from: poorKey, to: aliceKey, amount: 1n })]),
          { name: 'InsufficientBalance', args: [poorKey, usdcOnA, 0n, 1n] },
          `kind ${kind} debits`,
        )
      }
      t.same(
        await simulateOnDevnetHub(key, [action({ kind: HUB_ACTION.RELEASE, from: aliceKey, amount: 1n })]),
        { name: 'NoReturnAccount', args: [aliceKey] },
      )
      t.same(
        await simulateOnDevnetHub(key, [action({ kind: HUB_ACTION.RELEASE, from: escrowKey, amount: 7n })]),
        { name: 'InsufficientBalance', args: [escrowKey, usdcOnA, 6n, 7n] },
        'a RELEASE cannot exceed the locked balance',
      )
      t.same(
        await simulateOnDevnetHub(key, [
          action({ kind: HUB_ACTION.CREDIT, to: poorKey, amount: 1n }),
          encodeHubAction({
            kind: 5 as HubAction['kind'],
            from: zeroHash,
            to: poorKey,
            asset: usdcOnA,
            amount: 1n,
          }),
        ]),
        { name: 'UnknownAction', args: [1n, 5] },
      )
      const credit = action({ kind: HUB_ACTION.CREDIT, to: poorKey, amount: 1n })
      t.same(await simulateOnDevnetHub(key, [sliceHex(credit, 0, 128)]), {
        name: 'MalformedAction',
        args: [0n],
      })
      t.same(await simulateOnDevnetHub(key, [concat([credit, '0x00'])]), {
        name: 'MalformedAction',
        args: [0n],
      })
      t.same(
        await simulateOnDevnetHub(key, [concat([padHex('0x0100', { size: 32 }), sliceHex(credit, 32)])]),
        { name: 'MalformedAction', args: [0n] },
        'a kind word above 255',
      )
      t.equal(
        await read.executed(HUB_ORACLE_ADDRESS, key),
        false,
        'a reverted execution leaves the key unused',
      )
      t.equal(await read.balanceOf(poorKey, usdcOnA), 0n)
      t.equal(await read.balanceOf(aliceKey, usdcOnA), before)
    },
  )

  await t.test('2-of-3 hub: sorted signatures execute; each malformed set is refused by index', async (t) => {
    const signers = sortedBySigner([freshSigner(), freshSigner(), freshSigner()])
    const [low, middle, high] = signers as [Signer, Signer, Signer]
    const hub = await deployOracleHub({
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      deployerKey: carol.privateKey,
      name: 'PontisOracle2of3',
      version: '7',
      signers: [middle.address, high.address, low.address],
      threshold: 2,
    })
    t.not(hub, HUB_ORACLE_ADDRESS)
    const contract = { address: hub, abi: pontisOracleHubAbi } as const
    t.same(await publicClient.readContract({ ...contract, functionName: 'signers' }), [
      middle.address,
      high.address,
      low.address,
    ])
    t.equal(await publicClient.readContract({ ...contract, functionName: 'threshold' }), 2n)
    for (const signer of signers) {
      t.ok(await publicClient.readContract({ ...contract, functionName: 'isSigner', args: [signer.address] }))
    }
    t.notOk(
      await publicClient.readContract({
        ...contract,
        functionName: 'isSigner',
        args: [ORACLE_SIGNER.address],
      }),
    )
    const domain = hubDomain(hub, 'PontisOracle2of3', '7')
    t.same((await publicClient.getEip712Domain({ address: hub })).domain, { ...domain, salt: zeroHash })

    const account = hubAccountKey('local-b', bob.address)
    const key = randomBytes32()
    const actions = [action({ kind: HUB_ACTION.CREDIT, to: account, amount: 42n })]
    const digest = digestOf(domain, key, actions)
    const [sigLow, sigMiddle, sigHigh] = (await signDigest(digest, [low, middle, high])) as [Hex, Hex, Hex]
    const verify = (signatures: readonly Hex[], on: Hex = digest) =>
      publicClient.readContract({ ...contract, functionName: 'verifySignatures', args: [on, signatures] })
    t.equal(await verify([sigLow, sigHigh]), 2n)
    t.equal(await verify([sigLow, sigMiddle, sigHigh]), 3n)

    const refused = async (
      signatures: readonly Hex[],
      expected: { name: string; args: readonly unknown[] },
    ) => {
      t.same(await revertDetails(verify(signatures)), expected, `verifySignatures: ${expected.name}`)
      t.same(await simulateExecute(hub, key, actions, signatures), expected, `execute: ${expected.name}`)
    }
    await refused([sigHigh, sigLow], { name: 'SignersNotSorted', args: [1n] })
    await refused([sigLow, sigHigh, sigMiddle], { name: 'SignersNotSorted', args: [2n] })
    await refused([sigLow, sigLow], { name: 'SignersNotSorted', args: [1n] })
    const [outsider] = await signDigest(digest, [ORACLE_SIGNER])
    await refused([sigLow, outsider!], {
      name: 'UnknownSigner',
      args: [1n, getAddress(ORACLE_SIGNER.address)],
    })

    // The malleable twin recovers to the same signer, so only the low-s rule rejects it.
    const highS = malleate(sigMiddle)
    t.ok(isAddressEqual(await recoverAddress({ hash: digest, signature: highS }), middle.address))
    t.ok(BigInt(sliceHex(highS, 32, 64)) > SECP256K1_N / 2n)
    await refused([sigLow, highS], { name: 'HighS', args: [1n] })

    for (const v of [0, 1, 26, 29])
      await refused([sigLow, withV(sigMiddle, v)], { name: 'InvalidSignatureV', args: [1n] })
    await refused([sliceHex(sigLow, 0, 64), sigMiddle], { name: 'InvalidSignatureLength', args: [0n] })
    await refused([sigLow, concat([sigMiddle, '0x00'])], { name: 'InvalidSignatureLength', args: [1n] })
    // r = 0 is not a curve point: ecrecover returns the zero address.
    const unrecoverable = concat([zeroHash, padHex('0x01', { size: 32 }), '0x1b'])
    await refused([sigLow, unrecoverable], { name: 'InvalidSignature', args: [1n] })
    await refused([sigLow], { name: 'BelowThreshold', args: [1n, 2n] })
    await refused([], { name: 'BelowThreshold', args: [0n, 2n] })

    // Signatures over other data recover to some other address.
    const tamperedActions = [action({ kind: HUB_ACTION.CREDIT, to: account, amount: 43n })]
    for (const [label, tamperedKey, tampered] of [
      ['tampered action', key, tamperedActions],
      ['tampered idempotency key', randomBytes32(), actions],
    ] as const) {
      const result = await simulateExecute(hub, tamperedKey, tampered, [sigLow, sigMiddle])
      t.equal(result.name, 'UnknownSigner', label)
      t.equal(result.args[0], 0n, `${label}: the first signature is named`)
      const recovered = result.args[1] as Address
      t.notOk(
        signers.some((signer) => isAddressEqual(signer.address, recovered)),
        `${label}: recovers elsewhere`,
      )
      t.not(recovered, zeroAddress)
    }
    // The domain binds the contract: the devnet hub does not accept this hub's signatures.
    const elsewhere = await simulateExecute(HUB_ORACLE_ADDRESS, key, actions, [sigLow, sigMiddle])
    t.equal(elsewhere.name, 'UnknownSigner')

    const receipt = await execute(hub, key, actions, [sigMiddle, sigHigh], alice)
    const [executed] = parseEventLogs({ abi: pontisOracleHubAbi, logs: receipt.logs, eventName: 'Executed' })
    t.same(executed?.args, { idempotencyKey: key, actionCount: 1n })
    t.equal(await read.balanceOf(account, usdcOnA, hub), 42n)
    t.equal(await read.balanceOf(account, usdcOnA), 0n, 'the devnet hub has its own ledger')
    t.equal(await read.executed(hub, key), true)
    t.same(await simulateExecute(hub, key, actions, [sigLow, sigMiddle, sigHigh]), {
      name: 'AlreadyExecuted',
      args: [key],
    })
  })

  await t.test('deployOracleHub reports constructor rejections by name', async (t) => {
    const [one, two] = [freshSigner(), freshSigner()]
    const deploy = (signers: readonly Address[], threshold: number) =>
      deployOracleHub({
        rpcUrl: chain.rpcUrl,
        chainId: chain.chainId,
        deployerKey: dave.privateKey,
        signers,
        threshold,
      })
    await t.rejects(deploy([one.address, zeroAddress], 1), {
      message: 'PontisOracleHub constructor reverted: ZeroSigner(1)',
    })
    await t.rejects(deploy([one.address, two.address, one.address], 1), {
      message: `PontisOracleHub constructor reverted: DuplicateSigner(2, ${one.address})`,
    })
    await t.rejects(deploy([one.address, two.address], 0), {
      message: 'PontisOracleHub constructor reverted: InvalidThreshold(0, 2)',
    })
    await t.rejects(deploy([one.address, two.address], 3), {
      message: 'PontisOracleHub constructor reverted: InvalidThreshold(3, 2)',
    })
    await t.rejects(deploy([], 1), {
      message: 'PontisOracleHub constructor reverted: InvalidThreshold(1, 0)',
    })
    const address = await deploy([two.address], 1)
    t.same((await publicClient.getEip712Domain({ address })).domain, {
      ...hubDomain(address),
      salt: zeroHash,
    })
  })
})
