-- A claim carries the reference its provider call is made with (src/http/idempotency-claim.ts):
-- a request that takes a lapsed claim over with the same body (its holder crashed, or could not
-- renew its lease while the database stalled) calls the provider with the same reference, and the
-- provider answers with the charge the first holder made instead of making a second one. A body
-- that differs gets a reference of its own, so one reference never stands for two different
-- charges. A reference serves for `p_keep` from when it was drawn (`reference_at`), however often
-- its key is taken over meanwhile, so a charge found again has lived at most that long. Claims of
-- the previous release have none of these columns, and are taken over with a new reference.
ALTER TABLE idempotency_claims ADD COLUMN request_hash text, ADD COLUMN reference text, ADD COLUMN reference_at timestamptz
-- statement
-- claim_idempotency_keys (migration 021), with each claim's request hash and a fresh reference in,
-- and the reference in force out: the claim's own when it is taken over with the same body within
-- `p_keep` of the reference's drawing (a charge made under it is still payable then), a fresh one otherwise.
CREATE FUNCTION claim_idempotency_keys_with_references(p_claims jsonb, p_lease interval, p_keep interval)
RETURNS TABLE (ord integer, claimed boolean, claim_reference text, request_hash text, response_status integer, response_body text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  c record;
  started timestamptz := clock_timestamp();
  got jsonb := '{}';
  ref text;
BEGIN
  FOR c IN SELECT x.* FROM jsonb_to_recordset(p_claims) AS x (seller_id bigint, endpoint text, key text, token text, hash text, reference text)
    ORDER BY x.seller_id, x.endpoint, x.key
  LOOP
    INSERT INTO idempotency_claims AS y (seller_id, endpoint, key, claimed_by, claimed_until, request_hash, reference, reference_at)
    VALUES (c.seller_id, c.endpoint, c.key, c.token, clock_timestamp() + p_lease, c.hash, c.reference, clock_timestamp()) ON CONFLICT DO NOTHING
    RETURNING y.reference INTO ref;
    IF NOT FOUND THEN
      -- Every right-hand side reads the row as it was: whether its reference is kept is decided once.
      UPDATE idempotency_claims y SET claimed_by = c.token, claimed_until = clock_timestamp() + p_lease,
        reference = CASE WHEN y.request_hash = c.hash AND y.reference_at > clock_timestamp() - p_keep THEN y.reference ELSE c.reference END,
        reference_at = CASE WHEN y.request_hash = c.hash AND y.reference_at > clock_timestamp() - p_keep THEN y.reference_at ELSE clock_timestamp() END,
        request_hash = c.hash
      WHERE y.seller_id = c.seller_id AND y.endpoint = c.endpoint AND y.key = c.key AND y.claimed_until < clock_timestamp()
        AND y.ctid = (SELECT z.ctid FROM idempotency_claims z WHERE z.seller_id = c.seller_id AND z.endpoint = c.endpoint AND z.key = c.key
          FOR UPDATE SKIP LOCKED)
      RETURNING y.reference INTO ref;
    END IF;
    IF FOUND THEN
      got := got || jsonb_build_object(c.token, ref);
    END IF;
  END LOOP;
  IF clock_timestamp() - started > p_lease / 10 THEN
    FOR c IN SELECT x.* FROM jsonb_to_recordset(p_claims) AS x (seller_id bigint, endpoint text, key text, token text) WHERE got ? x.token
    LOOP
      UPDATE idempotency_claims y SET claimed_until = clock_timestamp() + p_lease
      WHERE y.seller_id = c.seller_id AND y.endpoint = c.endpoint AND y.key = c.key AND y.claimed_by = c.token;
    END LOOP;
  END IF;
  FOR c IN SELECT x.* FROM jsonb_to_recordset(p_claims) AS x (n integer, seller_id bigint, endpoint text, key text, token text, now timestamptz)
  LOOP
    IF NOT (got ? c.token) THEN
      RETURN QUERY SELECT c.n, false, NULL::text, NULL::text, NULL::integer, NULL::text;
      CONTINUE;
    END IF;
    RETURN QUERY SELECT c.n, true, NULL::text, k.request_hash, k.response_status, k.response_body FROM idempotency_keys k
      WHERE k.seller_id = c.seller_id AND k.endpoint = c.endpoint AND k.key = c.key AND k.expires_at > c.now;
    IF FOUND THEN
      DELETE FROM idempotency_claims y WHERE y.seller_id = c.seller_id AND y.endpoint = c.endpoint AND y.key = c.key AND y.claimed_by = c.token;
    ELSE
      RETURN QUERY SELECT c.n, true, got ->> c.token, NULL::text, NULL::integer, NULL::text;
    END IF;
  END LOOP;
END
$$
