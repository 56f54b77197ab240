-- API keys and the shared rate-limit counters. Never edit once released; add a new NNN_*.sql.

-- Partner API keys. The secret itself is never stored: only its SHA-256 (hex), which is what a
-- presented `x-api-key` is looked up by, and its first 8 characters for display.
CREATE TABLE api_keys (
  id text PRIMARY KEY CONSTRAINT api_keys_id_check CHECK (id ~ '^key_[0-9a-f]{24}$'),
  label text NOT NULL CONSTRAINT api_keys_label_check CHECK (char_length(label) BETWEEN 1 AND 100),
  tier text NOT NULL DEFAULT 'standard' CONSTRAINT api_keys_tier_check CHECK (
    tier IN ('public', 'standard', 'elevated')
  ),
  key_hash text NOT NULL CONSTRAINT api_keys_key_hash_key UNIQUE
    CONSTRAINT api_keys_key_hash_check CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  key_prefix text NOT NULL,
  -- At most one webhook per key: {enabled, url, headers?}; NULL when none is configured.
  webhook jsonb CONSTRAINT api_keys_webhook_check CHECK (webhook IS NULL OR jsonb_typeof(webhook) = 'object'),
  -- Unix milliseconds.
  created_at bigint NOT NULL,
  rotated_at bigint,
  revoked_at bigint
);

-- Fixed-window request counters shared by every service instance on this database: one row per
-- bucket (`key:<id>:<class>` or `ip:<address>:<class>`) and window, bumped with an atomic upsert.
-- UNLOGGED: counters are worth nothing after a crash (PostgreSQL empties the table on crash
-- recovery, which at worst resets the current windows) and skipping the WAL keeps the hot path
-- cheap. Rows past `expires_at` are deleted by the limiter's periodic cleanup.
CREATE UNLOGGED TABLE rate_limit_windows (
  bucket text NOT NULL,
  window_start bigint NOT NULL,
  count integer NOT NULL,
  -- window_start + window length: when the row stops mattering.
  expires_at bigint NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
CREATE INDEX rate_limit_windows_expires_at_idx ON rate_limit_windows (expires_at);
