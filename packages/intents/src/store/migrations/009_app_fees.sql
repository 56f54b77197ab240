-- App fees (issue 22): what each app-fee recipient earned, and what it claimed. Never edit once
-- released; add a new file.

-- One row per app fee of a filled request (its position in the order's `fees`), written in the
-- transaction that moves the request to `success`: the primary key makes a repeated write a no-op,
-- so a crash between steps can never count a fee twice.
CREATE TABLE app_fee_accruals (
  request_id text NOT NULL REFERENCES requests (id),
  position integer NOT NULL,
  recipient text NOT NULL,
  chain_id bigint NOT NULL,
  currency text NOT NULL,
  amount uint256 NOT NULL,
  accrued_at bigint NOT NULL,
  PRIMARY KEY (request_id, position)
);
CREATE INDEX app_fee_accruals_recipient_idx ON app_fee_accruals (recipient, chain_id, currency);

-- A claim of a recipient's balance of one currency. `offered`: answered with the message to sign,
-- not yet signed; `authorized`: the signature was verified and the payout queued (solver job
-- `app-fee-claim:<id>`); `paid` / `failed`: the payout's outcome. A recipient's balance is its
-- accruals less its authorized and paid claims; a failed payout gives its amount back.
CREATE TABLE app_fee_claims (
  id text PRIMARY KEY,
  wallet text NOT NULL,
  recipient text NOT NULL,
  chain_id bigint NOT NULL,
  currency text NOT NULL,
  amount uint256 NOT NULL,
  message text NOT NULL,
  expires_at bigint NOT NULL,
  state text NOT NULL CONSTRAINT app_fee_claims_state_check CHECK (
    state IN ('offered', 'authorized', 'paid', 'failed')
  ),
  transaction_id text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX app_fee_claims_wallet_idx ON app_fee_claims (wallet, chain_id, currency);

-- The payout of a claim is a solver job like a fill (lease, write-ahead signed bytes).
ALTER TABLE solver_jobs DROP CONSTRAINT solver_jobs_kind_check;
ALTER TABLE solver_jobs ADD CONSTRAINT solver_jobs_kind_check CHECK (
  kind IN ('fill', 'refund', 'excess_refund', 'orphan_refund', 'submit_deposit', 'app_fee_claim')
);
