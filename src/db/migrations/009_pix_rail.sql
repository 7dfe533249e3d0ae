-- The PIX rail (CONTRACT §11.1). A sale's charge at the PSP: STATIC (a BR Code with our key, no call),
-- ACTIVE (an immediate charge, PUT /cob) until REMOVED (PATCH /cob, once the sale is cancelled).
ALTER TABLE transactions ADD COLUMN pix_charge text CHECK (pix_charge IN ('STATIC', 'ACTIVE', 'REMOVED'))
-- statement
UPDATE transactions SET pix_charge = 'STATIC' WHERE payment_method = 'PIX'
-- statement
CREATE INDEX transactions_pix_charge_idx ON transactions (id) WHERE pix_charge = 'ACTIVE' AND status = 'CANCELADO'
-- statement
-- The Pix that paid the sale: a devolução (refund, MED) names it.
ALTER TABLE transactions ADD COLUMN pix_end_to_end_id text UNIQUE
-- statement
-- Every Pix received, once per endToEndId: it paid a sale, or it is returned whole (the sale was no
-- longer PENDENTE, another amount, an unknown txid). A return is sent after the row commits and
-- resent until the PSP has it.
CREATE TABLE pix_received (
  end_to_end_id text PRIMARY KEY,
  txid text,
  amount bigint NOT NULL CHECK (amount > 0),
  paid_at timestamptz NOT NULL,
  transaction_id bigint REFERENCES transactions (id),
  outcome text NOT NULL CHECK (outcome IN ('PAID', 'RETURNED')),
  return_reason text,
  return_id text,
  return_status text CHECK (return_status IN ('TO_SEND', 'EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO')),
  return_detail text,
  created_at timestamptz NOT NULL,
  CHECK ((outcome = 'RETURNED') = (return_status IS NOT NULL))
)
-- statement
CREATE INDEX pix_received_open_returns_idx ON pix_received (created_at) WHERE return_status IN ('TO_SEND', 'EM_PROCESSAMENTO')
-- statement
-- Where reconciliation stopped listing received Pix; the next window starts before it (overlap).
CREATE TABLE pix_rail_state (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  reconciled_until timestamptz NOT NULL
)
-- statement
-- Devoluções a MED made (natureza MED_*): recorded when first seen, applied to the sale (MED lost) as
-- soon as it can move (not while one of its refunds is PENDING), retried by reconciliation until then.
CREATE TABLE pix_med_devolucoes (
  end_to_end_id text NOT NULL,
  devolucao_id text NOT NULL,
  applied_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (end_to_end_id, devolucao_id)
)
-- statement
CREATE INDEX pix_med_devolucoes_open_idx ON pix_med_devolucoes (created_at) WHERE applied_at IS NULL
