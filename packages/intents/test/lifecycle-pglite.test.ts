import t from 'tap'
import { lifecycleSuite } from './fixtures/lifecycle-suite.js'

// The lifecycle suite on the embedded default store (PGlite, in memory).
await lifecycleSuite(t, { env: {} })
