-- Standard Webhooks signing secrets (CONTRACT §13), one current per seller (expires_at NULL) and,
-- for 24 h after a rotation, the one it replaced. Kept in clear: the gateway signs with them and the
-- seller reads the current one back (GET /api/signing-secret); they are never a credential here.
CREATE TABLE signing_secrets (
  id bigserial PRIMARY KEY,
  seller_id bigint NOT NULL REFERENCES sellers (id),
  secret text NOT NULL CHECK (secret LIKE 'whsec\_%'),
  created_at timestamptz NOT NULL,
  expires_at timestamptz
)
-- statement
CREATE UNIQUE INDEX signing_secrets_current_idx ON signing_secrets (seller_id) WHERE expires_at IS NULL
-- statement
CREATE INDEX signing_secrets_seller_idx ON signing_secrets (seller_id, id DESC)
-- statement
-- Sellers created before this migration get theirs here: 32 bytes from two version-4 UUIDs (244
-- random bits from the server's strong random source; neither PGlite nor a bare PostgreSQL has
-- pgcrypto). New sellers get 32 bytes of node:crypto randomness (sellers-repo.ts).
INSERT INTO signing_secrets (seller_id, secret, created_at)
SELECT id, 'whsec_' || encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64'), now()
FROM sellers
