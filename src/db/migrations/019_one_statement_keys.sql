-- A keyed sale is one statement that writes the sale and stores its Idempotency-Key's answer. When
-- the key turns out answered or held by another request, that statement must fail whole rather
-- than commit a sale without its answer: it calls this, whose error rolls it back, and the gateway
-- then replays the other answer or says the key is in use.
CREATE FUNCTION idempotency_key_taken() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'Idempotency-Key answered or held by another request' USING ERRCODE = 'GK409';
END
$$
