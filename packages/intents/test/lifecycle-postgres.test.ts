import pg from 'pg'
import t from 'tap'
import { lifecycleSuite } from './fixtures/lifecycle-suite.js'

// The same lifecycle suite on the real PostgreSQL of this machine, in a schema of its own.
const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `lifecycle_${process.pid}_${Date.now()}`
t.teardown(async () => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await client.end()
})
await lifecycleSuite(t, { env: { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema } })
