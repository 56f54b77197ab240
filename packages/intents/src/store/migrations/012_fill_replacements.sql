-- Stuck transactions repriced by replacement: the same nonce re-signed with higher fees, so the
-- chain mines at most one of them. `replaced` keeps the earlier transactions of the job (oldest
-- first, each {transactionId, raw}) so the one that is mined is found whichever it is;
-- `broadcast_at` is when the current transaction was first handed to the chain.
ALTER TABLE solver_jobs ADD COLUMN replaced jsonb NOT NULL DEFAULT '[]'::jsonb
  CHECK (jsonb_typeof(replaced) = 'array');
ALTER TABLE solver_jobs ADD COLUMN broadcast_at bigint;
