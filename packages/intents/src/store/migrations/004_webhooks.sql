-- Durable webhook outbox: one row per status change of a request tied to an API key with an
-- enabled webhook, written in the transaction of the change itself, so no change is ever lost.
-- Never edit once released; add 005_*.sql.

CREATE TABLE webhook_events (
  id bigserial PRIMARY KEY,
  -- Stable across attempts (X-Event-Id), so receivers can deduplicate.
  event_id text NOT NULL UNIQUE,
  api_key_id text NOT NULL,
  request_id text NOT NULL REFERENCES requests (id),
  -- The exact JSON body sent (signed per attempt over these bytes).
  body text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CONSTRAINT webhook_events_state_check CHECK (
    state IN ('pending', 'delivered', 'dead', 'disabled')
  ),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  last_status integer,
  last_error text,
  lease_owner text,
  lease_until bigint,
  created_at bigint NOT NULL,
  delivered_at bigint
);
-- The worker's scan: due events, oldest first.
CREATE INDEX webhook_events_due_idx ON webhook_events (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX webhook_events_request_idx ON webhook_events (request_id, id);
