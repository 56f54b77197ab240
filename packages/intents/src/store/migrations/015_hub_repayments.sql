-- Repayment through the settlement hub: where a hub and oracles are configured, the solver is repaid
-- by relaying the oracles' attestations of each request's deposit and fill to the hub (which credits
-- the solver), then initiating a hub withdrawal and paying it out of the depository. Repayments keep
-- their table and key (the request id); `path` says which way each goes. Never edit once released.

ALTER TABLE solver_jobs DROP CONSTRAINT solver_jobs_kind_check;
ALTER TABLE solver_jobs ADD CONSTRAINT solver_jobs_kind_check CHECK (
  kind IN ('fill', 'refund', 'excess_refund', 'orphan_refund', 'submit_deposit', 'app_fee_claim', 'repayment', 'sweep',
    'hub_relay')
);

-- One hub withdrawal repays a batch of requests of one origin chain and currency. Its nonce is chosen
-- once, when the batch is made, so the withdrawal request (and its hash, the hub's idempotency key
-- and the depository's replay key) never changes across restarts.
CREATE TABLE hub_withdrawals (
  id bigserial PRIMARY KEY,
  chain_id bigint NOT NULL,
  currency text NOT NULL,
  amount uint256 NOT NULL,
  nonce text NOT NULL UNIQUE,
  request_hash text NOT NULL UNIQUE,
  -- The withdrawal request as the oracle's withdrawal-initiation and withdrawal-initiated routes take it
  -- (without the owner's signature, which is made again from it), and the solver's account it pays.
  request jsonb NOT NULL,
  recipient text NOT NULL,
  -- initiating: the initiation is being attested and relayed; initiated: the hub locked the funds
  -- (withdrawal-initiated attested, `initiated` holds it) and the depository payout is to be queued;
  -- withdrawing: the payout job `job_id` is open; paid: it confirmed; closed: the oracles attested the
  -- executed withdrawal and the hub cleared what it held for it; failed: the payout gave up after signing.
  state text NOT NULL DEFAULT 'initiating' CONSTRAINT hub_withdrawals_state_check CHECK (
    state IN ('initiating', 'initiated', 'withdrawing', 'paid', 'closed', 'failed')
  ),
  initiated jsonb,
  attempts integer NOT NULL DEFAULT 0,
  job_id bigint REFERENCES solver_jobs (id),
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX hub_withdrawals_open_idx ON hub_withdrawals (state) WHERE state IN ('initiating', 'initiated', 'paid');

ALTER TABLE repayments ADD COLUMN path text NOT NULL DEFAULT 'depository'
  CONSTRAINT repayments_path_check CHECK (path IN ('depository', 'hub'));
-- Hub path, before a batch: deposit (its attestation to be relayed), fill, then credited.
ALTER TABLE repayments ADD COLUMN hub_step text CONSTRAINT repayments_hub_step_check CHECK (
  hub_step IN ('deposit', 'fill', 'credited')
);
ALTER TABLE repayments ADD COLUMN withdrawal_id bigint REFERENCES hub_withdrawals (id);
ALTER TABLE repayments DROP CONSTRAINT repayments_batched_check;
ALTER TABLE repayments ADD CONSTRAINT repayments_batched_check CHECK (
  (state = 'owed') = (job_id IS NULL AND withdrawal_id IS NULL)
);
CREATE INDEX repayments_withdrawal_idx ON repayments (withdrawal_id) WHERE withdrawal_id IS NOT NULL;
