-- One connector shape (CONTRACT §11, §14): the provider of every transaction and cashout is a
-- column, every fact a provider tells the gateway is kept once in one store, and every key the
-- gateway sends a provider carries this installation's own id.

-- This installation's id: 12 of [a-z0-9], made once, so two databases on one provider account
-- (staging and production, a reinstall) never send the same key.
CREATE TABLE installation (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  installation_id text NOT NULL CHECK (installation_id ~ '^[a-z0-9]{12}$'),
  created_at timestamptz NOT NULL DEFAULT now()
)
-- statement
INSERT INTO installation (installation_id)
SELECT string_agg(substr('abcdefghijklmnopqrstuvwxyz0123456789', 1 + floor(random() * 36)::int, 1), '') FROM generate_series(1, 12)
-- statement
-- The connector that made each transaction and cashout; what is sent to it later is routed by it.
ALTER TABLE transactions ADD COLUMN provider text
-- statement
UPDATE transactions SET provider = CASE
  WHEN payment_method = 'PIX' THEN 'api-pix'
  WHEN provider_data @> '{"provider": "adyen"}' THEN 'adyen'
  ELSE 'sandbox' END
-- statement
ALTER TABLE transactions ALTER COLUMN provider SET NOT NULL
-- statement
ALTER TABLE cashouts ADD COLUMN provider text NOT NULL DEFAULT 'sandbox'
-- statement
ALTER TABLE cashouts ALTER COLUMN provider DROP DEFAULT
-- statement
UPDATE transactions SET provider_data = provider_data - 'provider' WHERE provider_data ? 'provider'
-- statement
DROP INDEX transactions_card_external_id
-- statement
-- A provider names a payment by its own id (pspReference, txid) or by the one it paid with (endToEndId).
CREATE INDEX transactions_provider_external_idx ON transactions (provider, external_transaction_id)
-- statement
-- Every fact a provider told the gateway, once (by the provider's own identity of it), with the
-- sale, refund or cashout it concerns and what became of it (CONTRACT §14). `fact` is the typed
-- fact as the connector read it, applied again from here while it is held.
CREATE TABLE provider_events (
  id bigserial PRIMARY KEY,
  provider text NOT NULL,
  identity text NOT NULL,
  kind text NOT NULL,
  state text NOT NULL CHECK (state IN ('applied', 'held', 'needs_operator')),
  reason text,
  fact jsonb NOT NULL,
  transaction_id bigint REFERENCES transactions (id),
  refund_id bigint REFERENCES refunds (id),
  cashout_id bigint REFERENCES cashouts (id),
  amount bigint,
  external_reference text,
  -- A call the gateway owes the provider because of this fact: a capture, or money a sale cannot
  -- take sent back; made after the commit, sent again until the provider has it.
  followup text CHECK (followup IN ('CAPTURE', 'RETURN')),
  followup_status text CHECK (followup_status IN ('TO_SEND', 'SENT', 'DONE', 'REFUSED')),
  followup_detail text,
  -- The key the call is sent with, when it is not the connector's usual one (a call sent before installation ids).
  followup_key text,
  followup_at timestamptz,
  received_at timestamptz NOT NULL,
  applied_at timestamptz,
  resolved_at timestamptz,
  note text,
  -- A held fact: when it was last tried, and whether its sale moved since (it may apply now; the
  -- move sets this in its own statement, so the retry job takes these first and none is starved).
  tried_at timestamptz,
  sale_moved boolean NOT NULL DEFAULT false,
  UNIQUE (provider, identity),
  CHECK ((followup IS NULL) = (followup_status IS NULL)),
  CHECK (state <> 'applied' OR applied_at IS NOT NULL),
  CHECK (state <> 'held' OR applied_at IS NULL)
)
-- statement
CREATE INDEX provider_events_held_idx ON provider_events (transaction_id, id) WHERE state = 'held'
-- statement
CREATE INDEX provider_events_state_idx ON provider_events (state, id)
-- statement
CREATE INDEX provider_events_followups_idx ON provider_events (followup_at) WHERE followup_status IN ('TO_SEND', 'SENT')
-- statement
CREATE INDEX provider_events_reference_idx ON provider_events (provider, external_reference)
-- statement
-- Adyen's notification items, as they were kept.
INSERT INTO provider_events (provider, identity, kind, state, reason, fact, transaction_id, amount, external_reference,
  followup, followup_status, followup_key, followup_at, received_at, applied_at)
SELECT 'adyen', psp_reference || ':' || event_code || ':' || success,
  CASE WHEN event_code IN ('NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK', 'PREARBITRATION_LOST') THEN 'CHARGEBACK'
    WHEN event_code IN ('REFUND', 'REFUND_FAILED') THEN 'REFUND' WHEN event_code IN ('CAPTURE', 'CAPTURE_FAILED') THEN 'CAPTURE'
    WHEN event_code IN ('AUTHORISATION', 'CANCELLATION') THEN event_code ELSE 'NOTICE' END,
  CASE WHEN outcome LIKE 'FOR THE OPERATOR:%' THEN 'needs_operator' ELSE 'applied' END,
  CASE WHEN outcome LIKE 'FOR THE OPERATOR:%' THEN trim(substr(outcome, 18)) END,
  jsonb_build_object('kind', 'NOTICE', 'what', outcome, 'paymentId', coalesce(nullif(original_reference, ''), psp_reference), 'source', jsonb_build_object('pspReference', psp_reference, 'eventCode', event_code,
    'success', success, 'originalReference', original_reference, 'merchantReference', merchant_reference, 'currency', currency)),
  transaction_id, amount, psp_reference,
  CASE WHEN followup IS NOT NULL THEN 'RETURN' END,
  CASE WHEN followup IS NULL THEN NULL WHEN followup_done_at IS NULL THEN 'TO_SEND' ELSE 'DONE' END,
  CASE WHEN followup IS NOT NULL THEN 'reversal-' || coalesce(nullif(original_reference, ''), psp_reference) END,
  CASE WHEN followup IS NOT NULL THEN coalesce(followup_done_at, received_at) END,
  received_at, CASE WHEN outcome NOT LIKE 'FOR THE OPERATOR:%' THEN received_at END
FROM adyen_notifications ORDER BY received_at
-- statement
-- Every Pix received: PAID applied; RETURNED shown to the operator with its return.
INSERT INTO provider_events (provider, identity, kind, state, reason, fact, transaction_id, amount, external_reference,
  followup, followup_status, followup_detail, followup_key, followup_at, received_at, applied_at)
SELECT 'api-pix', end_to_end_id, 'PIX_RECEIVED',
  CASE outcome WHEN 'PAID' THEN 'applied' ELSE 'needs_operator' END,
  CASE outcome WHEN 'RETURNED' THEN return_reason END,
  jsonb_build_object('kind', 'PIX_RECEIVED', 'endToEndId', end_to_end_id, 'txid', txid, 'amount', amount, 'paidAt', paid_at),
  transaction_id, amount, end_to_end_id,
  CASE outcome WHEN 'RETURNED' THEN 'RETURN' END,
  CASE return_status WHEN 'TO_SEND' THEN 'TO_SEND' WHEN 'EM_PROCESSAMENTO' THEN 'SENT' WHEN 'DEVOLVIDO' THEN 'DONE' WHEN 'NAO_REALIZADO' THEN 'REFUSED' END,
  return_detail, return_id, CASE outcome WHEN 'RETURNED' THEN created_at END,
  created_at, CASE outcome WHEN 'PAID' THEN created_at END
FROM pix_received ORDER BY created_at
-- statement
-- MED devoluções: applied, or held until their sale can move.
INSERT INTO provider_events (provider, identity, kind, state, reason, fact, transaction_id, external_reference, received_at, applied_at)
SELECT 'api-pix', m.end_to_end_id || '/' || m.devolucao_id, 'MED',
  CASE WHEN m.applied_at IS NULL THEN 'held' ELSE 'applied' END,
  CASE WHEN m.applied_at IS NULL THEN 'a refund of the sale is pending' END,
  jsonb_build_object('kind', 'DISPUTE', 'scheme', 'MED', 'step', 'lost', 'endToEndId', m.end_to_end_id, 'devolucaoId', m.devolucao_id),
  t.id, m.end_to_end_id, m.created_at, m.applied_at
FROM pix_med_devolucoes m LEFT JOIN transactions t ON t.pix_end_to_end_id = m.end_to_end_id ORDER BY m.created_at
-- statement
DROP TABLE adyen_notifications
-- statement
DROP TABLE pix_received
-- statement
DROP TABLE pix_med_devolucoes
-- statement
-- The old tables' names, as views of the store, for the operator's queries.
CREATE VIEW adyen_notifications AS
SELECT fact->'source'->>'pspReference' AS psp_reference, fact->'source'->>'eventCode' AS event_code,
  (fact->'source'->>'success')::boolean AS success, fact->'source'->>'originalReference' AS original_reference,
  fact->'source'->>'merchantReference' AS merchant_reference, amount, fact->'source'->>'currency' AS currency, transaction_id,
  CASE state WHEN 'applied' THEN 'applied' WHEN 'held' THEN 'held: ' || reason ELSE 'FOR THE OPERATOR: ' || reason END AS outcome,
  CASE followup WHEN 'RETURN' THEN 'REVERSAL' ELSE followup END AS followup,
  CASE WHEN followup_status IN ('DONE', 'REFUSED') THEN followup_at END AS followup_done_at,
  received_at
FROM provider_events WHERE provider = 'adyen'
-- statement
CREATE VIEW pix_received AS
SELECT external_reference AS end_to_end_id, fact->>'txid' AS txid, amount, (fact->>'paidAt')::timestamptz AS paid_at, transaction_id,
  CASE WHEN followup = 'RETURN' THEN 'RETURNED' ELSE 'PAID' END AS outcome,
  CASE WHEN followup = 'RETURN' THEN reason END AS return_reason,
  CASE WHEN followup = 'RETURN' THEN coalesce(followup_key, (SELECT installation_id FROM installation) || 'rt' || right(external_reference, 21)) END AS return_id,
  CASE followup_status WHEN 'TO_SEND' THEN 'TO_SEND' WHEN 'SENT' THEN 'EM_PROCESSAMENTO' WHEN 'DONE' THEN 'DEVOLVIDO' WHEN 'REFUSED' THEN 'NAO_REALIZADO' END
    AS return_status,
  followup_detail AS return_detail, received_at AS created_at
FROM provider_events WHERE provider = 'api-pix' AND kind = 'PIX_RECEIVED'
-- statement
CREATE VIEW pix_med_devolucoes AS
SELECT external_reference AS end_to_end_id, fact->>'devolucaoId' AS devolucao_id, applied_at, received_at AS created_at
FROM provider_events WHERE provider = 'api-pix' AND kind = 'MED'
-- statement
-- A key claimed by a request that calls a provider before its write: held by its holder's token
-- until the lease ends (the holder renews it while it works), so a crashed holder frees it soon.
-- No foreign key: a claim lives seconds, and must not wait on a lock of its seller's row.
CREATE TABLE idempotency_claims (
  seller_id bigint NOT NULL,
  endpoint text NOT NULL,
  key text NOT NULL,
  claimed_by text NOT NULL,
  claimed_until timestamptz NOT NULL,
  PRIMARY KEY (seller_id, endpoint, key)
)
