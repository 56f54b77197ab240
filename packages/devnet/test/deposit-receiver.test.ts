import t from 'tap'
import { BaseError, concat, getAddress, parseEther, parseEventLogs, toFunctionSelector } from 'viem'
import { type DevAccount, USERS } from '../src/accounts.js'
import {
  pontisDepositoryAbi,
  pontisDepositReceiverAbi,
  pontisDepositReceiverBytecode,
} from '../src/artifacts.js'
import { DEPOSIT_RECEIVER_ADDRESS } from '../src/devnet.js'
import { clientsFor, randomBytes32, startTestDevnet } from './fixtures/helpers.js'

t.test(
  'deposit receiver: a plain transfer carrying the request id becomes a depository deposit',
  async (t) => {
    const devnet = await startTestDevnet(t)
    const chain = devnet.chains[0]!
    const { publicClient, wallet, mined } = clientsFor(chain)
    const { depository, depositReceiver } = chain.contracts
    t.equal(depositReceiver, DEPOSIT_RECEIVER_ADDRESS)
    const [alice] = USERS as [DevAccount]

    /** The reason a transfer to the receiver reverts with, from a simulation (what a wallet sees first). */
    const simulatedRevert = async (data: `0x${string}`, value: bigint): Promise<string> => {
      try {
        await publicClient.call({ account: alice.address, to: depositReceiver, data, value })
      } catch (error) {
        const raw = error instanceof BaseError ? (error.walk() as { data?: unknown }).data : undefined
        return typeof raw === 'string' ? raw.slice(0, 10) : String(error)
      }
      return 'no revert'
    }

    await t.test('value and id reach the depository, credited to the sender', async (t) => {
      const id = randomBytes32()
      const before = await publicClient.getBalance({ address: depository })
      const receipt = await mined(
        await wallet(alice).sendTransaction({ to: depositReceiver, data: id, value: parseEther('0.25') }),
      )
      const deposits = parseEventLogs({
        abi: pontisDepositoryAbi,
        logs: receipt.logs,
        eventName: 'RelayNativeDeposit',
      })
      t.equal(deposits.length, 1, 'one deposit event')
      t.equal(getAddress(deposits[0]!.address), getAddress(depository), 'emitted by the depository')
      t.same(deposits[0]!.args, { from: getAddress(alice.address), amount: parseEther('0.25'), id })
      t.equal((await publicClient.getBalance({ address: depository })) - before, parseEther('0.25'))
      t.equal(await publicClient.getBalance({ address: depositReceiver }), 0n, 'the receiver keeps nothing')
    })

    await t.test(
      'a transfer without exactly one 32-byte id reverts, so no untagged funds are taken',
      async (t) => {
        const selector = toFunctionSelector('InvalidRequestId()')
        t.equal(await simulatedRevert('0x', 1n), selector, 'no calldata')
        t.equal(await simulatedRevert(concat([randomBytes32(), '0x00']), 1n), selector, '33 bytes')
        t.equal(await simulatedRevert('0x12345678', 1n), selector, 'a 4-byte selector')
      },
    )

    await t.test('the constructor refuses a depository without code', async (t) => {
      const hash = await wallet(alice).deployContract({
        abi: pontisDepositReceiverAbi,
        bytecode: pontisDepositReceiverBytecode,
        args: [alice.address],
        gas: 1_000_000n,
      })
      const receipt = await publicClient.waitForTransactionReceipt({ hash })
      t.equal(receipt.status, 'reverted')
    })
  },
)
