-- The seller panel (CONTRACT §12): one account per seller, reached by a one-use invite; sessions and
-- secrets stored as SHA-256 digests (they are high-entropy), passwords with scrypt.
CREATE TABLE panel_accounts (
  seller_id bigint PRIMARY KEY REFERENCES sellers (id),
  email text NOT NULL,
  password_hash text NOT NULL,
  -- Failed logins: counted within a 15-minute window that starts at the first failure.
  failures integer NOT NULL DEFAULT 0,
  failures_since timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
)
-- statement
CREATE UNIQUE INDEX panel_accounts_email_idx ON panel_accounts (lower(email))
-- statement
CREATE TABLE panel_invites (
  token_digest bytea PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
)
-- statement
CREATE TABLE panel_sessions (
  id_digest bytea PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  ended_at timestamptz
)
-- statement
CREATE INDEX panel_sessions_seller_idx ON panel_sessions (seller_id)
