import t from 'tap'
import { lifecycleSuite } from './fixtures/lifecycle-suite.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './fixtures/postgres.js'

// The same lifecycle suite on the real PostgreSQL of this machine, in a schema of its own.
const schema = uniqueSchema('lifecycle')
t.teardown(() => dropSchema(schema))
await lifecycleSuite(t, { env: { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema } })
