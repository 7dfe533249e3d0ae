-- Sales (transactions), their items and status history, and stored idempotent responses.

CREATE TABLE transactions (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  status text NOT NULL CHECK (status IN ('PENDENTE', 'EM_PROCESSAMENTO', 'PAGO', 'CANCELADO', 'RECUSADO', 'ESTORNADO', 'FALHA', 'CHARGEBACK', 'MED')),
  last_event text,
  payment_method text NOT NULL CHECK (payment_method IN ('PIX', 'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO')),
  amount bigint NOT NULL CHECK (amount > 0),
  -- the split, set at the first payment; null before
  system_fee bigint,
  reserve_amount bigint,
  net_amount bigint,
  CHECK (system_fee IS NULL OR system_fee + reserve_amount + net_amount = amount),
  -- the fee schedule in force when the sale was created
  fee_schedule jsonb NOT NULL,
  customer_name text NOT NULL,
  customer_email text NOT NULL,
  customer_document text,
  customer_phone text,
  shipping jsonb,
  postback_url text,
  installments integer,
  card_brand text,
  card_last_four text,
  card_bin text,
  card_fingerprint text,
  pix_code text,
  pix_txid text UNIQUE,
  pix_expires_at timestamptz,
  boleto_code text,
  boleto_barcode text,
  boleto_due_date date,
  external_transaction_id text NOT NULL,
  -- what the provider needs to carry the sale on (opaque to the domain)
  provider_data jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
)
-- statement
CREATE INDEX transactions_seller_idx ON transactions (seller_id, id DESC)
-- statement
CREATE INDEX transactions_pix_expiry_idx ON transactions (pix_expires_at) WHERE status = 'PENDENTE' AND payment_method = 'PIX'
-- statement
CREATE INDEX transactions_boleto_due_idx ON transactions (boleto_due_date) WHERE status = 'PENDENTE' AND payment_method = 'BOLETO'
-- statement
CREATE INDEX transactions_card_progress_idx ON transactions (updated_at)
  WHERE status IN ('PENDENTE', 'EM_PROCESSAMENTO') AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD')
-- statement
CREATE TABLE sale_items (
  id bigserial PRIMARY KEY,
  transaction_id bigint NOT NULL REFERENCES transactions (id),
  title text NOT NULL,
  unit_price bigint NOT NULL CHECK (unit_price > 0),
  quantity integer NOT NULL CHECK (quantity > 0),
  tangible boolean NOT NULL
)
-- statement
CREATE INDEX sale_items_transaction_idx ON sale_items (transaction_id)
-- statement
CREATE TABLE transaction_events (
  id bigserial PRIMARY KEY,
  transaction_id bigint NOT NULL REFERENCES transactions (id),
  event text NOT NULL,
  from_status text NOT NULL,
  to_status text NOT NULL,
  created_at timestamptz NOT NULL
)
-- statement
CREATE INDEX transaction_events_transaction_idx ON transaction_events (transaction_id)
-- statement
CREATE TRIGGER transaction_events_append_only BEFORE UPDATE OR DELETE ON transaction_events
  FOR EACH ROW EXECUTE FUNCTION reject_append_only_change()
-- statement
ALTER TABLE postings ADD CONSTRAINT postings_transaction_fk FOREIGN KEY (transaction_id) REFERENCES transactions (id)
-- statement
CREATE INDEX postings_transaction_idx ON postings (transaction_id) WHERE transaction_id IS NOT NULL
-- statement
CREATE TABLE idempotency_keys (
  seller_id bigint NOT NULL REFERENCES sellers (id),
  endpoint text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  -- null while the first request runs
  response_status integer,
  response_body text,
  locked_until timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (seller_id, endpoint, key)
)
-- statement
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at)
