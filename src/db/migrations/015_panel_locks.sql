-- Panel logins hold under concurrency (CONTRACT §12): `failures` now counts password checks, taken
-- before the hash is checked. A new invite retires the seller's older unused ones.
ALTER TABLE panel_invites ADD COLUMN retired_at timestamptz
-- statement
CREATE INDEX panel_invites_open_idx ON panel_invites (seller_id) WHERE used_at IS NULL AND retired_at IS NULL
