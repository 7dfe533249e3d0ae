-- Refunds as objects (CONTRACT §5a): partial, one PENDING at a time per sale, settled SUCCEEDED or FAILED.
CREATE TABLE refunds (
  id bigserial PRIMARY KEY,
  transaction_id bigint NOT NULL REFERENCES transactions (id),
  seller_id bigint NOT NULL REFERENCES sellers (id),
  amount bigint NOT NULL CHECK (amount > 0),
  status text NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  failure_reason text,
  -- Who asked: the seller's API, or the platform (the operator's REFUNDED, a Pix returned by the gateway).
  requested_by text NOT NULL CHECK (requested_by IN ('SELLER', 'PLATFORM')),
  -- The provider's reference once it has accepted the refund (a devolução's rtrId, …); NULL until then.
  provider_ref text,
  created_at timestamptz NOT NULL,
  completed_at timestamptz,
  CHECK ((status = 'PENDING') = (completed_at IS NULL)),
  CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL))
)
-- statement
CREATE INDEX refunds_transaction_idx ON refunds (transaction_id, id)
-- statement
-- At most one PENDING refund per sale: a second request is refused (409) even if two race.
CREATE UNIQUE INDEX refunds_one_pending_idx ON refunds (transaction_id) WHERE status = 'PENDING'
-- statement
-- The sale's side: refunds that SUCCEEDED, the refund PENDING (0 when none), and what an open MED
-- holds in blocked (min(netAmount, amount − refunded)). Sales in MED before this migration hold their net.
ALTER TABLE transactions ADD COLUMN refunded_amount bigint NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0 AND refunded_amount <= amount)
-- statement
ALTER TABLE transactions ADD COLUMN refund_pending bigint NOT NULL DEFAULT 0 CHECK (refund_pending >= 0 AND refunded_amount + refund_pending <= amount)
-- statement
ALTER TABLE transactions ADD COLUMN med_blocked bigint NOT NULL DEFAULT 0 CHECK (med_blocked >= 0)
-- statement
UPDATE transactions SET med_blocked = net_amount WHERE status = 'MED'
-- statement
-- Refunded sales before this migration were refunded whole, in one go.
UPDATE transactions SET refunded_amount = amount
WHERE status = 'ESTORNADO' AND id IN (SELECT transaction_id FROM transaction_events WHERE event = 'REFUNDED')
