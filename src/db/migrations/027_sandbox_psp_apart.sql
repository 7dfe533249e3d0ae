-- The embedded PSP is a package of its own with its own schema and migrations, created only when a
-- rail is the sandbox's (packages/sandbox-psp). Its tables, which migrations 008, 016 and 017 made
-- in every database, leave the gateway's: a database whose sandbox has state keeps it, moved into
-- the PSP's schema (its first migration then recorded as applied); any other has them dropped, so a
-- production database holds no sandbox table.
DO $$
DECLARE
  tables text[] := ARRAY['cob_revisoes', 'cobs', 'devolucoes', 'pix', 'webhooks', 'sent', 'charge_notifications', 'charges'];
  t text;
  used boolean := false;
BEGIN
  IF to_regclass('public.sandbox_psp_cobs') IS NULL THEN
    RETURN;
  END IF;
  FOREACH t IN ARRAY tables LOOP
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM public.%I)', 'sandbox_psp_' || t) INTO used;
    EXIT WHEN used;
  END LOOP;
  IF NOT used THEN
    FOREACH t IN ARRAY tables LOOP
      EXECUTE format('DROP TABLE public.%I', 'sandbox_psp_' || t);
    END LOOP;
    DROP SEQUENCE public.sandbox_psp_charge_ids;
    RETURN;
  END IF;
  CREATE SCHEMA IF NOT EXISTS sandbox_psp;
  FOREACH t IN ARRAY tables LOOP
    EXECUTE format('ALTER TABLE public.%I SET SCHEMA sandbox_psp', 'sandbox_psp_' || t);
    EXECUTE format('ALTER TABLE sandbox_psp.%I RENAME TO %I', 'sandbox_psp_' || t, t);
  END LOOP;
  ALTER SEQUENCE public.sandbox_psp_charge_ids SET SCHEMA sandbox_psp;
  ALTER SEQUENCE sandbox_psp.sandbox_psp_charge_ids RENAME TO charge_ids;
  CREATE TABLE IF NOT EXISTS sandbox_psp.migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
  INSERT INTO sandbox_psp.migrations (name) VALUES ('001_psp.sql') ON CONFLICT DO NOTHING;
END $$
