/**
 * The majority vote on a fact's block hash over a chain's nodes, and the report of a node that
 * contradicts the others.
 */
import t from 'tap'
import {
  blockHashQuorum,
  type ChainWitness,
  type LogFields,
  type Logger,
  nodeDisagreementReporter,
  type RpcCallObservation,
  watchRpcCalls,
} from '../src/index.js'

const HASH = 'aa'.repeat(32)
const OTHER = 'bb'.repeat(32)

/** Witnesses answering `answers` in turn (a string: that hash; undefined: cannot say; an Error: throws). */
function vote(answers: ReadonlyArray<string | undefined | Error>) {
  const witnesses = answers.map((answer, position) => ({ url: `http://node${position}.test/key`, answer }))
  const reported: string[] = []
  return {
    reported,
    result: blockHashQuorum({
      witnesses,
      height: 7n,
      blockHash: HASH,
      ask: async (witness, height) => {
        if (height !== 7n) throw new Error('asked another height')
        if (witness.answer instanceof Error) throw witness.answer
        return witness.answer
      },
      onDisagreement: (witness) => reported.push(witness.url),
    }),
  }
}

t.test('more than half of all the nodes, each asked on its own', async (t) => {
  t.equal(await vote([]).result, true, 'no node to ask: what was read is trusted')
  t.equal(await vote([HASH]).result, true, 'one node: nobody to outvote it')
  t.equal(await vote([HASH, HASH]).result, true, 'two of two')
  t.equal(await vote([HASH, HASH, OTHER]).result, true, 'two of three')
  t.equal(await vote([OTHER, HASH, HASH]).result, true, 'two of three, the main node the one contradicting')
  t.equal(await vote([HASH, HASH, HASH, OTHER]).result, true, 'three of four')
  t.equal(await vote([HASH, HASH, OTHER, OTHER]).result, false, 'two of four is no majority')
  const oneToOne = vote([HASH, OTHER])
  t.equal(await oneToOne.result, false, 'one to one: nothing trusted')
  t.same(oneToOne.reported, ['http://node1.test/key'], 'the contradicting node is reported')
  // The main node down: one node vouching of three is not enough, whichever served the read.
  const failedOver = vote([undefined, OTHER, HASH])
  t.equal(await failedOver.result, false, 'one of three vouches: not trusted')
})

t.test('a node that cannot answer is not counted, nor reported', async (t) => {
  const silent = vote([HASH, undefined, new Error('ECONNREFUSED')])
  t.equal(await silent.result, false, 'one of three')
  t.same(silent.reported, [])
  const behind = vote([HASH, HASH, undefined])
  t.equal(await behind.result, true, 'two of three, the third behind')
  t.same(behind.reported, [])
})

t.test('the report names the host only and counts a disagreement of the chain', async (t) => {
  const lines: Array<{ message: string; fields?: LogFields }> = []
  const warn = (message: string, fields?: LogFields) => lines.push({ message, ...(fields ? { fields } : {}) })
  const logger: Logger = { debug: () => {}, info: () => {}, warn, error: () => {} }
  const observed: RpcCallObservation[] = []
  const witness: ChainWitness = { url: 'https://node.test/v2/secret-key?apikey=secret' }
  const stop = watchRpcCalls([{ url: 'https://node.test/v2/secret-key', chainId: 9 }], (observation) =>
    observed.push(observation),
  )
  t.teardown(stop)
  nodeDisagreementReporter(logger)(witness, 12n)
  t.same(lines, [
    {
      message: 'a node answered another block hash than the others; not trusted',
      fields: { node: 'node.test', blockNumber: '12' },
    },
  ])
  t.notMatch(JSON.stringify(lines), /secret/, 'no path, no query')
  t.same(observed, [{ chainId: 9, outcome: 'disagreement', durationSeconds: 0 }])
})
