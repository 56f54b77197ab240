-- Rebalancing moves are executed (issue 22): the rebalancer quotes a move at another intent API
-- (solver settings `rebalance.apiUrl`), as a user of it, and sends the quote's origin steps from the
-- solver's own account through the solver's jobs (`rebalance_step`: signed bytes stored before the
-- broadcast, the nonce allocated in the store like a fill's). Never edit once released.

ALTER TABLE solver_jobs DROP CONSTRAINT solver_jobs_kind_check;
ALTER TABLE solver_jobs ADD CONSTRAINT solver_jobs_kind_check CHECK (
  kind IN ('fill', 'refund', 'excess_refund', 'orphan_refund', 'submit_deposit', 'app_fee_claim', 'repayment', 'sweep',
    'hub_relay', 'rebalance_step')
);

-- The other API's quote as the move sends it: its transaction items in order, what goes in and what
-- it promised out. Written with `request_id` when the move becomes `requested`.
ALTER TABLE rebalances ADD COLUMN quote jsonb;
-- What arrived on the destination (the quote's output, once the request reached success).
ALTER TABLE rebalances ADD COLUMN received uint256;
-- The transactions the move sent on the origin, in order; the other API's fills on the destination.
ALTER TABLE rebalances ADD COLUMN in_tx_hashes text[] NOT NULL DEFAULT '{}';
ALTER TABLE rebalances ADD COLUMN out_tx_hashes text[] NOT NULL DEFAULT '{}';
-- A failed move gives its amount back to the budget only when nothing left the origin (quote
-- refused, a step not sent or reverted, the deposit refunded); one whose deposit went and did not
-- come back keeps it.
ALTER TABLE rebalances ADD COLUMN keeps_budget boolean NOT NULL DEFAULT false;
