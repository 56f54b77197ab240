/**
 * `authorizationList` on the real devnet (anvil runs Prague): an account signs an EIP-7702
 * authorization delegating its code to a small contract, the quote prices it, the solver's fill is a
 * type-4 transaction that carries it, and the destination call runs the delegated code in the
 * account's own storage. Authorizations the chain would skip are refused at quote time. Every
 * answer is checked against openapi/intents.yaml.
 */
import type { IntentsApi } from '@pontis/core'
import { type DevnetChain, USERS } from '@pontis/devnet'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t from 'tap'
import {
  type Abi,
  type Address,
  concat,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  type PublicClient,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { compileContracts } from '../../devnet/scripts/compile.js'
import { startE2e } from './fixtures/e2e.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
type Quote = IntentsApi.QuoteResponse
type Status = IntentsApi.StatusRecordV3
type ErrorAnswer = { errorCode: string; message: string }

/** The code the account delegates to: it records its argument and caller in the account's storage. */
const PROBE_SOURCE = `// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

contract DelegationProbe {
    uint256 public recorded;
    address public recordedBy;

    function record(uint256 value) external payable {
        recorded = value;
        recordedBy = msg.sender;
    }

    // The account is also the recipient: the fill pays it before the call.
    receive() external payable {}
}
`
const [probe] = compileContracts(new Map([['DelegationProbe.sol', PROBE_SOURCE]]))
if (!probe) throw new Error('solc produced no DelegationProbe')
const probeAbi = probe.abi as unknown as Abi

const e2e = await startE2e(t, {}, { otherEvmChains: [31338] })
const { service, loaded } = e2e
const [chainA, chainB] = e2e.devnet.chains as [DevnetChain, DevnetChain]
const clientA = e2e.evm.client
const clientB = createPublicClient({ chain: chainB.chain, transport: http(chainB.rpcUrl) }) as PublicClient

/** The probe deployed on the destination by a funded devnet account. */
async function deployProbe(): Promise<Address> {
  const deployer = createWalletClient({
    account: privateKeyToAccount(USERS[3]!.privateKey),
    chain: chainB.chain,
    transport: http(chainB.rpcUrl),
  })
  const hash = await deployer.deployContract({ abi: probeAbi, bytecode: probe!.bytecode })
  const receipt = await clientB.waitForTransactionReceipt({ hash })
  if (!receipt.contractAddress) throw new Error('the probe was not deployed')
  return receipt.contractAddress
}

const recordCall = (account: Address, value: bigint) => ({
  to: account,
  value: '0',
  data: encodeFunctionData({ abi: probeAbi, functionName: 'record', args: [value] }),
})

function quoteBody(account: Address, extra: Record<string, unknown>) {
  return {
    user: USERS[2]!.address,
    recipient: account,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '100000000000000000',
    tradeType: 'EXACT_INPUT',
    ...extra,
  }
}

async function settle(client: TestClient, requestId: string): Promise<Status> {
  return waitFor(
    `request ${requestId} to be final`,
    async () => (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as Status,
    {
      until: (record) => ['success', 'failure', 'refund'].includes(record.status),
      describe: (record) => record && { status: record.status, failReason: record.failReason },
    },
  )
}

const probeAddress = await deployProbe()

t.test('a delegated account: the fill is a type-4 transaction and the call runs its code', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const account = privateKeyToAccount(generatePrivateKey())
  t.equal(await clientB.getCode({ address: account.address }), undefined, 'the account starts without code')
  const authorization = await account.signAuthorization({
    address: probeAddress,
    chainId: 31338,
    nonce: 0,
  })
  const signed = {
    chainId: authorization.chainId,
    address: authorization.address,
    nonce: authorization.nonce,
    yParity: authorization.yParity as number,
    r: authorization.r,
    s: authorization.s,
  }
  const txs = [recordCall(account.address, 42n)]

  const res = await client.post('/quote/v2', quoteBody(account.address, { txs, authorizationList: [signed] }))
  t.equal(res.status, 200, 'the authorization is accepted', { body: res.body })
  const quote = res.body as Quote

  const requestId = quote.steps.at(-1)!.requestId as string
  const wallet = createWalletClient({
    account: privateKeyToAccount(USERS[2]!.privateKey),
    chain: chainA.chain,
    transport: http(chainA.rpcUrl),
  })
  for (const step of quote.steps) {
    for (const item of step.items) {
      const data = item.data as { to: Address; data: Hex; value: string; gas?: string }
      const hash = await wallet.sendTransaction({
        to: data.to,
        data: data.data,
        value: BigInt(data.value),
        // The step's limit, as the Relay SDK sends it: a bare estimate runs out of gas when a
        // repayment empties the depository's balance first.
        ...(data.gas ? { gas: BigInt(data.gas) } : {}),
      })
      t.equal((await clientA.waitForTransactionReceipt({ hash })).status, 'success')
    }
  }
  const done = await settle(client, requestId)
  t.equal(done.status, 'success', 'the request is filled')

  const fill = await clientB.getTransaction({ hash: done.txHashes[0] as Hex })
  t.equal(fill.type, 'eip7702', 'the fill is an EIP-7702 transaction')
  t.equal(fill.authorizationList?.length, 1, 'carrying the authorization')
  t.equal(
    await clientB.getCode({ address: account.address }),
    concat(['0xef0100', probeAddress.toLowerCase() as Hex]),
    'the account delegates to the probe',
  )
  const read = (functionName: 'recorded' | 'recordedBy') =>
    clientB.readContract({ address: account.address, abi: probeAbi, functionName })
  t.equal(await read('recorded'), 42n, "the call ran the probe's code in the account's storage")
  t.not(await read('recordedBy'), NATIVE, 'called by the fill')
  t.equal(await clientB.readContract({ address: probeAddress, abi: probeAbi, functionName: 'recorded' }), 0n)
})

t.test('authorizations the chain would skip are refused at quote time', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const account = privateKeyToAccount(generatePrivateKey())
  const authorization = await account.signAuthorization({ address: probeAddress, chainId: 31338, nonce: 3 })
  const item = {
    chainId: authorization.chainId,
    address: authorization.address,
    nonce: authorization.nonce,
    yParity: authorization.yParity as number,
    r: authorization.r,
    s: authorization.s,
  }
  const txs = [recordCall(account.address, 1n)]
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    [
      'signed for a nonce the account is not at',
      { ...item },
      'INVALID_EXTRA_TXS',
      /next nonce .* is 0, so the chain would skip it; sign it again for nonce 0/,
    ],
    ['for another chain', { ...item, chainId: 1 }, 'INVALID_EXTRA_TXS', /must be 31338/],
    [
      'a signature that recovers no account',
      { ...item, nonce: 0, r: `0x${'ff'.repeat(32)}`, s: `0x${'ff'.repeat(32)}` },
      'INVALID_SIGNATURE',
      /sign the authorization again/,
    ],
  ]
  for (const [name, bad, code, message] of cases) {
    const res = await client.post('/quote/v2', quoteBody(account.address, { txs, authorizationList: [bad] }))
    t.equal(res.status, 400, `${name}: 400`)
    t.equal((res.body as ErrorAnswer).errorCode, code, `${name}: ${code}`)
    t.match((res.body as ErrorAnswer).message, message, `${name}: says what to do`)
  }
})
