-- The platform's money per provider account (CONTRACT §15): customer_funds:<account> is what the
-- platform holds at that account, provider_fees:<account> what the provider charged the platform
-- there. A line that moves an account's money names the provider's reference of the movement.
ALTER TABLE journal_lines DROP CONSTRAINT journal_lines_account_check
-- statement
ALTER TABLE journal_lines ADD CONSTRAINT journal_lines_account_check CHECK (
  account IN ('available', 'blocked', 'customer_funds', 'fee_revenue', 'payouts', 'dispute_losses', 'unclaimed_funds')
  OR account ~ '^(customer_funds|provider_fees):[a-z-]+(:[a-z0-9]+)?$'
)
-- statement
ALTER TABLE journal_lines ADD COLUMN reference text
-- statement
-- A provider's fee is the platform's alone: its posting belongs to no seller.
ALTER TABLE postings ALTER COLUMN seller_id DROP NOT NULL
-- statement
-- History is never rewritten: a posting of before the split is followed by one that moves its
-- customer_funds and payouts lines to its account (ACCOUNT_SPLIT), once.
ALTER TABLE postings ADD COLUMN splits bigint REFERENCES postings (id)
-- statement
CREATE UNIQUE INDEX postings_splits_idx ON postings (splits) WHERE splits IS NOT NULL
-- statement
-- Reconciliation reads an account's journal movements of a day.
CREATE INDEX journal_lines_funds_idx ON journal_lines (account, created_at) WHERE account LIKE 'customer_funds:%'
-- statement
-- The account a boleto's Pix was received at, when it is not the boleto's own.
ALTER TABLE transactions ADD COLUMN paid_account text
-- statement
-- A boleto's charge id, as its issuer's record names it (the twin of its Pix in the PSP's).
CREATE INDEX transactions_boleto_external_idx ON transactions (external_transaction_id) WHERE payment_method = 'BOLETO'
-- statement
-- Each account's record as the provider keeps it, once read (Adyen's reports are sent once).
CREATE TABLE IF NOT EXISTS provider_movements (
  account text NOT NULL,
  id text NOT NULL,
  kind text NOT NULL,
  reference text NOT NULL,
  amount bigint NOT NULL,
  at timestamptz NOT NULL,
  detail jsonb,
  read_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account, id)
)
-- statement
CREATE INDEX IF NOT EXISTS provider_movements_at_idx ON provider_movements (account, at)
-- statement
CREATE INDEX provider_movements_reference_idx ON provider_movements (account, reference)
-- statement
-- A fee of the record is posted once: its line names the record's row.
CREATE UNIQUE INDEX journal_lines_fees_idx ON journal_lines (account, reference) WHERE account LIKE 'provider_fees:%'
-- statement
-- A day's reconciliation of one account (its São Paulo date).
CREATE TABLE reconciliation_days (
  account text NOT NULL,
  day date NOT NULL,
  connector text NOT NULL,
  state text NOT NULL CHECK (state IN ('matched', 'mismatched', 'pending', 'unreadable')),
  provider_movements integer NOT NULL DEFAULT 0,
  ledger_movements integer NOT NULL DEFAULT 0,
  matched integer NOT NULL DEFAULT 0,
  provider_total bigint NOT NULL DEFAULT 0,
  ledger_total bigint NOT NULL DEFAULT 0,
  provider_fees bigint NOT NULL DEFAULT 0,
  provider_balance bigint,
  ledger_balance bigint,
  findings jsonb NOT NULL DEFAULT '[]',
  finding_count integer NOT NULL DEFAULT 0,
  error text,
  tries integer NOT NULL DEFAULT 0,
  next_try_at timestamptz,
  reconciled_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (day, account)
)
-- statement
CREATE INDEX reconciliation_days_retry_idx ON reconciliation_days (next_try_at) WHERE state IN ('pending', 'unreadable')
-- statement
-- Postings of before the split, below this id, still to be split by a start (it needs the accounts
-- each start records); 0 once none is left.
ALTER TABLE installation ADD COLUMN funds_split_before bigint NOT NULL DEFAULT 0
-- statement
UPDATE installation SET funds_split_before = (SELECT coalesce(max(id), 0) + 1 FROM postings)
-- statement
-- A Pix a sale cannot take is owed back once and returned once (src/ledger/unclaimed.ts).
CREATE UNIQUE INDEX journal_lines_unclaimed_idx ON journal_lines (reference, (amount > 0)) WHERE account = 'unclaimed_funds'
