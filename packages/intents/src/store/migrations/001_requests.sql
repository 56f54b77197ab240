-- Requests: one row per answered quote, from `waiting` to a final status.
-- Never edit this file once released: the store refuses to start when an applied migration's
-- checksum changed. Add 002_*.sql instead. Objects are unqualified: they land in the schema the
-- connection's search_path names.

-- Token amounts in the smallest unit: unsigned 256-bit integers, exact.
CREATE DOMAIN uint256 AS numeric(78, 0)
  CHECK (VALUE >= 0 AND VALUE <= 115792089237316195423570985008687907853269984665640564039457584007913129639935);

CREATE TABLE requests (
  -- 0x + 64 hex digits, stored lower-case so lookups do not depend on the caller's case.
  id text PRIMARY KEY CONSTRAINT requests_id_check CHECK (id ~ '^0x[0-9a-f]{64}$'),
  status text NOT NULL DEFAULT 'waiting' CONSTRAINT requests_status_check CHECK (
    status IN ('waiting', 'depositing', 'pending', 'submitted', 'success', 'failure', 'refund', 'fallback')
  ),
  origin_chain_id bigint NOT NULL CHECK (origin_chain_id > 0),
  destination_chain_id bigint NOT NULL CHECK (destination_chain_id > 0),
  user_address text NOT NULL,
  recipient text NOT NULL,
  refund_to text NOT NULL,
  origin_currency text NOT NULL,
  destination_currency text NOT NULL,
  trade_type text NOT NULL CHECK (trade_type IN ('EXACT_INPUT', 'EXACT_OUTPUT', 'EXPECTED_OUTPUT')),
  amount_in uint256 NOT NULL,
  amount_out uint256 NOT NULL,
  minimum_amount_out uint256 NOT NULL,
  deposit_address text,
  deposit_address_type text CHECK (deposit_address_type IN ('open', 'strict')),
  api_key_id text,
  referrer text,
  -- Everything the solver and indexer need later (original request, order, fees); opaque here.
  quote jsonb NOT NULL CHECK (jsonb_typeof(quote) = 'object'),
  in_tx_hashes text[] NOT NULL DEFAULT '{}',
  tx_hashes text[] NOT NULL DEFAULT '{}',
  fail_reason text NOT NULL DEFAULT 'N/A',
  refund_fail_reason text NOT NULL DEFAULT 'N/A',
  details jsonb CHECK (details IS NULL OR jsonb_typeof(details) = 'object'),
  -- Unix milliseconds.
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  CONSTRAINT requests_deposit_address_pair_check CHECK ((deposit_address IS NULL) = (deposit_address_type IS NULL))
);

-- Expiry sweeps: open requests of one status past their deadline.
CREATE INDEX requests_status_expires_at_idx ON requests (status, expires_at);
-- The indexer matches deposits to requests by deposit address.
CREATE INDEX requests_deposit_address_idx ON requests (deposit_address) WHERE deposit_address IS NOT NULL;
CREATE INDEX requests_origin_chain_id_idx ON requests (origin_chain_id);
