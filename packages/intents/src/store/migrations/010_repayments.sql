-- Repayment: the solver pays every fill from its own balance and is paid back out of the origin
-- deposit. One row per filled request (never two: the request id is the key), batched into solver
-- jobs of kind `repayment` (one transaction repays several requests). Never edit once released.

ALTER TABLE solver_jobs DROP CONSTRAINT solver_jobs_kind_check;
ALTER TABLE solver_jobs ADD CONSTRAINT solver_jobs_kind_check CHECK (
  kind IN ('fill', 'refund', 'excess_refund', 'orphan_refund', 'submit_deposit', 'app_fee_claim', 'repayment', 'sweep')
);

CREATE TABLE repayments (
  request_id text PRIMARY KEY REFERENCES requests (id),
  -- The origin chain, where the deposit is held and the solver is repaid.
  chain_id bigint NOT NULL,
  currency text NOT NULL,
  amount uint256 NOT NULL,
  -- owed: not in a batch yet; batched: in the job `job_id` (signed at most once, replay-protected);
  -- paid: that job confirmed; failed: that job gave up after signing (the operator looks; never re-batched).
  state text NOT NULL DEFAULT 'owed' CONSTRAINT repayments_state_check CHECK (
    state IN ('owed', 'batched', 'paid', 'failed')
  ),
  job_id bigint REFERENCES solver_jobs (id),
  transaction_id text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  CONSTRAINT repayments_batched_check CHECK ((state = 'owed') = (job_id IS NULL))
);
CREATE INDEX repayments_owed_idx ON repayments (chain_id, created_at) WHERE state = 'owed';
CREATE INDEX repayments_job_idx ON repayments (job_id) WHERE job_id IS NOT NULL;
