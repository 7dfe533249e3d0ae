-- Fair delivery (docs/notifications.md#delivery): a circuit per endpoint (a seller's target URL) that
-- has failed lately, and the indexes the claim reads each seller through. An endpoint without a row
-- is closed; a row is removed when an attempt to the endpoint succeeds.
CREATE TABLE notification_circuits (
  seller_id bigint NOT NULL REFERENCES sellers (id),
  url text NOT NULL,
  -- attempts failed in a row
  failures integer NOT NULL,
  -- times opened in a row: each open lasts twice the one before, up to a bound
  opened integer NOT NULL DEFAULT 0,
  -- open until then (notifications wait, not attempted); past it, half-open (one probe at a time);
  -- null: closed, still counting failures
  open_until timestamptz,
  PRIMARY KEY (seller_id, url)
)
-- statement
-- The open and half-open circuits of a seller: the claim looks for probes through it.
CREATE INDEX notification_circuits_open_idx ON notification_circuits (seller_id, open_until) WHERE open_until IS NOT NULL
-- statement
-- Each seller's due notifications, oldest first, and the sellers that have any (a skip scan).
CREATE INDEX notifications_seller_due_idx ON notifications (seller_id, next_attempt_at, id) WHERE status = 'PENDING'
-- statement
-- Attempts in flight per seller, counted against its share.
CREATE INDEX notifications_seller_leased_idx ON notifications (seller_id, locked_until) WHERE locked_until IS NOT NULL
-- statement
-- The claim no longer reads every due notification in time order (it reads each seller's): one
-- index fewer to write on every status change, attempt and hold.
DROP INDEX notifications_due_idx
