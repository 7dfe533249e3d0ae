-- Keys claimed before a provider call, in groups (src/http/idempotency-claim.ts): the claims that
-- reach the database while it is busy go together in one call, each decided as
-- claim_idempotency_key (migration 020, which processes of the previous release still call)
-- decides one:
--   1. each key is claimed, in key order so that two groups never wait on each other's keys in a
--      circle; a lapsed claim is taken over (one that another request's write is ending right now
--      is skipped, SKIP LOCKED, and reads as held);
--   2. a lease runs from about the commit that shows its claim: when claiming took long (a key
--      waited on another's lock), the group's leases start again;
--   3. only then, every claim of the group made, are the answers looked for, each with a snapshot
--      of its own taken after the claims (an answer and its claim's end commit together, so either
--      the claim was still there or its answer is); a replay's claim is dropped.
-- `ord` tells each claim's row; `claimed` false: another request holds the key.
CREATE FUNCTION claim_idempotency_keys(p_claims jsonb, p_lease interval)
RETURNS TABLE (ord integer, claimed boolean, request_hash text, response_status integer, response_body text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  c record;
  started timestamptz := clock_timestamp();
  got text[] := '{}';
BEGIN
  FOR c IN SELECT x.* FROM jsonb_to_recordset(p_claims) AS x (seller_id bigint, endpoint text, key text, token text)
    ORDER BY x.seller_id, x.endpoint, x.key
  LOOP
    INSERT INTO idempotency_claims (seller_id, endpoint, key, claimed_by, claimed_until)
    VALUES (c.seller_id, c.endpoint, c.key, c.token, clock_timestamp() + p_lease) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      UPDATE idempotency_claims y SET claimed_by = c.token, claimed_until = clock_timestamp() + p_lease
      WHERE y.seller_id = c.seller_id AND y.endpoint = c.endpoint AND y.key = c.key AND y.claimed_until < clock_timestamp()
        AND y.ctid = (SELECT z.ctid FROM idempotency_claims z WHERE z.seller_id = c.seller_id AND z.endpoint = c.endpoint AND z.key = c.key
          FOR UPDATE SKIP LOCKED);
    END IF;
    IF FOUND THEN
      got := got || c.token;
    END IF;
  END LOOP;
  IF clock_timestamp() - started > p_lease / 10 THEN
    FOR c IN SELECT x.* FROM jsonb_to_recordset(p_claims) AS x (seller_id bigint, endpoint text, key text, token text) WHERE x.token = ANY (got)
    LOOP
      UPDATE idempotency_claims y SET claimed_until = clock_timestamp() + p_lease
      WHERE y.seller_id = c.seller_id AND y.endpoint = c.endpoint AND y.key = c.key AND y.claimed_by = c.token;
    END LOOP;
  END IF;
  FOR c IN SELECT x.* FROM jsonb_to_recordset(p_claims) AS x (n integer, seller_id bigint, endpoint text, key text, token text, now timestamptz)
  LOOP
    IF NOT (c.token = ANY (got)) THEN
      RETURN QUERY SELECT c.n, false, NULL::text, NULL::integer, NULL::text;
      CONTINUE;
    END IF;
    RETURN QUERY SELECT c.n, true, k.request_hash, k.response_status, k.response_body FROM idempotency_keys k
      WHERE k.seller_id = c.seller_id AND k.endpoint = c.endpoint AND k.key = c.key AND k.expires_at > c.now;
    IF FOUND THEN
      DELETE FROM idempotency_claims y WHERE y.seller_id = c.seller_id AND y.endpoint = c.endpoint AND y.key = c.key AND y.claimed_by = c.token;
    ELSE
      RETURN QUERY SELECT c.n, true, NULL::text, NULL::integer, NULL::text;
    END IF;
  END LOOP;
END
$$
