-- Adyen's settlement reports (CONTRACT §15): each Settlement details report Adyen's REPORT_AVAILABLE
-- notification names, queued once by its URL, downloaded by a job (tried again later when it fails)
-- and its movements kept in provider_movements (migration 028). `latest_at` is the latest time of any
-- line in it: an account's record of a day is ready once a fetched report reaches past that day.
CREATE TABLE settlement_reports (
  id bigserial PRIMARY KEY,
  account text NOT NULL,
  url text NOT NULL UNIQUE,
  file_name text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'fetched', 'failed')),
  tries integer NOT NULL DEFAULT 0,
  -- Due again at this time (also the lease of a download under way); null: due as soon as the job can
  -- download it (new, or waiting for the report credentials).
  next_try_at timestamptz,
  last_error text,
  fetched_at timestamptz,
  rows integer,
  latest_at timestamptz,
  -- What the download found: lines of types not reconciled, of another currency, the batches.
  summary jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
)
-- statement
CREATE INDEX settlement_reports_due_idx ON settlement_reports (account, next_try_at) WHERE state <> 'fetched'
-- statement
CREATE INDEX settlement_reports_reach_idx ON settlement_reports (account, latest_at) WHERE state = 'fetched'
