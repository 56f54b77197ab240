-- The solver's liquidity commitments (issue 22): every quote with steps reserves what its fill
-- will pay out, so concurrent quotes on any instance cannot promise the same balance twice.
-- Never edit once released; add a new file.

-- One reservation per quoted request. It counts against the solver's balance while the quote is
-- live (`expires_at` in the future, request still `waiting` or not yet stored) or the request is
-- on its way to a fill (`depositing`, `pending`, `submitted`); a fill, refund or failure releases
-- it. No foreign key: the reservation is taken before the request row is written.
CREATE TABLE liquidity_commitments (
  request_id text PRIMARY KEY,
  chain_id bigint NOT NULL,
  currency text NOT NULL,
  amount uint256 NOT NULL,
  expires_at bigint NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX liquidity_commitments_currency_idx ON liquidity_commitments (chain_id, currency);

-- The solver's balance per chain and currency as last read by a quote, for the operators' view.
CREATE TABLE solver_balances (
  chain_id bigint NOT NULL,
  currency text NOT NULL,
  balance uint256 NOT NULL,
  read_at bigint NOT NULL,
  PRIMARY KEY (chain_id, currency)
);
