-- Fee schedule defaults of the platform, and each sale's reserve still held.

CREATE TABLE platform_settings (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  fee_schedule jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
)
-- statement
-- The part of the sale's reserve not yet released (CONTRACT §5 reserveHeld), and when it is due.
ALTER TABLE transactions ADD COLUMN reserve_held bigint NOT NULL DEFAULT 0 CHECK (reserve_held >= 0)
-- statement
ALTER TABLE transactions ADD COLUMN reserve_release_at timestamptz
-- statement
CREATE INDEX transactions_reserve_release_idx ON transactions (reserve_release_at) WHERE reserve_held > 0
