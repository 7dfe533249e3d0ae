-- What an installation makes for itself is made once and kept here, so API and worker processes
-- started apart agree on it (CONTRACT §16, "Many processes"): the PIX receiver key when none is
-- configured (with PostgreSQL; the embedded mode keeps its own in DATA_DIR), and where the API
-- answers the providers' callbacks when no public address is configured (a worker that registers
-- the sandbox PSP's webhook has no address of its own).
ALTER TABLE installation ADD COLUMN pix_receiver_key text, ADD COLUMN callback_base_url text
