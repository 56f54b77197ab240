-- A deposit acted on (confirmed) that a reorganisation later removed from the chain: when the
-- indexer found it gone. Kept, not deleted: the request's record and the operator need to see it.
ALTER TABLE deposits ADD COLUMN reorged_at bigint;
CREATE INDEX deposits_settled_watch_idx ON deposits (seen_at) WHERE confirmed AND reorged_at IS NULL;
