-- Cashouts (payouts of available balance to a PIX key) and their status history.

CREATE TABLE cashouts (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  status text NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'CANCELLED', 'REJECTED')),
  last_event text,
  amount bigint NOT NULL CHECK (amount > 0),
  fee_fixed bigint NOT NULL CHECK (fee_fixed >= 0),
  fee_variable bigint NOT NULL CHECK (fee_variable >= 0),
  fee_total bigint NOT NULL CHECK (fee_total = fee_fixed + fee_variable),
  net_amount bigint NOT NULL CHECK (net_amount > 0 AND net_amount + fee_total = amount),
  pix_key text NOT NULL,
  pix_key_type text NOT NULL CHECK (pix_key_type IN ('CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM')),
  external_id text,
  provider_data jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  processed_at timestamptz
)
-- statement
CREATE INDEX cashouts_seller_idx ON cashouts (seller_id, id DESC)
-- statement
CREATE INDEX cashouts_progress_idx ON cashouts (updated_at) WHERE status IN ('PENDING', 'PROCESSING')
-- statement
CREATE TABLE cashout_events (
  id bigserial PRIMARY KEY,
  cashout_id bigint NOT NULL REFERENCES cashouts (id),
  event text NOT NULL,
  from_status text NOT NULL,
  to_status text NOT NULL,
  created_at timestamptz NOT NULL
)
-- statement
CREATE INDEX cashout_events_cashout_idx ON cashout_events (cashout_id)
-- statement
CREATE TRIGGER cashout_events_append_only BEFORE UPDATE OR DELETE ON cashout_events
  FOR EACH ROW EXECUTE FUNCTION reject_append_only_change()
-- statement
ALTER TABLE postings ADD CONSTRAINT postings_cashout_fk FOREIGN KEY (cashout_id) REFERENCES cashouts (id)
-- statement
CREATE INDEX postings_cashout_idx ON postings (cashout_id) WHERE cashout_id IS NOT NULL
