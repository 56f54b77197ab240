-- Confirmed jobs are read again for a while (an hour) in case a reorganisation deeper than the
-- chain's confirmation rule removes their transaction; reorged_at records the first time one was
-- found gone, so the request, the log and the metric say it once while the bytes are sent again.
ALTER TABLE solver_jobs ADD COLUMN reorged_at bigint;
CREATE INDEX solver_jobs_confirmed_idx ON solver_jobs (updated_at) WHERE state = 'confirmed';
