-- Sellers, their API keys, and the double-entry ledger.
-- Statements are separated by "-- statement" lines (prepared statements take one command each).

CREATE TABLE sellers (
  id bigserial PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL,
  document text,
  api_withdrawal_enabled boolean NOT NULL DEFAULT true,
  transfer_allowed boolean NOT NULL DEFAULT true,
  fee_schedule jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
)
-- statement
CREATE TABLE api_keys (
  public_key text PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  private_key_digest bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
)
-- statement
CREATE INDEX api_keys_seller_idx ON api_keys (seller_id)
-- statement
-- Projection of the journal: one row per seller, updated in the same statement as each posting.
CREATE TABLE balances (
  seller_id bigint PRIMARY KEY REFERENCES sellers (id),
  available bigint NOT NULL DEFAULT 0,
  blocked bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
)
-- statement
CREATE TABLE postings (
  id bigserial PRIMARY KEY,
  kind text NOT NULL,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  transaction_id bigint,
  cashout_id bigint,
  created_at timestamptz NOT NULL DEFAULT now()
)
-- statement
CREATE TABLE journal_lines (
  id bigserial PRIMARY KEY,
  posting_id bigint NOT NULL REFERENCES postings (id),
  account text NOT NULL CHECK (account IN ('available', 'blocked', 'customer_funds', 'fee_revenue', 'payouts', 'dispute_losses')),
  -- set for a seller's own accounts (available, blocked), null for the platform's
  seller_id bigint REFERENCES sellers (id),
  amount bigint NOT NULL CHECK (amount <> 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((account IN ('available', 'blocked')) = (seller_id IS NOT NULL))
)
-- statement
CREATE INDEX journal_lines_posting_idx ON journal_lines (posting_id)
-- statement
CREATE INDEX journal_lines_seller_idx ON journal_lines (seller_id, id) WHERE seller_id IS NOT NULL
-- statement
-- The application checks every posting before it writes it; the database checks again, so no code
-- path, present or future, can leave an unbalanced posting behind.
CREATE FUNCTION journal_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_lines GROUP BY posting_id HAVING sum(amount) <> 0) THEN
    RAISE EXCEPTION 'unbalanced posting' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$
-- statement
CREATE TRIGGER journal_lines_balanced AFTER INSERT ON journal_lines
  REFERENCING NEW TABLE AS new_lines FOR EACH STATEMENT EXECUTE FUNCTION journal_check_balanced()
-- statement
CREATE FUNCTION reject_append_only_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$
-- statement
CREATE TRIGGER journal_lines_append_only BEFORE UPDATE OR DELETE ON journal_lines
  FOR EACH ROW EXECUTE FUNCTION reject_append_only_change()
-- statement
CREATE TRIGGER journal_lines_no_truncate BEFORE TRUNCATE ON journal_lines
  FOR EACH STATEMENT EXECUTE FUNCTION reject_append_only_change()
-- statement
CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings
  FOR EACH ROW EXECUTE FUNCTION reject_append_only_change()
-- statement
CREATE TRIGGER postings_no_truncate BEFORE TRUNCATE ON postings
  FOR EACH STATEMENT EXECUTE FUNCTION reject_append_only_change()
