-- Boletos registered at an issuer (CONTRACT §11.4): the slip's PDF, the Pix of a boleto híbrido, whether
-- the charge is still payable at the issuer, and when the reconciliation job next reads it.
ALTER TABLE transactions ADD COLUMN boleto_pdf_url text
-- statement
ALTER TABLE transactions ADD COLUMN boleto_pix_code text
-- statement
-- ACTIVE: payable at the issuer; REMOVED: cancelled there after the sale was (null: not registered anywhere).
ALTER TABLE transactions ADD COLUMN boleto_charge text CHECK (boleto_charge IN ('ACTIVE', 'REMOVED'))
-- statement
ALTER TABLE transactions ADD COLUMN next_check_at timestamptz
-- statement
CREATE INDEX transactions_next_check_idx ON transactions (next_check_at) WHERE next_check_at IS NOT NULL
-- statement
-- The embedded PSP's boleto charges (Efí's Cobranças API): the code it issued, the Pix beside it, its history.
CREATE TABLE sandbox_psp_charges (
  charge_id bigint PRIMARY KEY,
  custom_id text,
  notification_url text,
  total_cents bigint NOT NULL CHECK (total_cents > 0),
  status text NOT NULL,
  barcode text NOT NULL,
  pix_txid text UNIQUE,
  pix_code text,
  expire_at date NOT NULL,
  paid_cents bigint,
  request jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  -- [{ id, status, previous, value?, at }], oldest first: what a notification's history tells.
  history jsonb NOT NULL DEFAULT '[]'
)
-- statement
CREATE SEQUENCE sandbox_psp_charge_ids START WITH 1000001
-- statement
-- A notification token names one charge; reading it answers that charge's history.
CREATE TABLE sandbox_psp_charge_notifications (
  token text PRIMARY KEY,
  charge_id bigint NOT NULL REFERENCES sandbox_psp_charges (charge_id),
  created_at timestamptz NOT NULL
)
-- statement
CREATE INDEX transactions_boleto_charge_idx ON transactions (id) WHERE boleto_charge = 'ACTIVE' AND status = 'CANCELADO'
