-- Provider accounts (CONTRACT §11): every sale, refund and cashout records the account it was made
-- with (a connector with its credentials, by a stable id), and everything after it goes to that
-- account, whatever is configured today. Rows made before have none: each start records on them the
-- account then configured for their connector (src/providers/accounts.ts); the partial indexes keep
-- that look cheap once they are done.
ALTER TABLE transactions ADD COLUMN account text
-- statement
ALTER TABLE refunds ADD COLUMN account text
-- statement
ALTER TABLE cashouts ADD COLUMN account text
-- statement
CREATE INDEX transactions_without_account_idx ON transactions (id) WHERE account IS NULL
-- statement
CREATE INDEX refunds_without_account_idx ON refunds (id) WHERE account IS NULL
-- statement
CREATE INDEX cashouts_without_account_idx ON cashouts (id) WHERE account IS NULL
-- statement
-- A sale's capture is asked by one trigger: the followup of the first fact that owes it. Whether a
-- sale has one is looked up by the apply step.
CREATE INDEX provider_events_capture_idx ON provider_events (transaction_id) WHERE followup = 'CAPTURE'
-- statement
-- Captures the previous release owed by its own sweep (an authorised Adyen payment whose capture
-- failed in its request, which only manual capture asks) become followups, so none is left
-- uncaptured by the change of trigger.
INSERT INTO provider_events (provider, identity, kind, state, fact, transaction_id, amount, external_reference,
  followup, followup_status, followup_at, received_at, applied_at)
SELECT 'adyen', 'capture owed by sale ' || t.id, 'CARD_ANSWER', 'applied',
  jsonb_build_object('kind', 'CARD_ANSWER', 'sale', jsonb_build_object('ids', jsonb_build_array(t.external_transaction_id), 'saleId', t.id,
    'referenceSuffices', false), 'paymentId', t.external_transaction_id, 'result', 'AUTHORISED', 'captureByGateway', true, 'data', '{}'::jsonb),
  t.id, t.amount, t.external_transaction_id, 'CAPTURE', 'TO_SEND', now(), now(), now()
FROM transactions t
WHERE t.provider = 'adyen' AND t.payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') AND t.status IN ('EM_PROCESSAMENTO', 'FALHA')
  AND t.provider_data->>'authorised' = 'true' AND t.provider_data->>'captureRef' IS NULL
  AND t.provider_data->>'error' LIKE 'capture not sent%'
  AND NOT EXISTS (SELECT 1 FROM provider_events e WHERE e.transaction_id = t.id AND e.followup = 'CAPTURE')
