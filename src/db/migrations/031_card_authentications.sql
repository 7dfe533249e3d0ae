-- 3-D Secure (CONTRACT §11.2): a card sale sent with `authentication` has one row here, written with
-- the sale. The token is the shopper's capability for the gateway's pages (/checkout/3ds/{token}):
-- random, 192 bits, one sale, usable while the sale is PENDENTE and unexpired.
CREATE TABLE card_authentications (
  transaction_id bigint PRIMARY KEY REFERENCES transactions (id),
  token text NOT NULL UNIQUE,
  -- The seller's page the shopper is sent back to, with saleId and status in its query.
  return_url text NOT NULL,
  -- Not returned by then: the sale is cancelled by the job that expires sales.
  expires_at timestamptz NOT NULL,
  -- What the processor asked the shopper's browser to do (method, url, data for a POST): null until
  -- it answered, and when it asked for nothing.
  action jsonb,
  -- The first return from the issuer, the one that asks the processor for the result; a second
  -- return finds it set and only redirects.
  returned_at timestamptz,
  -- AUTHENTICATED, FAILED (the return's answer was a refusal or an error, or the shopper never came
  -- back) or NOT_ASKED (the processor decided without asking the shopper); null while pending.
  result text CHECK (result IN ('AUTHENTICATED', 'FAILED', 'NOT_ASKED')),
  created_at timestamptz NOT NULL
)
-- statement
-- The authentications still waiting for their shopper, for the expiry job.
CREATE INDEX card_authentications_waiting_idx ON card_authentications (expires_at) WHERE returned_at IS NULL AND result IS NULL
