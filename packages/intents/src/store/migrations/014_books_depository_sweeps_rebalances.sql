-- Closing the solver's books (issue 22), part two. Never edit once released; add a new file.

-- A deposit-address request with app fees is swept to the origin depository, not to the solver:
-- app-fee claims are paid out of the depository, so the fees must reach it. The solver's share
-- (what reached the depository less the app fees) is then repaid like any other fill, through
-- `repayments`, so the depository keeps exactly the fees owed to their recipients.
ALTER TABLE deposit_address_sweeps ADD COLUMN app_fees uint256 NOT NULL DEFAULT 0;
ALTER TABLE deposit_address_sweeps ADD COLUMN destination text NOT NULL DEFAULT 'solver'
  CONSTRAINT deposit_address_sweeps_destination_check CHECK (destination IN ('solver', 'depository'));

-- Rebalancing: a move of the solver's own funds into a chain and currency whose balance left its
-- configured band (solver settings, `inventory[]`). Each move is recorded here before anything is
-- sent, in the transaction that checks its budget, so a crash never plans or sends it twice; the
-- partial unique index keeps one move open per destination at a time.
CREATE TABLE rebalances (
  id text PRIMARY KEY,
  from_chain_id bigint NOT NULL,
  from_currency text NOT NULL,
  to_chain_id bigint NOT NULL,
  to_currency text NOT NULL,
  amount uint256 NOT NULL,
  -- The balances that decided it, as read then.
  from_balance uint256 NOT NULL,
  to_balance uint256 NOT NULL,
  -- planned: recorded, not yet executed; requested: its own intent was quoted (`request_id`);
  -- done: that request reached success; failed: it did not (the budget gets its amount back).
  state text NOT NULL DEFAULT 'planned' CONSTRAINT rebalances_state_check CHECK (
    state IN ('planned', 'requested', 'done', 'failed')
  ),
  request_id text,
  reason text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE UNIQUE INDEX rebalances_open_idx ON rebalances (to_chain_id, to_currency)
  WHERE state IN ('planned', 'requested');
CREATE INDEX rebalances_budget_idx ON rebalances (to_chain_id, to_currency, created_at);
