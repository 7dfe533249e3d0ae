-- A key claimed before a provider call (src/http/idempotency-claim.ts), in one round trip: the claim
-- (a fresh one, or one whose holder's lease lapsed), then its answer looked for. Each statement of a
-- volatile function reads a snapshot of its own, so the look-up sees every answer committed before
-- the claim was taken: an answer and its claim's end commit together, so either the claim was
-- still there (held) or its answer is (replayed). A replay's claim is dropped before it is ever seen.
CREATE FUNCTION claim_idempotency_key(p_seller bigint, p_endpoint text, p_key text, p_token text, p_lease interval, p_now timestamptz)
RETURNS TABLE (claimed boolean, request_hash text, response_status integer, response_body text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  INSERT INTO idempotency_claims (seller_id, endpoint, key, claimed_by, claimed_until)
  VALUES (p_seller, p_endpoint, p_key, p_token, clock_timestamp() + p_lease) ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    -- A lapsed claim is taken over. One that another request's write is ending right now is
    -- skipped (SKIP LOCKED) and reads as held; usually, though, the insert above waited for that
    -- write to end, found the key free, and the look-up below replays its answer.
    UPDATE idempotency_claims c SET claimed_by = p_token, claimed_until = clock_timestamp() + p_lease
    WHERE c.seller_id = p_seller AND c.endpoint = p_endpoint AND c.key = p_key AND c.claimed_until < clock_timestamp()
      AND c.ctid = (SELECT x.ctid FROM idempotency_claims x WHERE x.seller_id = p_seller AND x.endpoint = p_endpoint AND x.key = p_key
        FOR UPDATE SKIP LOCKED);
    IF NOT FOUND THEN
      RETURN QUERY SELECT false, NULL::text, NULL::integer, NULL::text;
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT true, k.request_hash, k.response_status, k.response_body FROM idempotency_keys k
    WHERE k.seller_id = p_seller AND k.endpoint = p_endpoint AND k.key = p_key AND k.expires_at > p_now;
  IF FOUND THEN
    DELETE FROM idempotency_claims c WHERE c.seller_id = p_seller AND c.endpoint = p_endpoint AND c.key = p_key AND c.claimed_by = p_token;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, NULL::text, NULL::integer, NULL::text;
END
$$
