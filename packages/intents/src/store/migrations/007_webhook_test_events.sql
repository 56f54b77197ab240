-- Test events (issue 25: the dashboard's "send a test event") belong to a key, not to a request:
-- their request_id is NULL. The delivery's per-request ordering compares request ids, so a NULL
-- one never waits for, nor holds up, another event.
ALTER TABLE webhook_events ALTER COLUMN request_id DROP NOT NULL;
-- A partner's deliveries, newest first.
CREATE INDEX webhook_events_key_idx ON webhook_events (api_key_id, id DESC);
