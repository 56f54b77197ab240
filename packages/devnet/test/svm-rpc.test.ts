import { MEMO_PROGRAM_ID } from '@pontis/plugin-svm'
import {
  AccountLayout,
  createApproveCheckedInstruction,
  createAssociatedTokenAccountInstruction,
  createInitializeMint2Instruction,
  createMintToCheckedInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import {
  AddressLookupTableProgram,
  ComputeBudgetProgram,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  type ParsedAccountData,
  PublicKey,
  SendTransactionError,
  SystemProgram,
  sendAndConfirmTransaction,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'
import bs58 from 'bs58'
import { LiteSVM } from 'litesvm'
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import { releaseX87Stack } from '../src/svm/rpc/fpu.js'
import { createMethods } from '../src/svm/rpc/methods.js'
import { answerRequest } from '../src/svm/rpc/server.js'
import { MAX_BLOCKHASH_AGE, RPC_ERROR, SvmLedger, startSvmRpcServer } from '../src/svm/rpc.js'
import {
  awaitStatus,
  memoInstruction,
  postJson,
  type RawAnswer,
  rawWebSocket,
  rpc,
  sendAndAwait,
  signedLegacy,
  signedV0,
} from './fixtures/svm-rpc-client.js'

const server = await startSvmRpcServer({ finalizedDepth: 2 })
t.teardown(() => server.stop())
const url = server.rpcUrl
const connection = new Connection(url, { commitment: 'confirmed', wsEndpoint: server.wsUrl })
const payer = Keypair.generate()
await awaitStatus(connection, await connection.requestAirdrop(payer.publicKey, 100 * LAMPORTS_PER_SOL))

const latest = async (): Promise<string> => (await connection.getLatestBlockhash('processed')).blockhash
const base64 = (wire: Uint8Array): string => Buffer.from(wire).toString('base64')
const errorOf = (answer: RawAnswer) => {
  if (!answer.error) throw new Error(`expected an error, got ${JSON.stringify(answer)}`)
  return answer.error
}
const resultOf = <T>(answer: RawAnswer): T => {
  if (answer.error) throw new Error(`unexpected error ${JSON.stringify(answer.error)}`)
  return answer.result as T
}

t.test('cluster and slot methods answer in the documented shapes', async (t) => {
  server.advanceSlots(3)
  t.match(await connection.getVersion(), { 'solana-core': String, 'feature-set': Number })
  t.equal(await connection.getGenesisHash(), server.ledger.genesisHash)
  t.equal(resultOf(await rpc(url, 'getHealth')), 'ok')
  const health = await fetch(`${url}/health`)
  t.equal(await health.text(), 'ok')

  const slot = await connection.getSlot('processed')
  t.equal(slot, server.ledger.slot)
  t.equal(await connection.getSlot('confirmed'), slot, 'confirmedDepth 0: confirmed at once')
  t.equal(await connection.getSlot('finalized'), slot - 2, 'finalizedDepth 2')
  t.equal(await connection.getBlockHeight('processed'), slot)
  t.match(await connection.getEpochInfo('processed'), {
    absoluteSlot: slot,
    blockHeight: slot,
    epoch: 0,
    slotIndex: slot,
    slotsInEpoch: 432_000,
    transactionCount: Number,
  })
  t.match(await connection.getEpochSchedule(), { slotsPerEpoch: 432_000, warmup: false })

  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('processed')
  t.equal(lastValidBlockHeight, slot + MAX_BLOCKHASH_AGE)
  t.equal((await connection.isBlockhashValid(blockhash)).value, true)
  t.equal((await connection.isBlockhashValid('11111111111111111111111111111111')).value, false)
  const finalized = await connection.getLatestBlockhash('finalized')
  t.equal(finalized.lastValidBlockHeight, slot - 2 + MAX_BLOCKHASH_AGE, 'the finalized blockhash is older')

  t.equal(await connection.getMinimumBalanceForRentExemption(165), 2_039_280)
  t.equal(await connection.getMinimumBalanceForRentExemption(0), 890_880)
  const blockTime = await connection.getBlockTime(slot)
  t.ok(blockTime !== null && Math.abs(blockTime - Date.now() / 1000) < 60, 'block time is the wall clock')
  t.equal(errorOf(await rpc(url, 'getBlockTime', [slot + 1000])).code, RPC_ERROR.blockNotAvailable)
  const header = { transactionDetails: 'none', rewards: false } as const
  const block = await connection.getBlock(slot - 2, { ...header, commitment: 'finalized' })
  t.match(block, {
    blockhash: server.ledger.block(slot - 2)?.blockhash,
    previousBlockhash: server.ledger.block(slot - 3)?.blockhash,
    parentSlot: slot - 3,
    blockTime: Number,
  })
  t.equal((await connection.getBlock(slot, { ...header, commitment: 'confirmed' }))?.blockhash, blockhash)
  t.equal(
    errorOf(await rpc(url, 'getBlock', [slot, { commitment: 'finalized', transactionDetails: 'none' }])).code,
    RPC_ERROR.blockNotAvailable,
    'not finalized yet',
  )
  t.match(errorOf(await rpc(url, 'getBlock', [slot - 2])).message, /transactionDetails none/)

  const fees = await connection.getRecentPrioritizationFees()
  t.equal(fees.at(-1)?.slot, slot)
  t.ok(fees.every((entry) => entry.prioritizationFee === 0))

  const plain = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions: [
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: payer.publicKey, lamports: 1 }),
    ],
  }).compileToV0Message()
  t.equal(await connection.getFeeForMessage(plain, 'processed').then((fee) => fee.value), 5000)
  const prioritized = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions: [
      ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 }),
      memoInstruction('fee'),
    ],
  }).compileToV0Message()
  t.equal(
    (await connection.getFeeForMessage(prioritized, 'processed')).value,
    5000 + 200,
    'priority fee added',
  )
})

t.test('JSON-RPC framing: batches, notifications and error objects', async (t) => {
  const batch = await postJson(url, [
    { jsonrpc: '2.0', id: 1, method: 'getSlot', params: [{ commitment: 'processed' }] },
    { jsonrpc: '2.0', id: 'two', method: 'getHealth' },
    { jsonrpc: '2.0', id: 3, method: 'getNothing' },
    { jsonrpc: '2.0', method: 'getHealth' },
  ])
  t.equal(batch.status, 200)
  t.match(batch.answer, [
    { jsonrpc: '2.0', id: 1, result: server.ledger.slot },
    { jsonrpc: '2.0', id: 'two', result: 'ok' },
    { jsonrpc: '2.0', id: 3, error: { code: RPC_ERROR.methodNotFound, message: 'Method not found' } },
  ])
  t.equal((batch.answer as unknown[]).length, 3, 'the notification gets no answer')

  t.same(errorOf(await rpc(url, 'getNothing')), { code: -32601, message: 'Method not found' })
  const badKey = errorOf(await rpc(url, 'getBalance', ['not-a-key']))
  t.equal(badKey.code, RPC_ERROR.invalidParams)
  t.match(badKey.message, /address \(params\[0\]\) must be a base58 public key/)
  t.match(errorOf(await rpc(url, 'getBalance', [])).message, /must be a base58 public key, got nothing/)
  t.match(
    errorOf(await rpc(url, 'getAccountInfo', [payer.publicKey.toBase58(), { encoding: 'hex' }])).message,
    /encoding/,
  )
  t.match(errorOf(await rpc(url, 'getSlot', [{ commitment: 'soon' }])).message, /commitment must be one of/)
  t.match(errorOf(await rpc(url, 'getSignatureStatuses', [['nope']])).message, /signatures\[0\]/)
  t.match(errorOf(await rpc(url, 'getMultipleAccounts', ['x'])).message, /must be an array/)
  t.match(
    errorOf(await rpc(url, 'requestAirdrop', [payer.publicKey.toBase58(), -5])).message,
    /non-negative integer/,
  )

  t.same((await postJson(url, '{oops')).answer, {
    jsonrpc: '2.0',
    error: { code: RPC_ERROR.parseError, message: 'Parse error' },
    id: null,
  })
  t.match((await postJson(url, { id: 4, method: 'getSlot' })).answer, {
    error: { code: RPC_ERROR.invalidRequest },
  })
  t.match((await postJson(url, [])).answer, { error: { code: RPC_ERROR.invalidRequest } })
  t.match((await postJson(url, [7])).answer, [{ error: { code: RPC_ERROR.invalidRequest }, id: null }])
  t.match((await postJson(url, { jsonrpc: '2.0', id: 5, method: 'getSlot', params: {} })).answer, {
    error: { code: RPC_ERROR.invalidParams },
    id: 5,
  })
  const notification = await postJson(url, { jsonrpc: '2.0', method: 'getSlot' })
  t.equal(notification.status, 200)
  t.equal(notification.answer, undefined)
  t.equal((await fetch(url)).status, 405)

  t.match(errorOf(await rpc(url, 'sendTransaction', ['0OIl'])).message, /not valid base58/)
  t.match(
    errorOf(await rpc(url, 'sendTransaction', ['AAAA', { encoding: 'base64' }])).message,
    /failed to deserialize/,
  )
  const oversized = base64(new Uint8Array(1300))
  t.match(
    errorOf(await rpc(url, 'sendTransaction', [oversized, { encoding: 'base64' }])).message,
    /too large: 1300 bytes/,
  )
  const tampered = signedLegacy(payer, await latest(), [memoInstruction('tampered')])
  tampered.writeUInt8(tampered.readUInt8(tampered.length - 1) ^ 1, tampered.length - 1)
  t.same(errorOf(await rpc(url, 'sendTransaction', [base64(tampered), { encoding: 'base64' }])), {
    code: RPC_ERROR.transactionSignatureVerificationFailure,
    message: 'Transaction signature verification failure',
  })
  // Program id index 0 (the fee payer) can never execute: the sanitizer rejects it.
  const unsanitary = signedV0(payer, await latest(), [memoInstruction('x')])
  const message = VersionedTransaction.deserialize(unsanitary).message
  message.compiledInstructions[0]!.programIdIndex = 0
  const rebuilt = new VersionedTransaction(message)
  rebuilt.sign([payer])
  t.match(errorOf(await rpc(url, 'sendTransaction', [base64(rebuilt.serialize()), { encoding: 'base64' }])), {
    code: RPC_ERROR.invalidParams,
    message: 'invalid transaction: Transaction failed to sanitize accounts offsets correctly',
  })
})

t.test(
  'every method answers malformed parameters with an error object, never an internal error',
  async (t) => {
    const key = SystemProgram.programId.toBase58()
    const junk: unknown[][] = [
      [],
      [null],
      [-1],
      [1.5],
      ['x'],
      [{}],
      [[]],
      [[1, 2]],
      [key, 'bad'],
      [key, 5],
      [key, { encoding: 5, commitment: 'x' }],
      [key, { mint: 5 }],
      [key, { dataSlice: { offset: -1 } }],
      [key, { filters: [{ memcmp: { offset: 0, bytes: 5 } }] }],
      [key, { accounts: { addresses: 5 } }],
      [key, { limit: 'x', before: 'x' }],
      ['5'.repeat(88)],
      ['AAAA', { encoding: 'base64' }],
      [{ minContextSlot: 1e9 }],
      [99_999_999_999, 1e20],
    ]
    const names = Object.keys(createMethods(server.ledger, { advanceSlots: () => 0 }))
    t.ok(names.length >= 30)
    for (const method of names) {
      const { answer } = await postJson(
        url,
        junk.map((params, id) => ({ jsonrpc: '2.0', id, method, params })),
      )
      // An unexpected exception answers "Internal error: ..." (a refused airdrop is a -32603 too).
      const internal = (answer as RawAnswer[]).filter((entry) =>
        entry.error?.message.startsWith('Internal error'),
      )
      t.same(internal, [], `${method} never fails internally`)
    }
  },
)

t.test('a native transfer with a memo, confirmed over the WebSocket subscription', async (t) => {
  const recipient = Keypair.generate().publicKey
  const transaction = new Transaction().add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1_000_000 }),
    memoInstruction('hello'),
  )
  const signature = await sendAndConfirmTransaction(connection, transaction, [payer], {
    commitment: 'confirmed',
  })
  t.equal(await connection.getBalance(recipient), 1_000_000)

  const landed = await connection.getTransaction(signature, {
    commitment: 'confirmed',
    maxSupportedTransactionVersion: 0,
  })
  if (!landed?.meta) throw new Error('transaction not found')
  t.equal(landed.version, 'legacy')
  t.equal(landed.slot, server.ledger.transaction(signature)?.slot)
  t.equal(landed.blockTime, await connection.getBlockTime(landed.slot))
  const keys = landed.transaction.message.staticAccountKeys.map((key) => key.toBase58())
  t.same(keys, [
    payer.publicKey.toBase58(),
    recipient.toBase58(),
    SystemProgram.programId.toBase58(),
    MEMO_PROGRAM_ID.toBase58(),
  ])
  t.equal(landed.meta.err, null)
  t.equal(landed.meta.fee, 5000)
  t.equal(landed.meta.preBalances[0]! - landed.meta.postBalances[0]!, 1_000_000 + 5000)
  t.same([landed.meta.preBalances[1], landed.meta.postBalances[1]], [0, 1_000_000])
  t.ok(landed.meta.logMessages?.includes('Program log: Memo (len 5): "hello"'))
  t.ok((landed.meta.computeUnitsConsumed ?? 0) > 150)
  t.same(landed.meta.loadedAddresses, { writable: [], readonly: [] })
  t.same(landed.meta.innerInstructions, [])
  t.same([landed.meta.preTokenBalances, landed.meta.postTokenBalances], [[], []])

  const raw = resultOf<Record<string, unknown>>(
    await rpc(url, 'getTransaction', [signature, { commitment: 'confirmed' }]),
  )
  t.notOk('version' in raw, 'no version without maxSupportedTransactionVersion')
  t.match(raw, {
    meta: { status: { Ok: null }, rewards: [] },
    transaction: {
      message: { instructions: [{ programIdIndex: 2, accounts: [0, 1], stackHeight: null }, {}] },
    },
  })
  const encoded = resultOf<{ transaction: [string, string] }>(
    await rpc(url, 'getTransaction', [signature, { commitment: 'confirmed', encoding: 'base64' }]),
  )
  t.equal(encoded.transaction[1], 'base64')
  const decoded = VersionedTransaction.deserialize(Buffer.from(encoded.transaction[0], 'base64'))
  t.equal(bs58.encode(decoded.signatures[0]!), signature)
  t.same(Buffer.from(decoded.serialize()), Buffer.from(server.ledger.transaction(signature)!.wire))

  const [entry] = await connection.getSignaturesForAddress(recipient, {}, 'confirmed')
  t.match(entry, { signature, slot: landed.slot, err: null, memo: '[5] hello', blockTime: landed.blockTime })
})

t.test('SPL tokens: mint, token accounts created by CPI, transferChecked with a memo', async (t) => {
  const mint = Keypair.generate()
  const alice = Keypair.generate()
  const source = getAssociatedTokenAddressSync(mint.publicKey, payer.publicKey)
  const destination = getAssociatedTokenAddressSync(mint.publicKey, alice.publicKey)
  const rent = await connection.getMinimumBalanceForRentExemption(MINT_SIZE)
  await sendAndAwait(
    connection,
    signedLegacy(
      payer,
      await latest(),
      [
        SystemProgram.createAccount({
          fromPubkey: payer.publicKey,
          newAccountPubkey: mint.publicKey,
          lamports: rent,
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeMint2Instruction(mint.publicKey, 6, payer.publicKey, null),
      ],
      [mint],
    ),
  )
  const setup = await sendAndAwait(
    connection,
    signedLegacy(payer, await latest(), [
      createAssociatedTokenAccountInstruction(payer.publicKey, source, payer.publicKey, mint.publicKey),
      createAssociatedTokenAccountInstruction(payer.publicKey, destination, alice.publicKey, mint.publicKey),
      createMintToCheckedInstruction(mint.publicKey, source, payer.publicKey, 5_000_000n, 6),
    ]),
  )
  const setupTransaction = await connection.getTransaction(setup, { maxSupportedTransactionVersion: 0 })
  const setupKeys = setupTransaction?.transaction.message.staticAccountKeys.map((key) => key.toBase58()) ?? []
  const inner = setupTransaction?.meta?.innerInstructions ?? []
  t.same(
    inner.map((entry) => entry.index),
    [0, 1],
    'both associated-account creations made inner calls, the mint did not',
  )
  for (const entry of inner) {
    for (const instruction of entry.instructions) {
      t.ok(
        [SystemProgram.programId.toBase58(), TOKEN_PROGRAM_ID.toBase58()].includes(
          setupKeys[instruction.programIdIndex]!,
        ),
        'inner instructions index the transaction keys',
      )
      t.equal((instruction as { stackHeight?: number }).stackHeight, 2)
    }
  }
  const setupBalances = setupTransaction?.meta?.postTokenBalances ?? []
  t.match(setupBalances.find((balance) => balance.owner === payer.publicKey.toBase58())?.uiTokenAmount, {
    amount: '5000000',
  })
  t.match(setupBalances.find((balance) => balance.owner === alice.publicKey.toBase58())?.uiTokenAmount, {
    amount: '0',
  })
  t.equal(setupBalances.length, 2)
  t.same(setupTransaction?.meta?.preTokenBalances, [], 'the token accounts did not exist before')

  const transfer = await sendAndAwait(
    connection,
    signedLegacy(payer, await latest(), [
      createTransferCheckedInstruction(source, mint.publicKey, destination, payer.publicKey, 1_250_000n, 6),
      memoInstruction('pay 1.25'),
    ]),
  )
  const landed = await connection.getTransaction(transfer, { maxSupportedTransactionVersion: 0 })
  const keys = landed?.transaction.message.staticAccountKeys.map((key) => key.toBase58()) ?? []
  const postFor = (account: PublicKey) =>
    landed?.meta?.postTokenBalances?.find((balance) => keys[balance.accountIndex] === account.toBase58())
  const preFor = (account: PublicKey) =>
    landed?.meta?.preTokenBalances?.find((balance) => keys[balance.accountIndex] === account.toBase58())
  t.same(postFor(destination), {
    accountIndex: keys.indexOf(destination.toBase58()),
    mint: mint.publicKey.toBase58(),
    owner: alice.publicKey.toBase58(),
    programId: TOKEN_PROGRAM_ID.toBase58(),
    uiTokenAmount: { amount: '1250000', decimals: 6, uiAmount: 1.25, uiAmountString: '1.25' },
  })
  t.match(preFor(destination), { uiTokenAmount: { amount: '0', uiAmount: 0, uiAmountString: '0' } })
  t.match(preFor(source), { uiTokenAmount: { amount: '5000000', uiAmountString: '5' } })
  t.match(postFor(source), { uiTokenAmount: { amount: '3750000', uiAmountString: '3.75' } })
  t.ok(landed?.meta?.logMessages?.includes(`Program ${TOKEN_PROGRAM_ID.toBase58()} invoke [1]`))

  t.same((await connection.getTokenAccountBalance(destination)).value, {
    amount: '1250000',
    decimals: 6,
    uiAmount: 1.25,
    uiAmountString: '1.25',
  })
  t.match((await connection.getTokenSupply(mint.publicKey)).value, { amount: '5000000', uiAmountString: '5' })
  const byMint = await connection.getTokenAccountsByOwner(alice.publicKey, { mint: mint.publicKey })
  t.same(
    byMint.value.map((entry) => entry.pubkey.toBase58()),
    [destination.toBase58()],
  )
  t.equal(AccountLayout.decode(byMint.value[0]!.account.data).amount, 1_250_000n)
  const byProgram = await connection.getTokenAccountsByOwner(alice.publicKey, { programId: TOKEN_PROGRAM_ID })
  t.equal(byProgram.value.length, 1)
  const parsedOwned = await connection.getParsedTokenAccountsByOwner(payer.publicKey, {
    mint: mint.publicKey,
  })
  t.match(parsedOwned.value[0]?.account.data, {
    program: 'spl-token',
    space: 165,
    parsed: {
      type: 'account',
      info: {
        isNative: false,
        mint: mint.publicKey.toBase58(),
        owner: payer.publicKey.toBase58(),
        state: 'initialized',
        tokenAmount: { amount: '3750000', decimals: 6, uiAmount: 3.75, uiAmountString: '3.75' },
      },
    },
  })
  const parsedMint = (await connection.getParsedAccountInfo(mint.publicKey)).value?.data as ParsedAccountData
  t.same(parsedMint, {
    program: 'spl-token',
    space: 82,
    parsed: {
      type: 'mint',
      info: {
        decimals: 6,
        freezeAuthority: null,
        isInitialized: true,
        mintAuthority: payer.publicKey.toBase58(),
        supply: '5000000',
      },
    },
  })
  const parsedSystem = await connection.getParsedAccountInfo(payer.publicKey)
  t.ok(Buffer.isBuffer(parsedSystem.value?.data), 'non-token data falls back to base64')
  const [tokenAccount, missing] = await connection.getMultipleAccountsInfo([
    destination,
    Keypair.generate().publicKey,
  ])
  t.equal(tokenAccount?.owner.toBase58(), TOKEN_PROGRAM_ID.toBase58())
  t.equal(tokenAccount?.data.length, 165)
  t.equal(missing, null)
  const scanned = await connection.getProgramAccounts(TOKEN_PROGRAM_ID, {
    filters: [{ dataSize: 165 }, { memcmp: { offset: 32, bytes: alice.publicKey.toBase58() } }],
  })
  t.same(
    scanned.map((entry) => entry.pubkey.toBase58()),
    [destination.toBase58()],
  )

  t.match(
    errorOf(await rpc(url, 'getTokenAccountBalance', [payer.publicKey.toBase58()])).message,
    /not a Token account/,
  )
  const unknownMint = Keypair.generate().publicKey.toBase58()
  t.match(
    errorOf(await rpc(url, 'getTokenAccountsByOwner', [alice.publicKey.toBase58(), { mint: unknownMint }]))
      .message,
    /could not find mint/,
  )
  t.match(
    errorOf(
      await rpc(url, 'getTokenAccountsByOwner', [alice.publicKey.toBase58(), { programId: unknownMint }]),
    ).message,
    /unrecognized Token program id/,
  )
  const [destinationHistory] = await connection.getSignaturesForAddress(destination, {}, 'confirmed')
  t.match(destinationHistory, { signature: transfer, memo: '[8] pay 1.25' })

  // Binary encodings, data slices and the base58 size limit.
  const sliced = resultOf<{ value: { data: unknown; space: number } }>(
    await rpc(url, 'getAccountInfo', [
      mint.publicKey.toBase58(),
      { encoding: 'base64', dataSlice: { offset: 44, length: 1 } },
    ]),
  )
  t.same(sliced.value.data, [Buffer.from([6]).toString('base64'), 'base64'], 'the decimals byte')
  t.equal(sliced.value.space, 82)
  const legacyBinary = resultOf<{ value: { data: unknown } }>(
    await rpc(url, 'getAccountInfo', [mint.publicKey.toBase58()]),
  )
  t.equal(legacyBinary.value.data, bs58.encode((await connection.getAccountInfo(mint.publicKey))!.data))
  t.match(
    errorOf(await rpc(url, 'getAccountInfo', [destination.toBase58(), { encoding: 'base58' }])).message,
    /please use Base64 encoding/,
  )

  // A delegate shows up in jsonParsed data and in getTokenAccountsByDelegate.
  const delegate = Keypair.generate().publicKey
  await sendAndAwait(
    connection,
    signedLegacy(payer, await latest(), [
      createApproveCheckedInstruction(source, mint.publicKey, delegate, payer.publicKey, 500_000n, 6),
    ]),
  )
  const delegated = resultOf<{ value: { pubkey: string; account: { data: unknown } }[] }>(
    await rpc(url, 'getTokenAccountsByDelegate', [
      delegate.toBase58(),
      { programId: TOKEN_PROGRAM_ID.toBase58() },
      { encoding: 'jsonParsed' },
    ]),
  )
  t.match(delegated.value, [
    {
      pubkey: source.toBase58(),
      account: {
        data: {
          parsed: {
            info: { delegate: delegate.toBase58(), delegatedAmount: { amount: '500000', uiAmount: 0.5 } },
          },
        },
      },
    },
  ])
})

t.test('a v0 transaction through an address lookup table', async (t) => {
  const recipient = Keypair.generate().publicKey
  const [create, table] = AddressLookupTableProgram.createLookupTable({
    authority: payer.publicKey,
    payer: payer.publicKey,
    recentSlot: await connection.getSlot('finalized'),
  })
  const extend = AddressLookupTableProgram.extendLookupTable({
    payer: payer.publicKey,
    authority: payer.publicKey,
    lookupTable: table,
    addresses: [recipient, Keypair.generate().publicKey],
  })
  await sendAndAwait(connection, signedLegacy(payer, await latest(), [create, extend]))
  const lookup = (await connection.getAddressLookupTable(table)).value
  if (!lookup) throw new Error('lookup table missing')
  t.equal(lookup.state.addresses[0]?.toBase58(), recipient.toBase58())

  const wire = signedV0(
    payer,
    await latest(),
    [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 2_000_000 })],
    [lookup],
  )
  const signature = await sendAndAwait(connection, wire)
  t.same(errorOf(await rpc(url, 'getTransaction', [signature, { commitment: 'confirmed' }])), {
    code: RPC_ERROR.unsupportedTransactionVersion,
    message:
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
  })
  const landed = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 })
  if (!landed?.meta) throw new Error('transaction not found')
  t.equal(landed.version, 0)
  t.match(landed.transaction.message.addressTableLookups, [
    { accountKey: table, writableIndexes: [0], readonlyIndexes: [] },
  ])
  t.same(
    landed.meta.loadedAddresses?.writable.map((key) => key.toBase58()),
    [recipient.toBase58()],
  )
  const staticCount = landed.transaction.message.staticAccountKeys.length
  t.equal(landed.meta.postBalances.length, staticCount + 1, 'balances cover the loaded address too')
  t.equal(landed.meta.postBalances[staticCount], 2_000_000)
  t.equal(await connection.getBalance(recipient), 2_000_000)
  const [entry] = await connection.getSignaturesForAddress(recipient, {}, 'confirmed')
  t.equal(entry?.signature, signature, 'addresses from lookup tables are indexed too')
})

t.test('a failing transaction: a preflight error, then recorded with skipPreflight', async (t) => {
  const poor = Keypair.generate()
  await awaitStatus(connection, await connection.requestAirdrop(poor.publicKey, 10_000_000))
  const wire = signedLegacy(poor, await latest(), [
    SystemProgram.transfer({
      fromPubkey: poor.publicKey,
      toPubkey: payer.publicKey,
      lamports: LAMPORTS_PER_SOL,
    }),
  ])
  const preflight = errorOf(await rpc(url, 'sendTransaction', [base64(wire), { encoding: 'base64' }]))
  t.match(preflight, {
    code: RPC_ERROR.sendTransactionPreflightFailure,
    message: 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1',
    data: { err: { InstructionError: [0, { Custom: 1 }] }, accounts: null, unitsConsumed: Number },
  })
  t.ok(
    (preflight.data as { logs: string[] }).logs.some((line) =>
      line.startsWith('Transfer: insufficient lamports'),
    ),
  )
  const rejection = await connection.sendRawTransaction(wire).then(
    () => undefined,
    (error: unknown) => error,
  )
  t.ok(rejection instanceof SendTransactionError, 'web3.js raises SendTransactionError')
  t.match((rejection as SendTransactionError).logs, [/invoke \[1\]/, /insufficient lamports/, /failed/])
  t.equal(await connection.getBalance(poor.publicKey), 10_000_000, 'nothing landed')

  const signature = await connection.sendRawTransaction(wire, { skipPreflight: true })
  await awaitStatus(connection, signature)
  const { value } = await connection.getSignatureStatuses([signature])
  t.match(value[0], { err: { InstructionError: [0, { Custom: 1 }] }, confirmationStatus: 'confirmed' })
  t.match(resultOf<{ value: unknown[] }>(await rpc(url, 'getSignatureStatuses', [[signature]])).value[0], {
    status: { Err: { InstructionError: [0, { Custom: 1 }] } },
  })
  const landed = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 })
  t.same(landed?.meta?.err, { InstructionError: [0, { Custom: 1 }] })
  t.equal(landed?.meta?.fee, 5000)
  t.same(landed?.meta?.postBalances.slice(0, 2), [10_000_000 - 5000, landed?.meta?.preBalances[1]])
  t.equal(await connection.getBalance(poor.publicKey), 10_000_000 - 5000, 'the fee was charged')
  const [entry] = await connection.getSignaturesForAddress(poor.publicKey, {}, 'confirmed')
  t.match(entry, { signature, err: { InstructionError: [0, { Custom: 1 }] } })
})

t.test('a replayed signature is already processed', async (t) => {
  const wire = signedLegacy(payer, await latest(), [memoInstruction('once')])
  const signature = await sendAndAwait(connection, wire)
  const count = await connection.getTransactionCount('processed')
  t.match(errorOf(await rpc(url, 'sendTransaction', [base64(wire), { encoding: 'base64' }])), {
    code: RPC_ERROR.sendTransactionPreflightFailure,
    message: 'Transaction simulation failed: This transaction has already been processed',
    data: { err: 'AlreadyProcessed' },
  })
  t.equal(await connection.sendRawTransaction(wire, { skipPreflight: true }), signature)
  t.equal(await connection.getTransactionCount('processed'), count, 'the replay did not land')
  const simulated = resultOf<{ value: { err: unknown } }>(
    await rpc(url, 'simulateTransaction', [base64(wire), { encoding: 'base64' }]),
  )
  t.equal(simulated.value.err, 'AlreadyProcessed')
})

t.test('blockhashes stay valid for 150 slots, then the transaction is rejected', async (t) => {
  const target = Keypair.generate().publicKey
  const transfer = (lamports: number) =>
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: target, lamports })
  const old = await latest()
  const aging = signedLegacy(payer, old, [transfer(1_000_000)])
  const slot = resultOf<number>(await rpc(url, 'pontis_advanceSlots', [MAX_BLOCKHASH_AGE - 1]))
  t.equal(slot, server.ledger.slot)
  t.equal((await connection.isBlockhashValid(old)).value, true)
  await sendAndAwait(connection, aging)
  t.equal(await connection.getBalance(target), 1_000_000, 'a 149-slot-old blockhash is accepted')

  const expiring = await latest()
  const expired = signedLegacy(payer, expiring, [transfer(2_000_000)])
  server.advanceSlots(MAX_BLOCKHASH_AGE + 1)
  t.equal((await connection.isBlockhashValid(expiring)).value, false)
  t.match(errorOf(await rpc(url, 'sendTransaction', [base64(expired), { encoding: 'base64' }])), {
    code: RPC_ERROR.sendTransactionPreflightFailure,
    message: 'Transaction simulation failed: Blockhash not found',
    data: { err: 'BlockhashNotFound', logs: [] },
  })
  const dropped = await connection.sendRawTransaction(expired, { skipPreflight: true })
  t.same((await connection.getSignatureStatuses([dropped])).value, [null], 'dropped, as a leader would')
  t.equal(await connection.getBalance(target), 1_000_000)

  const simulated = resultOf<{ value: { err: unknown } }>(
    await rpc(url, 'simulateTransaction', [base64(expired), { encoding: 'base64' }]),
  )
  t.equal(simulated.value.err, 'BlockhashNotFound')
  const replaced = resultOf<{ value: { err: unknown; replacementBlockhash: unknown } }>(
    await rpc(url, 'simulateTransaction', [
      base64(expired),
      { encoding: 'base64', replaceRecentBlockhash: true },
    ]),
  )
  t.same(replaced.value.err, null)
  t.same(replaced.value.replacementBlockhash, {
    blockhash: server.ledger.latestBlockhash().blockhash,
    lastValidBlockHeight: server.ledger.slot + MAX_BLOCKHASH_AGE,
  })
  const staleMessage = VersionedTransaction.deserialize(expired).message
  t.equal(
    resultOf<{ value: unknown }>(await rpc(url, 'getFeeForMessage', [base64(staleMessage.serialize())]))
      .value,
    null,
  )
  t.match(errorOf(await rpc(url, 'pontis_advanceSlots', ['many'])).code, RPC_ERROR.invalidParams)
  t.match(
    errorOf(await rpc(url, 'pontis_advanceSlots', [1_000_000])).message,
    /slot count must be an integer/,
  )
})

t.test('commitment: confirmed at once, finalized two slots later', async (t) => {
  const target = Keypair.generate().publicKey
  const signature = await sendAndAwait(
    connection,
    signedLegacy(payer, await latest(), [
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: target, lamports: 1_000_000 }),
    ]),
  )
  const statusOf = async () => (await connection.getSignatureStatuses([signature])).value[0]
  t.match(await statusOf(), { confirmations: 0, confirmationStatus: 'confirmed', err: null })
  t.equal(await connection.getTransaction(signature, { commitment: 'finalized' }), null)
  t.ok(await connection.getTransaction(signature, { commitment: 'confirmed' }))
  t.same(await connection.getSignaturesForAddress(target, {}, 'finalized'), [])
  t.equal((await connection.getSignaturesForAddress(target, {}, 'confirmed')).length, 1)
  t.match(errorOf(await rpc(url, 'getTransaction', [signature, { commitment: 'processed' }])), {
    code: RPC_ERROR.invalidParams,
    message: 'Invalid params: Method does not support commitment below `confirmed`',
  })

  server.advanceSlots(1)
  t.match(await statusOf(), { confirmations: 1, confirmationStatus: 'confirmed' })
  server.advanceSlots(1)
  t.match(await statusOf(), { confirmations: null, confirmationStatus: 'finalized' })
  t.ok(await connection.getTransaction(signature, { commitment: 'finalized' }))
  t.match(await connection.getSignaturesForAddress(target, {}, 'finalized'), [
    { signature, confirmationStatus: 'finalized' },
  ])
  t.equal(await connection.getSlot('finalized'), (await connection.getSlot('processed')) - 2)

  // Without searchTransactionHistory only the status cache (300 slots) answers.
  server.advanceSlots(301)
  t.same((await connection.getSignatureStatuses([signature])).value, [null])
  t.match((await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value, [
    { confirmationStatus: 'finalized' },
  ])
})

t.test('commitment levels of a ledger with a confirmation depth', async (t) => {
  const ledger = new SvmLedger({ confirmedDepth: 1, finalizedDepth: 3 })
  const signature = ledger.requestAirdrop(Keypair.generate().publicKey, 1_000_000)
  const slot = ledger.transaction(signature)?.slot ?? -1
  t.equal(ledger.commitmentOf(slot), 'processed')
  t.equal(ledger.slotAt('confirmed'), slot - 1)
  ledger.advanceSlots(1)
  t.equal(ledger.commitmentOf(slot), 'confirmed')
  ledger.advanceSlots(1)
  t.equal(ledger.commitmentOf(slot), 'confirmed')
  ledger.advanceSlots(1)
  t.equal(ledger.commitmentOf(slot), 'finalized')
  t.equal(ledger.slotAt('finalized'), slot)
  t.throws(() => new SvmLedger({ confirmedDepth: 3, finalizedDepth: 1 }), /must not exceed/)
})

t.test('getSignaturesForAddress pages newest first with before, until and limit', async (t) => {
  const target = Keypair.generate().publicKey
  const sent: string[] = []
  for (let index = 0; index < 5; index++) {
    const wire = signedLegacy(payer, await latest(), [
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: target, lamports: 1_000_000 + index }),
    ])
    sent.push(await sendAndAwait(connection, wire))
  }
  const newestFirst = [...sent].reverse()
  const signaturesOf = async (options: Parameters<Connection['getSignaturesForAddress']>[1]) =>
    (await connection.getSignaturesForAddress(target, options, 'confirmed')).map((entry) => entry.signature)

  const all = await connection.getSignaturesForAddress(target, {}, 'confirmed')
  t.same(
    all.map((entry) => entry.signature),
    newestFirst,
  )
  t.ok(
    all.every((entry, index) => index === 0 || entry.slot < all[index - 1]!.slot),
    'slots strictly decrease',
  )
  t.ok(all.every((entry) => typeof entry.blockTime === 'number'))
  t.same(
    all.map((entry) => entry.confirmationStatus),
    ['confirmed', 'confirmed', 'finalized', 'finalized', 'finalized'],
    'finalized two slots after landing',
  )
  const first = await signaturesOf({ limit: 2 })
  t.same(first, newestFirst.slice(0, 2))
  const second = await signaturesOf({ limit: 2, before: first[1] })
  t.same(second, newestFirst.slice(2, 4))
  t.same(await signaturesOf({ limit: 2, before: second[1] }), newestFirst.slice(4))
  t.same(await signaturesOf({ until: sent[1] }), newestFirst.slice(0, 3))
  t.same(await signaturesOf({ before: sent[4], until: sent[1] }), newestFirst.slice(1, 3))
  t.same(await signaturesOf({ before: payerSignaturePlaceholder() }), [])
  t.match(
    errorOf(await rpc(url, 'getSignaturesForAddress', [target.toBase58(), { limit: 0 }])).message,
    /Invalid limit/,
  )
  t.match(
    errorOf(await rpc(url, 'getSignaturesForAddress', [target.toBase58(), { limit: 1001 }])).message,
    /max 1000/,
  )
})

/** A well-formed signature that never landed. */
function payerSignaturePlaceholder(): string {
  return '5'.repeat(87)
}

t.test('simulateTransaction: signature checks, accounts, inner instructions, errors', async (t) => {
  const target = Keypair.generate().publicKey
  const unsigned = new Transaction({ feePayer: payer.publicKey, recentBlockhash: await latest() }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: target, lamports: 3_000_000 }),
  )
  const unsignedWire = base64(unsigned.serialize({ requireAllSignatures: false, verifySignatures: false }))
  const simulated = resultOf<{ context: { slot: number }; value: Record<string, unknown> }>(
    await rpc(url, 'simulateTransaction', [
      unsignedWire,
      { encoding: 'base64', accounts: { addresses: [target.toBase58()], encoding: 'base64' } },
    ]),
  )
  t.match(simulated.value, {
    err: null,
    logs: [
      'Program 11111111111111111111111111111111 invoke [1]',
      'Program 11111111111111111111111111111111 success',
    ],
    unitsConsumed: 150,
    returnData: null,
    innerInstructions: null,
    replacementBlockhash: null,
    accounts: [{ lamports: 3_000_000, owner: SystemProgram.programId.toBase58(), data: ['', 'base64'] }],
  })
  t.equal(await connection.getBalance(target), 0, 'a simulation changes nothing')
  t.same(
    errorOf(await rpc(url, 'simulateTransaction', [unsignedWire, { encoding: 'base64', sigVerify: true }])),
    {
      code: RPC_ERROR.transactionSignatureVerificationFailure,
      message: 'Transaction signature verification failure',
    },
  )
  t.match(
    errorOf(
      await rpc(url, 'simulateTransaction', [
        unsignedWire,
        { encoding: 'base64', sigVerify: true, replaceRecentBlockhash: true },
      ]),
    ).message,
    /sigVerify may not be used with replaceRecentBlockhash/,
  )

  const mintless = getAssociatedTokenAddressSync(
    new PublicKey('So11111111111111111111111111111111111111112'),
    target,
  )
  const withInner = signedLegacy(payer, await latest(), [
    createAssociatedTokenAccountInstruction(
      payer.publicKey,
      mintless,
      target,
      new PublicKey('So11111111111111111111111111111111111111112'),
    ),
  ])
  const inner = resultOf<{ value: { innerInstructions: { index: number; instructions: unknown[] }[] } }>(
    await rpc(url, 'simulateTransaction', [
      base64(withInner),
      { encoding: 'base64', innerInstructions: true },
    ]),
  )
  t.equal(inner.value.innerInstructions[0]?.index, 0)
  t.ok((inner.value.innerInstructions[0]?.instructions.length ?? 0) > 0)

  const failing = signedLegacy(payer, await latest(), [
    SystemProgram.transfer({
      fromPubkey: payer.publicKey,
      toPubkey: target,
      lamports: 10_000 * LAMPORTS_PER_SOL,
    }),
  ])
  const viaWeb3 = await connection.simulateTransaction(VersionedTransaction.deserialize(failing), {
    sigVerify: true,
  })
  t.same(viaWeb3.value.err, { InstructionError: [0, { Custom: 1 }] })
  t.ok(viaWeb3.value.logs?.some((line) => line.includes('insufficient lamports')))
})

t.test('WebSocket subscriptions: slots and account changes', async (t) => {
  const until = (condition: () => boolean, what: string) => waitFor(what, condition)
  const slots: { slot: number; parent: number; root: number }[] = []
  const slotSubscription = connection.onSlotChange((info) => slots.push(info))
  const target = Keypair.generate().publicKey
  const balances: number[] = []
  const accountSubscription = connection.onAccountChange(target, (info) => balances.push(info.lamports))
  // The subscriptions are live once a slot notification arrives.
  await until(() => {
    server.advanceSlots(1)
    return slots.length > 0
  }, 'a slot notification')
  const last = slots.at(-1)!
  t.same(last, { slot: last.slot, parent: last.slot - 1, root: last.slot - 2 })

  await sendAndAwait(
    connection,
    signedLegacy(payer, await latest(), [
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: target, lamports: 4_000_000 }),
    ]),
  )
  await until(() => balances.length > 0, 'an account notification')
  t.same(balances, [4_000_000])
  await connection.removeSlotChangeListener(slotSubscription)
  await connection.removeAccountChangeListener(accountSubscription)
})

t.test('WebSocket framing: handshake, ping, fragments, close, unmasked frames', async (t) => {
  const socket = await rawWebSocket(server.wsUrl)
  t.match(socket.handshake, /^HTTP\/1\.1 101 Switching Protocols/)
  // The RFC 6455 example key and its accept value.
  t.match(socket.handshake, /Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=/)
  socket.send(0x9, Buffer.from('hi'))
  t.same(await socket.next(), { fin: true, opcode: 0xa, payload: Buffer.from('hi') }, 'ping answered by pong')
  const request = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'getHealth' }))
  socket.send(0x1, request.subarray(0, 10), { fin: false })
  socket.send(0x0, request.subarray(10))
  const answer = await socket.next()
  t.equal(answer.opcode, 0x1)
  t.same(JSON.parse(answer.payload.toString('utf8')), { jsonrpc: '2.0', result: 'ok', id: 7 })
  socket.send(0x1, Buffer.from('{oops'))
  t.match(JSON.parse((await socket.next()).payload.toString('utf8')), {
    error: { code: RPC_ERROR.parseError },
  })
  socket.send(0x8, Buffer.alloc(0))
  const close = await socket.next()
  t.same([close.opcode, close.payload.readUInt16BE(0)], [0x8, 1000])
  await socket.closed

  const careless = await rawWebSocket(server.wsUrl)
  careless.send(0x1, Buffer.from('{}'), { masked: false })
  const refusal = await careless.next()
  t.same(
    [refusal.opcode, refusal.payload.readUInt16BE(0)],
    [0x8, 1002],
    'unmasked client frames are a protocol error',
  )
  await careless.closed
})

t.test('an exception inside a method becomes an internal error', async (t) => {
  const lines: string[] = []
  const methods = {
    explode: () => {
      throw new Error('boom')
    },
  }
  t.same(
    answerRequest(methods, { jsonrpc: '2.0', id: 1, method: 'explode', params: [] }, (line) =>
      lines.push(line),
    ),
    {
      jsonrpc: '2.0',
      error: { code: RPC_ERROR.internalError, message: 'Internal error: boom' },
      id: 1,
    },
  )
  t.same(lines, ['internal error in explode: boom'])
  t.equal(
    answerRequest(methods, { jsonrpc: '2.0', method: 'explode' }, () => {}),
    undefined,
    'notifications stay silent',
  )
})

t.test('the x87 state LiteSVM leaves behind is repaired after every program run', async (t) => {
  // Through the server: the ledger releases the x87 slots itself.
  await sendAndAwait(connection, signedLegacy(payer, await latest(), [memoInstruction('x87')]))
  t.equal(releaseX87Stack(), 0, 'nothing left to repair after the ledger ran a program')

  // Bare LiteSVM: the JIT's MMX use leaves the x87 stack full, the first float `%` sees NaN.
  const svm = new LiteSVM()
  const signer = Keypair.generate()
  svm.airdrop(signer.publicKey, 1_000_000_000n)
  const memo = new Transaction({ feePayer: signer.publicKey, recentBlockhash: svm.latestBlockhash() }).add(
    memoInstruction('bare'),
  )
  memo.sign(signer)
  svm.sendTransaction(memo)
  t.equal(releaseX87Stack(), 1, 'one float remainder came out wrong before the repair')
  t.equal(releaseX87Stack(), 0)
})
