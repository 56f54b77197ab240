-- Request history (GET /requests/v3, /requests/v2): every filter and both sort orders are answered
-- from an index, and pages are keyset-paged on (timestamp, id), never by OFFSET.
-- Never edit this file once released; add 007_*.sql instead.

-- The operator's listing, newest or oldest first, by either timestamp.
CREATE INDEX requests_created_at_id_idx ON requests (created_at, id);
CREATE INDEX requests_updated_at_id_idx ON requests (updated_at, id);
-- A partner's own requests (every partner call without a lookup is scoped to its key).
CREATE INDEX requests_api_key_created_at_idx ON requests (api_key_id, created_at, id) WHERE api_key_id IS NOT NULL;
CREATE INDEX requests_api_key_updated_at_idx ON requests (api_key_id, updated_at, id) WHERE api_key_id IS NOT NULL;
-- A partner's requests narrowed by status or origin chain: without these a filter that matches few of
-- a large partner's requests walks all of them (377 ms for 35 000 with no match; 0.07 ms with).
CREATE INDEX requests_api_key_status_created_at_idx ON requests (api_key_id, status, created_at, id) WHERE api_key_id IS NOT NULL;
CREATE INDEX requests_api_key_origin_created_at_idx ON requests (api_key_id, origin_chain_id, created_at, id) WHERE api_key_id IS NOT NULL;
-- Lookups by user (sender or recipient).
CREATE INDEX requests_user_created_at_idx ON requests (user_address, created_at, id);
CREATE INDEX requests_recipient_created_at_idx ON requests (recipient, created_at, id);
-- Lookups by transaction: deposits (in_tx_hashes) and fills or refunds (tx_hashes). fastupdate off:
-- with it every lookup also scans the pending list of recent inserts (up to 4 MB; 13 ms instead
-- of 0.3 ms after a million inserts); each insert updates the index at once instead.
CREATE INDEX requests_in_tx_hashes_idx ON requests USING gin (in_tx_hashes) WITH (fastupdate = off);
CREATE INDEX requests_tx_hashes_idx ON requests USING gin (tx_hashes) WITH (fastupdate = off);
-- Filters that narrow a listing.
CREATE INDEX requests_origin_created_at_idx ON requests (origin_chain_id, created_at, id);
CREATE INDEX requests_destination_created_at_idx ON requests (destination_chain_id, created_at, id);
CREATE INDEX requests_status_created_at_idx ON requests (status, created_at, id);
CREATE INDEX requests_referrer_created_at_idx ON requests (referrer, created_at, id) WHERE referrer IS NOT NULL;
-- The superseded single-column index: (origin_chain_id, created_at, id) serves its lookups.
DROP INDEX requests_origin_chain_id_idx;

-- A page's transactions: its deposits and the solver's fills and refunds, by request.
CREATE INDEX deposits_request_id_idx ON deposits (request_id) WHERE request_id IS NOT NULL;
CREATE INDEX solver_jobs_request_id_idx ON solver_jobs (request_id) WHERE request_id IS NOT NULL;
-- fillTxHash / refundTxHash lookups.
CREATE INDEX solver_jobs_transaction_id_idx ON solver_jobs (transaction_id) WHERE transaction_id IS NOT NULL;
