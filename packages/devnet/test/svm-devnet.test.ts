import { AccountLayout, getMint, TOKEN_PROGRAM_ID } from '@solana/spl-token'
import { Connection, Keypair, PublicKey, SystemProgram } from '@solana/web3.js'
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import {
  SVM_FAUCET,
  SVM_FUNDING,
  SVM_MINT_AUTHORITY,
  SVM_ROUTE_AUTHORITY,
  SVM_ROUTE_TOKENS,
  SVM_SOLVER,
  SVM_STABLECOIN,
  SVM_USERS,
  SVM_VAULT_OWNER,
  SVM_WRAPPED_NATIVE_MINT,
} from '../src/svm/accounts.js'
import { startSvmDevnet, svmAssociatedTokenAddress, svmDevnetEnvironment } from '../src/svm/devnet.js'
import { awaitStatus, rpc, signedLegacy } from './fixtures/svm-rpc-client.js'

const logs: string[] = []
const devnet = await startSvmDevnet({ log: (line) => logs.push(line) })
t.teardown(() => devnet.stop())
const connection = new Connection(devnet.rpcUrl, 'finalized')

/** Token amount (base units) held by `owner`'s associated account for `mint`, via the RPC. */
async function tokenBalance(owner: string, mint: string): Promise<bigint> {
  const { value } = await connection.getTokenAccountBalance(
    new PublicKey(svmAssociatedTokenAddress(owner, mint)),
  )
  return BigInt(value.amount)
}

t.test('every cast member holds exactly the SOL it was funded with', async (t) => {
  const expected: [string, bigint][] = [
    [SVM_SOLVER.address, SVM_FUNDING.solverLamports],
    ...SVM_USERS.map((user): [string, bigint] => [user.address, SVM_FUNDING.userLamports]),
    [SVM_VAULT_OWNER.address, SVM_FUNDING.vaultLamports],
    [SVM_ROUTE_AUTHORITY.address, SVM_FUNDING.routeAuthorityLamports],
    [SVM_MINT_AUTHORITY.address, SVM_FUNDING.mintAuthorityLamports],
  ]
  for (const [address, lamports] of expected) {
    t.equal(BigInt(await connection.getBalance(new PublicKey(address))), lamports, address)
  }
})

t.test('the mints exist at their keypair addresses with the declared decimals', async (t) => {
  for (const declared of [SVM_STABLECOIN, ...SVM_ROUTE_TOKENS]) {
    const mint = await getMint(connection, new PublicKey(declared.address), 'finalized', TOKEN_PROGRAM_ID)
    t.equal(mint.decimals, declared.decimals, `${declared.symbol} decimals`)
    t.equal(mint.mintAuthority?.toBase58(), SVM_MINT_AUTHORITY.address, `${declared.symbol} mint authority`)
    t.equal(mint.freezeAuthority, null)
    t.ok(mint.isInitialized)
  }
  const usdc = await getMint(connection, new PublicKey(SVM_STABLECOIN.address))
  t.equal(usdc.supply, SVM_FUNDING.solverStablecoin + BigInt(SVM_USERS.length) * SVM_FUNDING.userStablecoin)
})

t.test('token balances are as declared', async (t) => {
  t.equal(await tokenBalance(SVM_SOLVER.address, SVM_STABLECOIN.address), SVM_FUNDING.solverStablecoin)
  for (const user of SVM_USERS) {
    t.equal(
      await tokenBalance(user.address, SVM_STABLECOIN.address),
      SVM_FUNDING.userStablecoin,
      `${user.name} USDC`,
    )
    for (const token of SVM_ROUTE_TOKENS) {
      t.equal(
        await tokenBalance(user.address, token.address),
        SVM_FUNDING.userRouteTokenWhole * 10n ** BigInt(token.decimals),
        `${user.name} ${token.symbol}`,
      )
    }
  }
  t.equal(await tokenBalance(SVM_SOLVER.address, SVM_WRAPPED_NATIVE_MINT), SVM_FUNDING.solverWrappedNative)
  const wrapped = await connection.getParsedAccountInfo(
    new PublicKey(svmAssociatedTokenAddress(SVM_SOLVER.address, SVM_WRAPPED_NATIVE_MINT)),
  )
  t.match(wrapped.value?.data, {
    program: 'spl-token',
    parsed: { info: { isNative: true, owner: SVM_SOLVER.address, rentExemptReserve: { amount: '2039280' } } },
  })
  t.equal(
    (
      await connection.getTokenAccountsByOwner(new PublicKey(SVM_SOLVER.address), {
        programId: TOKEN_PROGRAM_ID,
      })
    ).value.length,
    2,
    'the solver holds USDC and wSOL only',
  )
})

t.test("the vault owner's token accounts exist and are empty", async (t) => {
  for (const mint of [SVM_STABLECOIN.address, SVM_WRAPPED_NATIVE_MINT]) {
    const account = await connection.getAccountInfo(
      new PublicKey(svmAssociatedTokenAddress(SVM_VAULT_OWNER.address, mint)),
    )
    if (!account) throw new Error(`vault account for ${mint} missing`)
    const decoded = AccountLayout.decode(account.data)
    t.equal(decoded.owner.toBase58(), SVM_VAULT_OWNER.address)
    t.equal(decoded.mint.toBase58(), mint)
    t.equal(decoded.amount, 0n)
  }
})

t.test('funding ran as finalized transactions, one log line per step', async (t) => {
  const history = await connection.getSignaturesForAddress(new PublicKey(SVM_SOLVER.address))
  t.ok(history.length >= 3, 'airdrop, USDC and wSOL transactions touch the solver')
  t.ok(history.every((entry) => entry.err === null && entry.confirmationStatus === 'finalized'))
  const faucetHistory = await connection.getSignaturesForAddress(new PublicKey(SVM_FAUCET.address))
  t.equal(
    faucetHistory.length,
    devnet.ledger.transactionCount,
    'the faucet paid for every funding transaction',
  )
  t.equal(logs.length, 8)
  t.match(logs, [
    /listening on http:\/\/127\.0\.0\.1:\d+/,
    /^airdropped SOL: solver 1000 SOL, user-0 100 SOL/,
    /^created mints: USDC \w+ \(6 decimals\), PBONK \w+ \(5 decimals\)/,
    /^minted USDC: solver 1000000, user-0 10000/,
    /^wrapped SOL for the solver: 1000 SOL/,
    /^minted route tokens/,
    /^created the vault owner's USDC and wSOL token accounts/,
    /^SVM devnet funded; funding finalized at slot \d+/,
  ])
  t.same(svmDevnetEnvironment(devnet), { LOCAL_SVM_RPC_URL: devnet.rpcUrl })
})

t.test('a second devnet in the same process is independent', async (t) => {
  const second = await startSvmDevnet({ finalizedDepth: 0 })
  t.teardown(() => second.stop())
  t.not(second.port, devnet.port)
  const user = SVM_USERS[0]!
  const recipient = Keypair.generate().publicKey
  const { blockhash } = await new Connection(second.rpcUrl).getLatestBlockhash('processed')
  const wire = signedLegacy(user.keypair, blockhash, [
    SystemProgram.transfer({ fromPubkey: user.keypair.publicKey, toPubkey: recipient, lamports: 5_000_000 }),
  ])
  const secondConnection = new Connection(second.rpcUrl, 'finalized')
  const signature = await secondConnection.sendRawTransaction(wire)
  await awaitStatus(secondConnection, signature)
  t.match((await secondConnection.getSignatureStatuses([signature])).value[0], {
    confirmationStatus: 'finalized',
  })
  t.equal(await secondConnection.getBalance(recipient), 5_000_000)
  t.equal(await connection.getBalance(recipient), 0, 'the first devnet did not see it')
  t.equal(BigInt(await connection.getBalance(user.keypair.publicKey)), SVM_FUNDING.userLamports)
})

t.test('slots advance on demand and on a timer', async (t) => {
  const before = devnet.ledger.slot
  t.equal(devnet.advanceSlots(3), before + 3)
  t.equal((await rpc(devnet.rpcUrl, 'pontis_advanceSlots', [2])).result, before + 5)

  const ticking = await startSvmDevnet({ slotIntervalMs: 10 })
  t.teardown(() => ticking.stop())
  const start = ticking.ledger.slot
  await waitFor('three slots from the timer', () => ticking.ledger.slot, {
    until: (slot) => slot > start + 2,
  })
  t.ok(ticking.ledger.slot > start + 2, `slots advanced on their own (${start} -> ${ticking.ledger.slot})`)
  await ticking.stop()
  const stopped = ticking.ledger.slot
  // Longer than the interval: a slot timer still armed would be due before this one, so it would
  // have fired first. The timers' order decides, not the machine's speed.
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(ticking.ledger.slot, stopped, 'stop() stops the timer')
  await ticking.stop()
  t.pass('stop() is idempotent')
})
