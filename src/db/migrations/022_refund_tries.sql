-- Refunds the provider did not take (an outage, a refusal the job cannot tell from one) are sent
-- again by the refund job, the least recently tried first: one that keeps failing goes to the back,
-- so a batch of them never holds back the refunds behind it.
ALTER TABLE refunds ADD COLUMN tried_at timestamptz
-- statement
CREATE INDEX refunds_unsent_idx ON refunds ((coalesce(tried_at, created_at)), id) WHERE status = 'PENDING' AND provider_ref IS NULL
