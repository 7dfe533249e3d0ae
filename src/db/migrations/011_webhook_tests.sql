-- Test notifications (CONTRACT §12, POST /api/webhooks/{id}/test): a fixed sample body about no
-- resource, so neither a transaction nor a cashout; every other notification keeps exactly one.
-- A constant default adds the column without rewriting the table.
ALTER TABLE notifications ADD COLUMN test boolean NOT NULL DEFAULT false
-- statement
-- The unnamed CHECK of 005 was named by PostgreSQL from the table (it spans two columns).
ALTER TABLE notifications DROP CONSTRAINT notifications_check
-- statement
-- NOT VALID: every existing row has test = false and met the old check, which is this one for them;
-- so no scan of a large table under this migration's lock. New rows are checked all the same.
ALTER TABLE notifications ADD CONSTRAINT notifications_resource_check CHECK (
  CASE WHEN test THEN transaction_id IS NULL AND cashout_id IS NULL ELSE (transaction_id IS NULL) <> (cashout_id IS NULL) END
) NOT VALID
