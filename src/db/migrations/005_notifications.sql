-- Permanent webhooks and the notification outbox (also the seller-visible delivery log).

CREATE TABLE webhooks (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  url text NOT NULL,
  types text[] NOT NULL CHECK (cardinality(types) > 0 AND types <@ ARRAY['TRANSACTION', 'WITHDRAWAL']),
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
)
-- statement
CREATE INDEX webhooks_seller_idx ON webhooks (seller_id) WHERE deleted_at IS NULL
-- statement
CREATE TABLE notifications (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  kind text NOT NULL CHECK (kind IN ('TRANSACTION_WEBHOOK', 'TRANSACTION_POSTBACK', 'WITHDRAWAL_WEBHOOK')),
  event_id uuid NOT NULL UNIQUE,
  url text NOT NULL,
  webhook_id bigint REFERENCES webhooks (id),
  transaction_id bigint REFERENCES transactions (id),
  cashout_id bigint REFERENCES cashouts (id),
  CHECK ((transaction_id IS NULL) <> (cashout_id IS NULL)),
  event_status text NOT NULL,
  previous_status text NOT NULL,
  status_changed_at timestamptz NOT NULL,
  -- the exact bytes sent (compact JSON); the postback signature is computed over them
  payload text NOT NULL,
  -- one resource and one target: deliveries of the same order_key go out in id order
  order_key text NOT NULL,
  status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED')),
  attempts integer NOT NULL DEFAULT 0,
  last_response_status integer,
  last_error text,
  next_attempt_at timestamptz NOT NULL,
  -- a claimed delivery; a worker that dies leaves it to be claimed again when the lease ends
  locked_until timestamptz,
  -- a manual resend: exempt from ordering; the status to return to if it fails
  resend_prior_status text,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz
)
-- statement
CREATE INDEX notifications_due_idx ON notifications (next_attempt_at) WHERE status = 'PENDING'
-- statement
CREATE INDEX notifications_order_idx ON notifications (order_key, id) WHERE status = 'PENDING'
-- statement
CREATE INDEX notifications_seller_idx ON notifications (seller_id, id DESC)
