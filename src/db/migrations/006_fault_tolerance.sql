-- Idempotency keys are now claimed by an advisory lock of the request's own transaction (freed with
-- its connection if the process dies), so a row exists only for a finished request.
DELETE FROM idempotency_keys WHERE response_status IS NULL
-- statement
ALTER TABLE idempotency_keys DROP COLUMN locked_until
-- statement
ALTER TABLE idempotency_keys ALTER COLUMN response_status SET NOT NULL
-- statement
ALTER TABLE idempotency_keys ALTER COLUMN response_body SET NOT NULL
-- statement
-- Fingerprints were unkeyed SHA-256 digests of bodies that may hold a card number and CVV; they
-- are dropped. Those keys (24 h at most) still replay their answer, whatever body comes with them.
UPDATE idempotency_keys SET request_hash = 'legacy-unkeyed'
-- statement
-- Delivery: in-flight attempts per target (each target has its own concurrency limit) and a
-- target's waiting notifications (released at once when an attempt to it succeeds).
CREATE INDEX notifications_leased_idx ON notifications (url) WHERE locked_until IS NOT NULL
-- statement
CREATE INDEX notifications_pending_url_idx ON notifications (url, next_attempt_at, id) WHERE status = 'PENDING'
