-- Deposit-address sweeps: once a request paid through a deposit address is filled, what it credited
-- moves from the address to the solver (its repayment), in a solver job of kind `sweep`. One row
-- per request; the address pays the transfer's fee out of the amount, and the row records it.
-- Never edit once released.

CREATE TABLE deposit_address_sweeps (
  request_id text PRIMARY KEY REFERENCES requests (id),
  chain_id bigint NOT NULL,
  deposit_address text NOT NULL,
  currency text NOT NULL,
  -- What the request credited (its amountIn): excess stays for the excess-refund leg.
  amount uint256 NOT NULL,
  -- owed: waiting for the request's other deposit-address legs (an excess refund) to finish;
  -- queued: in the job `job_id`; swept: it confirmed; failed: it reverted or gave up (the operator looks).
  state text NOT NULL DEFAULT 'owed' CONSTRAINT deposit_address_sweeps_state_check CHECK (
    state IN ('owed', 'queued', 'swept', 'failed')
  ),
  job_id bigint REFERENCES solver_jobs (id),
  -- Set once swept: what reached the solver, and the fee the address kept for the transfer.
  swept_amount uint256,
  fee uint256,
  transaction_id text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  CONSTRAINT deposit_address_sweeps_queued_check CHECK ((state = 'owed') = (job_id IS NULL))
);
CREATE INDEX deposit_address_sweeps_owed_idx ON deposit_address_sweeps (created_at) WHERE state = 'owed';
