-- Deposit tags: families whose transfers carry no memo (Hyperliquid core) recognise a deposit by
-- its sender and nonce; the quote fixes the nonce and stores the tag reads report for it.
-- Never edit this file once released; add 006_*.sql instead.

-- 0x + 64 hex digits, lower-case, or NULL for requests tagged by their id.
ALTER TABLE requests ADD COLUMN deposit_tag text CONSTRAINT requests_deposit_tag_check CHECK (
  deposit_tag IS NULL OR deposit_tag ~ '^0x[0-9a-f]{64}$'
);
-- One request per tag on an origin chain; the indexer finds the request by it.
CREATE UNIQUE INDEX requests_deposit_tag_idx ON requests (origin_chain_id, deposit_tag) WHERE deposit_tag IS NOT NULL;
