-- Payouts paid by a PSP (CONTRACT §11.3): what the PSP said of each cashout, when it is sent or asked
-- again, and money a receiver's bank returned after it was paid.
ALTER TABLE cashouts ADD COLUMN failure_reason text
-- statement
ALTER TABLE cashouts ADD COLUMN returned_amount bigint NOT NULL DEFAULT 0 CHECK (returned_amount >= 0 AND returned_amount <= net_amount)
-- statement
-- When the payout job next sends a PENDING cashout (the same idEnvio every time) or asks the PSP how
-- one ended; null: nothing to do (a final cashout past its return window, or another connector's).
ALTER TABLE cashouts ADD COLUMN next_check_at timestamptz
-- statement
CREATE INDEX cashouts_next_check_idx ON cashouts (next_check_at) WHERE next_check_at IS NOT NULL
-- statement
-- The embedded PSP's sent Pix (PUT /v3/gn/pix/{idEnvio}): one per idEnvio, as Efí keeps them.
CREATE TABLE sandbox_psp_sent (
  id_envio text PRIMARY KEY CHECK (id_envio ~ '^[a-zA-Z0-9]{1,35}$'),
  end_to_end_id text NOT NULL UNIQUE CHECK (end_to_end_id ~ '^E[0-9]{20}[a-zA-Z0-9]{11}$'),
  valor_cents bigint NOT NULL CHECK (valor_cents > 0),
  pagador_chave text NOT NULL,
  info_pagador text,
  favorecido_chave text NOT NULL,
  favorecido_documento text,
  status text NOT NULL CHECK (status IN ('EM_PROCESSAMENTO', 'REALIZADO', 'NAO_REALIZADO')),
  motivo text,
  solicitacao timestamptz NOT NULL,
  liquidacao timestamptz,
  settle_at timestamptz NOT NULL,
  request_canonical text NOT NULL,
  -- Money the receiver's bank sent back after it was paid: [{ id, rtrId, valor, horario, status }].
  devolucoes jsonb NOT NULL DEFAULT '[]'
)
-- statement
CREATE INDEX sandbox_psp_sent_pending_idx ON sandbox_psp_sent (settle_at) WHERE status = 'EM_PROCESSAMENTO'
