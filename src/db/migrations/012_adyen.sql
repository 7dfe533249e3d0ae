-- The Adyen card rail (CONTRACT §11.2). Every notification item applied is kept once, by the key
-- Adyen itself repeats (pspReference + eventCode + success): a resent item changes nothing.
CREATE TABLE adyen_notifications (
  psp_reference text NOT NULL,
  event_code text NOT NULL,
  success boolean NOT NULL,
  original_reference text,
  merchant_reference text NOT NULL,
  amount bigint,
  currency text,
  transaction_id bigint REFERENCES transactions (id),
  -- What the gateway made of it, in words, for the operator.
  outcome text NOT NULL,
  -- A call the gateway owes Adyen because of it: money authorised for a sale that cannot take it goes back.
  followup text CHECK (followup IN ('REVERSAL')),
  followup_done_at timestamptz,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (psp_reference, event_code, success)
)
-- statement
CREATE INDEX adyen_notifications_followups ON adyen_notifications (received_at) WHERE followup IS NOT NULL AND followup_done_at IS NULL
-- statement
-- Notifications name the payment by its pspReference, kept as the sale's externalTransactionId.
CREATE INDEX transactions_card_external_id ON transactions (external_transaction_id) WHERE payment_method IN ('CREDIT_CARD', 'DEBIT_CARD')
