-- A received Pix is matched to a sale of this installation across every connector (CONTRACT §11,
-- "What is ours"): a PIX sale by its charge's txid (its externalTransactionId), a boleto híbrido by
-- the location of its Pix (the issuer makes that charge and its txid, so its dynamic BR Code's
-- location is what we know of it). The location is read from the boleto's BR Code (field 26, its
-- 25), kept beside it.
ALTER TABLE transactions ADD COLUMN boleto_pix_location text GENERATED ALWAYS AS (
  CASE WHEN substr(boleto_pix_code, strpos(lower(boleto_pix_code), '0014br.gov.bcb.pix25') + 20, 2) ~ '^[0-9]{2}$'
    AND strpos(lower(boleto_pix_code), '0014br.gov.bcb.pix25') > 0
  THEN substr(boleto_pix_code, strpos(lower(boleto_pix_code), '0014br.gov.bcb.pix25') + 22,
    substr(boleto_pix_code, strpos(lower(boleto_pix_code), '0014br.gov.bcb.pix25') + 20, 2)::int) END
) STORED
-- statement
CREATE INDEX transactions_boleto_pix_location_idx ON transactions (boleto_pix_location) WHERE boleto_pix_location IS NOT NULL
-- statement
CREATE INDEX transactions_pix_end_to_end_idx ON transactions (pix_end_to_end_id) WHERE pix_end_to_end_id IS NOT NULL
-- statement
-- A Pix no sale of this installation took is never returned automatically (it may be another
-- installation's on a shared PSP account, or a boleto's whose sale is paid): returns that earlier
-- releases planned and never sent are withdrawn and left to the operator.
UPDATE provider_events SET followup = NULL, followup_status = NULL, followup_key = NULL, followup_at = NULL,
  reason = 'not this installation''s'
WHERE kind = 'PIX_RECEIVED' AND transaction_id IS NULL AND followup = 'RETURN' AND followup_status = 'TO_SEND'
