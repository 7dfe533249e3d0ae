-- Sales are written in groups (src/sales/sale-writes.ts): a sale whose key another request holds
-- is simply not written, and the others of its statement are, so nothing raises this any more.
DROP FUNCTION idempotency_key_taken()
