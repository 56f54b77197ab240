/**
 * `signStep` of the SVM plugin on the SVM devnet: another intent API's `svm-transaction` deposit
 * item (here one the plugin's own quoting serves, with the solver as depositor) sent from the
 * solver's account, as the rebalancer sends a move's deposit. The item's instructions are compiled
 * again with the solver as fee payer and a fresh blockhash, so an item whose blockhash expired or
 * whose fee payer was someone else still lands, paid by the solver; what could spend more of the
 * solver's funds than the move, or anything else of them, is refused before anything is signed.
 */

import type { DepositStepsRequest } from '@pontis/core/plugin'
import {
  SVM_NATIVE_CURRENCY_ID,
  SVM_ROUTE_TOKENS,
  SVM_SOLVER,
  SVM_STABLECOIN,
  SVM_USERS,
  SVM_VAULT_OWNER,
  svmAssociatedTokenAddress,
} from '@pontis/devnet'
import { depositStepsRequest } from '@pontis/plugin-testkit'
import {
  createApproveInstruction,
  createTransferCheckedInstruction,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import { ComputeBudgetProgram, Keypair, PublicKey, VersionedTransaction } from '@solana/web3.js'
import t from 'tap'
import { MAX_BLOCKHASH_AGE } from '../../../packages/devnet/src/svm/rpc.js'
import { instructionToJson } from '../src/transactions.js'
import {
  confirmed,
  DEVNET_CREDENTIALS,
  depositItem,
  randomId,
  SIGNATURE_FEE_LAMPORTS,
  type SvmStepItem,
  svmPluginTestbed,
} from './fixtures/svm-chain.js'

const devnet = await svmPluginTestbed(t)
const { connection, chain, lamports, tokenBalance, svm } = devnet

// The accounts and currencies of the devnet this file uses.
const [NATIVE, USDC, FEE] = [SVM_NATIVE_CURRENCY_ID, SVM_STABLECOIN.address, SIGNATURE_FEE_LAMPORTS]
const [SOLVER, VAULT, ALICE] = [SVM_SOLVER.address, SVM_VAULT_OWNER.address, SVM_USERS[0]!]

/** The deposit item the plugin's quoting serves for `depositor`. */
async function itemFor(
  request: Pick<DepositStepsRequest, 'depositor' | 'currencyId' | 'amount'> & Partial<DepositStepsRequest>,
): Promise<SvmStepItem> {
  return depositItem(
    await svm.quoting.buildDepositSteps(
      depositStepsRequest({
        requestId: randomId(),
        ...request,
      }),
    ),
  )
}

const asRecord = (item: SvmStepItem) => item as unknown as Readonly<Record<string, unknown>>

t.test(
  'a USDC deposit item is sent from the solver, paid by it, once its own blockhash expired',
  async (t) => {
    // Served for another fee payer, with a compute-unit limit.
    const item = await itemFor({
      depositor: SOLVER,
      currencyId: USDC,
      amount: 25_000_000n,
      options: { depositFeePayer: ALICE.address, includeComputeUnitLimit: true },
    })
    const served = VersionedTransaction.deserialize(Buffer.from(item.transaction, 'base64'))
    t.equal(served.message.staticAccountKeys[0]?.toBase58(), ALICE.address, 'served with Alice as fee payer')
    chain.advanceSlots(MAX_BLOCKHASH_AGE + 2)
    const { blockhash } = await connection.getLatestBlockhash('confirmed')
    t.not(blockhash, served.message.recentBlockhash, "the served transaction's blockhash is old")

    const [solverUsdc, vaultUsdc, solverSol, aliceSol] = await Promise.all([
      tokenBalance(SOLVER, USDC),
      tokenBalance(VAULT, USDC),
      lamports(SOLVER),
      lamports(ALICE.address),
    ])
    const signed = await svm.filling.signStep?.(
      asRecord(item),
      { currencyId: USDC, amount: 25_000_000n },
      DEVNET_CREDENTIALS,
    )
    if (!signed) throw new Error('the SVM plugin has no signStep')
    const sent = VersionedTransaction.deserialize(Buffer.from(signed.raw, 'base64'))
    t.equal(sent.message.staticAccountKeys[0]?.toBase58(), SOLVER, 'the solver pays the fee')
    t.equal(sent.message.header.numRequiredSignatures, 1, 'and signs alone')
    t.equal(sent.message.recentBlockhash, blockhash, 'with a fresh blockhash')
    t.equal(signed.amount, 25_000_000n, 'it spends the move')
    t.ok((signed.validThrough ?? 0n) > 0n, 'its expiry is stored, for a replacement once it passed')
    await svm.filling.broadcast(signed.raw)
    await confirmed(connection, signed.transactionId)
    t.equal(await tokenBalance(VAULT, USDC), vaultUsdc + 25_000_000n, 'the vault got the deposit')
    t.equal(await tokenBalance(SOLVER, USDC), solverUsdc - 25_000_000n, 'out of the solver')
    t.equal(await lamports(SOLVER), solverSol - FEE, 'the solver paid the one signature')
    t.equal(await lamports(ALICE.address), aliceSol, 'Alice paid nothing')
    const deposits = await svm.reading.readDeposits(signed.transactionId)
    t.match(
      deposits.facts,
      [{ currencyId: USDC, amount: 25_000_000n, depositor: SOLVER }],
      'read back as a deposit',
    )
  },
)

t.test('a SOL deposit item within the move is sent; the spend is the transfer', async (t) => {
  const item = await itemFor({ depositor: SOLVER, currencyId: NATIVE, amount: 40_000_000n })
  const vaultSol = await lamports(VAULT)
  const signed = await svm.filling.signStep?.(
    asRecord(item),
    { currencyId: NATIVE, amount: 50_000_000n },
    DEVNET_CREDENTIALS,
  )
  t.equal(signed?.amount, 40_000_000n)
  await svm.filling.broadcast(signed?.raw as string)
  await confirmed(connection, signed?.transactionId as string)
  t.equal(await lamports(VAULT), vaultSol + 40_000_000n)
})

t.test('items that could take more of the solver than the move are refused before signing', async (t) => {
  const usdcItem = await itemFor({ depositor: SOLVER, currencyId: USDC, amount: 10_000_000n })
  const spend = { currencyId: USDC, amount: 10_000_000n }
  const mint = new PublicKey(USDC)
  const solver = new PublicKey(SOLVER)
  const source = new PublicKey(svmAssociatedTokenAddress(SOLVER, USDC))
  const vaultAccount = new PublicKey(svmAssociatedTokenAddress(VAULT, USDC))
  const withInstructions = (...extra: ReturnType<typeof instructionToJson>[]) => ({
    ...usdcItem,
    instructions: [...usdcItem.instructions, ...extra],
  })
  const [bonk] = SVM_ROUTE_TOKENS
  const cases: Array<[string, Record<string, unknown>, { currencyId: string; amount: bigint }, RegExp]> = [
    [
      'more than the move',
      asRecord(usdcItem),
      { currencyId: USDC, amount: 9_999_999n },
      /sends 10000000, more than the move's 9999999/,
    ],
    [
      'a token in a move of SOL',
      asRecord(usdcItem),
      { currencyId: NATIVE, amount: 10_000_000n },
      /sends a token in a move of SOL/,
    ],
    ['another chain', { ...usdcItem, chainId: 1 }, spend, /it is for chain 1/],
    [
      'another format',
      { ...usdcItem, format: 'evm-transaction' },
      spend,
      /'evm-transaction' item, not 'svm-transaction'/,
    ],
    ['no instructions', { ...usdcItem, instructions: [] }, spend, /carries no `instructions`/],
    [
      'a malformed instruction',
      { ...usdcItem, instructions: [{ programId: 'x', keys: [], data: 'zz' }] },
      spend,
      /instruction 0 is not/,
    ],
    [
      "another depositor's deposit",
      asRecord(await itemFor({ depositor: ALICE.address, currencyId: USDC, amount: 10_000_000n })),
      spend,
      new RegExp(`needs the signature of ${ALICE.address}`),
    ],
    [
      'an approval besides the deposit',
      withInstructions(instructionToJson(createApproveInstruction(source, vaultAccount, solver, 1n))),
      { currencyId: USDC, amount: 20_000_000n },
      /token instruction of the solver's other than a transfer/,
    ],
    [
      'a second transfer above the move',
      withInstructions(
        instructionToJson(
          createTransferCheckedInstruction(source, mint, vaultAccount, solver, 1n, 6, [], TOKEN_PROGRAM_ID),
        ),
      ),
      spend,
      /sends 10000001, more than the move's 10000000/,
    ],
    [
      'a transfer of another token',
      withInstructions(
        instructionToJson(
          createTransferCheckedInstruction(
            new PublicKey(svmAssociatedTokenAddress(SOLVER, bonk!.address)),
            new PublicKey(bonk!.address),
            vaultAccount,
            solver,
            1n,
            bonk!.decimals,
            [],
            TOKEN_PROGRAM_ID,
          ),
        ),
      ),
      { currencyId: USDC, amount: 20_000_000n },
      /sends a token other than/,
    ],
    [
      'another program handed the solver account, even marked not signing',
      withInstructions({
        programId: Keypair.generate().publicKey.toBase58(),
        keys: [{ pubkey: SOLVER, isSigner: false, isWritable: true }],
        data: '',
      }),
      spend,
      /calls \S+ with the solver's signature/,
    ],
    [
      'a priority fee above the bound',
      withInstructions(
        instructionToJson(ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 })),
        instructionToJson(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 10_000_000 })),
      ),
      spend,
      /priority fee of 2000000 lamports is above 1000000/,
    ],
  ]
  const solverSol = await lamports(SOLVER)
  for (const [what, item, caseSpend, message] of cases)
    await t.rejects(
      svm.filling.signStep?.(item, caseSpend, DEVNET_CREDENTIALS) as Promise<unknown>,
      { code: 'INVALID_REQUEST', message },
      what,
    )
  t.equal(await lamports(SOLVER), solverSol, 'nothing was sent')
  // The bound admits a modest priority fee.
  const modest = await svm.filling.signStep?.(
    withInstructions(
      instructionToJson(ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 })),
      instructionToJson(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 })),
    ),
    spend,
    DEVNET_CREDENTIALS,
  )
  t.equal(modest?.amount, 10_000_000n, 'a priority fee of 200 lamports is taken')
})
