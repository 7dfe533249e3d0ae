-- Efí's records of the account (CONTRACT §15), as the embedded PSP answers them: the list of sent
-- Pix, the boletos paid on a day, the balance; and the faults a test arms at the provider's side.
--
-- A send booked twice (the sendTwiceNext fault) is two sent Pix of one idEnvio, so idEnvio is no
-- longer the key: the end-to-end id (already unique) is. The request's own row stays the only one
-- that is not `duplicate`, so reads by idEnvio and the 409 of a second send still find one row.
-- Databases whose tables migration 027 of the gateway moved here name the key otherwise: it is
-- looked up.
DO $$
DECLARE
  pk text;
BEGIN
  SELECT conname INTO pk FROM pg_constraint WHERE conrelid = 'sandbox_psp.sent'::regclass AND contype = 'p';
  IF pk IS NOT NULL THEN
    EXECUTE format('ALTER TABLE sandbox_psp.sent DROP CONSTRAINT %I', pk);
  END IF;
END $$
-- statement
ALTER TABLE sandbox_psp.sent ADD COLUMN duplicate boolean NOT NULL DEFAULT false
-- statement
CREATE UNIQUE INDEX sandbox_psp_sent_id_envio_idx ON sandbox_psp.sent (id_envio) WHERE NOT duplicate
-- statement
-- GET /v2/gn/pix/enviados pages by request time; seq breaks ties so that pages never overlap.
ALTER TABLE sandbox_psp.sent ADD COLUMN seq bigserial NOT NULL UNIQUE
-- statement
CREATE INDEX sandbox_psp_sent_solicitacao_idx ON sandbox_psp.sent (solicitacao, seq)
-- statement
-- When a boleto was paid, for GET /v1/charges?date_of=payment and its entries' payment.paid_at.
ALTER TABLE sandbox_psp.charges ADD COLUMN paid_at timestamptz
-- statement
UPDATE sandbox_psp.charges c SET paid_at = (
  SELECT min((h ->> 'at')::timestamptz) FROM jsonb_array_elements(c.history) h WHERE h ->> 'status' = 'paid')
WHERE c.status IN ('paid', 'settled')
-- statement
CREATE INDEX sandbox_psp_charges_paid_at_idx ON sandbox_psp.charges (paid_at) WHERE paid_at IS NOT NULL
