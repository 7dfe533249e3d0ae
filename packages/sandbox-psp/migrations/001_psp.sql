-- The embedded PSP's own schema (its state apart from the gateway's, created only when a rail is
-- the sandbox's): the charges it issued, the Pix it received and their devoluções, the Pix it sent,
-- its boleto charges, and the webhooks it calls, so that they outlive a restart as a real PSP's
-- would. Amounts are integer cents; the API Pix's "123.45" strings exist only on the wire.
CREATE TABLE sandbox_psp.cobs (
  txid text PRIMARY KEY CHECK (txid ~ '^[a-zA-Z0-9]{26,35}$'),
  revisao integer NOT NULL DEFAULT 0 CHECK (revisao >= 0),
  status text NOT NULL DEFAULT 'ATIVA'
    CHECK (status IN ('ATIVA', 'CONCLUIDA', 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'REMOVIDA_PELO_PSP')),
  criacao timestamptz NOT NULL,
  expiracao integer NOT NULL CHECK (expiracao > 0),
  original_cents bigint NOT NULL CHECK (original_cents >= 0),
  modalidade_alteracao smallint NOT NULL DEFAULT 0 CHECK (modalidade_alteracao IN (0, 1)),
  chave text NOT NULL,
  devedor jsonb,
  solicitacao_pagador text,
  info_adicionais jsonb,
  -- the location: its id in the API, the capability token in its URL, and the URL without scheme
  loc_id bigserial NOT NULL UNIQUE,
  loc_token text NOT NULL UNIQUE,
  location text NOT NULL,
  loc_criacao timestamptz NOT NULL,
  pix_copia_e_cola text NOT NULL
)
-- statement
-- Every revision as it was answered, for GET /cob/{txid}?revisao=n.
CREATE TABLE sandbox_psp.cob_revisoes (
  txid text NOT NULL REFERENCES sandbox_psp.cobs (txid),
  revisao integer NOT NULL,
  cob jsonb NOT NULL,
  PRIMARY KEY (txid, revisao)
)
-- statement
CREATE TABLE sandbox_psp.pix (
  end_to_end_id text PRIMARY KEY CHECK (end_to_end_id ~ '^E[0-9]{20}[a-zA-Z0-9]{11}$'),
  -- a static code's txid may be shorter than a charge's, or absent
  txid text CHECK (txid ~ '^[a-zA-Z0-9]{1,35}$'),
  valor_cents bigint NOT NULL CHECK (valor_cents > 0),
  chave text NOT NULL,
  horario timestamptz NOT NULL,
  info_pagador text,
  pagador_cpf text,
  pagador_cnpj text,
  -- breaks ties between Pix of the same horario, so pages never overlap
  seq bigserial NOT NULL UNIQUE
)
-- statement
CREATE INDEX sandbox_psp_pix_horario_idx ON sandbox_psp.pix (horario, seq)
-- statement
CREATE INDEX sandbox_psp_pix_txid_idx ON sandbox_psp.pix (txid) WHERE txid IS NOT NULL
-- statement
CREATE TABLE sandbox_psp.devolucoes (
  end_to_end_id text NOT NULL REFERENCES sandbox_psp.pix (end_to_end_id),
  id text NOT NULL CHECK (id ~ '^[a-zA-Z0-9]{1,35}$'),
  rtr_id text NOT NULL UNIQUE CHECK (rtr_id ~ '^D[0-9]{20}[a-zA-Z0-9]{11}$'),
  valor_cents bigint NOT NULL CHECK (valor_cents > 0),
  natureza text NOT NULL CHECK (natureza IN ('ORIGINAL', 'MED_OPERACIONAL', 'MED_FRAUDE')),
  descricao text,
  status text NOT NULL CHECK (status IN ('EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO')),
  motivo text,
  solicitacao timestamptz NOT NULL,
  liquidacao timestamptz,
  -- when the PSP settles it, and the refusal armed for it (null: it will be DEVOLVIDO)
  settle_at timestamptz NOT NULL,
  planned_failure text,
  request_canonical text NOT NULL,
  -- the order devoluções were made in, which a Pix lists them by
  seq bigserial NOT NULL UNIQUE,
  PRIMARY KEY (end_to_end_id, id)
)
-- statement
CREATE INDEX sandbox_psp_devolucoes_pending_idx ON sandbox_psp.devolucoes (settle_at) WHERE status = 'EM_PROCESSAMENTO'
-- statement
CREATE TABLE sandbox_psp.webhooks (
  chave text PRIMARY KEY,
  webhook_url text NOT NULL,
  criacao timestamptz NOT NULL
)
-- statement
-- The embedded PSP's sent Pix (PUT /v3/gn/pix/{idEnvio}): one per idEnvio, as Efí keeps them.
CREATE TABLE sandbox_psp.sent (
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
CREATE INDEX sandbox_psp_sent_pending_idx ON sandbox_psp.sent (settle_at) WHERE status = 'EM_PROCESSAMENTO'
-- statement
-- The embedded PSP's boleto charges (Efí's Cobranças API): the code it issued, the Pix beside it, its history.
CREATE TABLE sandbox_psp.charges (
  charge_id bigint PRIMARY KEY,
  custom_id text,
  notification_url text,
  total_cents bigint NOT NULL CHECK (total_cents > 0),
  status text NOT NULL,
  barcode text NOT NULL,
  pix_txid text UNIQUE,
  pix_code text,
  expire_at date NOT NULL,
  paid_cents bigint,
  request jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  -- [{ id, status, previous, value?, at }], oldest first: what a notification's history tells.
  history jsonb NOT NULL DEFAULT '[]'
)
-- statement
CREATE SEQUENCE sandbox_psp.charge_ids START WITH 1000001
-- statement
-- A notification token names one charge; reading it answers that charge's history.
CREATE TABLE sandbox_psp.charge_notifications (
  token text PRIMARY KEY,
  charge_id bigint NOT NULL REFERENCES sandbox_psp.charges (charge_id),
  created_at timestamptz NOT NULL
)
