-- Keys claimed before a provider call, in groups (src/http/idempotency-claim.ts): the claims that
-- reach the database while it is busy go together in one call, each claimed exactly as
-- claim_idempotency_key (migration 020) claims one key, with its own snapshots and its own answer,
-- in key order so that two groups never wait on each other's keys in a circle. `ord` tells each
-- claim's row. (Claiming set by set instead, three statements for the whole group, measured no
-- faster for groups of a few keys, and planned worse.)
CREATE FUNCTION claim_idempotency_keys(p_claims jsonb, p_lease interval)
RETURNS TABLE (ord integer, claimed boolean, request_hash text, response_status integer, response_body text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT x.* FROM jsonb_to_recordset(p_claims) AS x (n integer, seller_id bigint, endpoint text, key text, token text, now timestamptz)
    ORDER BY x.seller_id, x.endpoint, x.key
  LOOP
    RETURN QUERY SELECT c.n, r.claimed, r.request_hash, r.response_status, r.response_body
      FROM claim_idempotency_key(c.seller_id, c.endpoint, c.key, c.token, p_lease, c.now) AS r;
  END LOOP;
END
$$
