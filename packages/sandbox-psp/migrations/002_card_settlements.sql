-- The sandbox card processor's own record (CONTRACT §15): each card movement it booked, in the journal
-- types of Adyen's Settlement details report it serves them as, so that a sandbox account is
-- reconciled as an Adyen one is. Booked once per type and modification (a step told twice is kept once).
CREATE TABLE sandbox_psp.card_settlements (
  seq bigserial PRIMARY KEY,
  type text NOT NULL CHECK (type IN ('Settled', 'Refunded', 'Chargeback', 'SecondChargeback', 'ChargebackReversed')),
  psp_reference text NOT NULL,
  merchant_reference text NOT NULL,
  -- the modification's own reference: a refund's; the payment's for its settlement
  modification_reference text NOT NULL,
  amount_cents bigint NOT NULL CHECK (amount_cents > 0),
  fee_cents bigint NOT NULL DEFAULT 0 CHECK (fee_cents >= 0),
  booked_at timestamptz NOT NULL,
  UNIQUE (type, modification_reference)
)
-- statement
CREATE INDEX sandbox_psp_card_settlements_booked_idx ON sandbox_psp.card_settlements (booked_at, seq)
