-- Coins (UTXO families' outputs) held for transactions the solver signed, shared by every worker on
-- the database: a coin held here is not chosen again until `held_until` (ms) has passed, by then the
-- signed transaction has spent it on chain. Written in the transaction that stores the signed bytes
-- (`job_id`), so a rolled-back signing holds nothing.
CREATE TABLE solver_coin_reservations (
  chain_id bigint NOT NULL,
  coin_id text NOT NULL,
  held_until bigint NOT NULL,
  job_id bigint,
  PRIMARY KEY (chain_id, coin_id)
);
CREATE INDEX solver_coin_reservations_held_until ON solver_coin_reservations (held_until);
