-- The request lifecycle: deposits seen on chain, indexer cursors, solver work with leases and
-- write-ahead signed transactions, and solver nonces. Never edit once released; add 003_*.sql.

-- The deposit that moved a request out of `waiting`, as matched by the indexer.
ALTER TABLE requests ADD COLUMN deposit jsonb CHECK (deposit IS NULL OR jsonb_typeof(deposit) = 'object');

-- Every deposit the indexer saw, matched or not. One row per deposit event (chain, tx, position).
CREATE TABLE deposits (
  chain_id bigint NOT NULL,
  transaction_id text NOT NULL,
  log_index integer NOT NULL,
  deposit_id text NOT NULL,
  depositor text NOT NULL,
  currency text NOT NULL,
  amount uint256 NOT NULL,
  block_number bigint,
  -- The request it pays; NULL for an orphaned deposit (unknown id).
  request_id text REFERENCES requests (id),
  -- What the indexer made of it.
  outcome text NOT NULL CONSTRAINT deposits_outcome_check CHECK (
    outcome IN ('matched', 'orphaned', 'double_spend', 'too_low', 'wrong_currency', 'late')
  ),
  -- Acted upon: the chain's confirmation policy was met and the request moved (or a refund was queued).
  confirmed boolean NOT NULL DEFAULT false,
  seen_at bigint NOT NULL,
  PRIMARY KEY (chain_id, transaction_id, log_index)
);
CREATE INDEX deposits_unconfirmed_idx ON deposits (chain_id) WHERE NOT confirmed;
CREATE INDEX deposits_deposit_id_idx ON deposits (deposit_id);

-- Where each chain's deposit scan has got to (opaque, family-defined).
CREATE TABLE chain_cursors (
  chain_id bigint PRIMARY KEY,
  cursor text NOT NULL,
  updated_at bigint NOT NULL
);

-- Solver work. `job_key` makes every leg unique: one fill per request, one refund per request,
-- one refund per orphaned deposit. A worker holds a job through a lease; the signed transaction
-- is stored before it is broadcast, so a restart re-broadcasts the same bytes and never re-signs.
CREATE TABLE solver_jobs (
  id bigserial PRIMARY KEY,
  job_key text NOT NULL UNIQUE,
  request_id text REFERENCES requests (id),
  kind text NOT NULL CONSTRAINT solver_jobs_kind_check CHECK (
    kind IN ('fill', 'refund', 'excess_refund', 'orphan_refund', 'submit_deposit')
  ),
  chain_id bigint NOT NULL,
  payload jsonb NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
  state text NOT NULL DEFAULT 'queued' CONSTRAINT solver_jobs_state_check CHECK (
    state IN ('queued', 'signed', 'broadcast', 'confirmed', 'reverted', 'failed')
  ),
  transaction_id text,
  raw text,
  amount uint256,
  reason text,
  details jsonb,
  lease_owner text,
  lease_until bigint,
  attempts integer NOT NULL DEFAULT 0,
  not_before bigint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  CONSTRAINT solver_jobs_signed_check CHECK ((transaction_id IS NULL) = (raw IS NULL))
);
CREATE INDEX solver_jobs_open_idx ON solver_jobs (state, not_before) WHERE state IN ('queued', 'signed', 'broadcast');

-- Next nonce per signer and chain, allocated in the transaction that stores the signed bytes, so
-- two solver processes never sign two transactions with one nonce.
CREATE TABLE solver_nonces (
  chain_id bigint NOT NULL,
  address text NOT NULL,
  next_nonce numeric(20, 0) NOT NULL,
  PRIMARY KEY (chain_id, address)
);
