/**
 * The intent service's database: requests (and, later, what the indexer, solver, webhooks outbox
 * and api keys keep), on embedded PGlite by default or PostgreSQL via `DATABASE_URL`.
 */

export {
  type HistoryDirection,
  type HistoryEntry,
  type HistoryFilter,
  type HistoryPage,
  type HistoryPosition,
  type HistoryQuery,
  type HistorySortBy,
  type HistoryTransaction,
  historySql,
  resolveHashLookups,
} from './history.js'
export {
  type AppliedMigration,
  loadMigrations,
  MIGRATIONS_DIR,
  type Migration,
  MigrationError,
  runMigrations,
} from './migrations.js'
export { createPgClient, type PgClientOptions } from './pg-client.js'
export { createPgliteClient, type PgliteClientOptions } from './pglite-client.js'
export {
  type DepositAddressType,
  DepositTagTakenError,
  DuplicateRequestError,
  type JsonObject,
  type NewRequest,
  type OpenRequestStoreOptions,
  openRequestStore,
  RequestStore,
  type RequestStoreOptions,
  type StoredRequest,
  toStatusRecord,
} from './request-store.js'
export {
  DEFAULT_SCHEMA,
  lockForTransaction,
  type SqlClient,
  type SqlResult,
  type SqlRow,
} from './sql-client.js'
