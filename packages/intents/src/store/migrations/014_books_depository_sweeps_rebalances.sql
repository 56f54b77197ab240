-- Closing the solver's books (issue 22), part two. Never edit once released; add a new file.

-- A deposit-address request with app fees is swept to the origin depository, not to the solver:
-- app-fee claims are paid out of the depository, so the fees must reach it. The solver's share
-- (what reached the depository less the app fees) is then repaid like any other fill, through
-- `repayments`, so the depository keeps exactly the fees owed to their recipients.
ALTER TABLE deposit_address_sweeps ADD COLUMN app_fees uint256 NOT NULL DEFAULT 0;
ALTER TABLE deposit_address_sweeps ADD COLUMN destination text NOT NULL DEFAULT 'solver'
  CONSTRAINT deposit_address_sweeps_destination_check CHECK (destination IN ('solver', 'depository'));
