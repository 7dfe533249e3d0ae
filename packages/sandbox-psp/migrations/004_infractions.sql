-- MED 2.0 infractions as Efí tells them (GET /v2/gn/infracoes, POST /v2/gn/infracoes/{idInfracao}/defesa):
-- the payer's bank contests a Pix received here, the receiver may defend it, and the payer's bank (or
-- Efí) decides. The money of an infraction accepted leaves as a MED devolução of the Pix, in
-- sandbox_psp.devolucoes: an infraction holds no amount of its own (its valor is the Pix's).
--
-- Efí's protocol numbers: a sequence of their own, so that they look nothing like the row's seq.
CREATE SEQUENCE sandbox_psp.infraction_protocolos START WITH 100000001
-- statement
CREATE TABLE sandbox_psp.infractions (
  id_infracao text PRIMARY KEY,
  -- the order infractions were opened in: breaks ties of criado_em, so pages never overlap
  seq bigserial NOT NULL UNIQUE,
  end_to_end_id text NOT NULL REFERENCES sandbox_psp.pix (end_to_end_id),
  protocolo bigint NOT NULL UNIQUE DEFAULT nextval('sandbox_psp.infraction_protocolos'),
  status text NOT NULL CHECK (status IN ('ABERTA', 'EM_DEFESA', 'ACEITA', 'REJEITADA', 'CANCELADA_EFI')),
  razao text NOT NULL,
  -- the receiver's justification, once it sent its defence
  defesa text,
  -- the decision's reason, once decided
  justificativa_analista text,
  abertura timestamptz NOT NULL,
  -- the end of the analysis period (dadosAnalise.prazoFinalizacao)
  prazo timestamptz NOT NULL,
  recebimento_defesa timestamptz,
  finalizacao timestamptz,
  criado_em timestamptz NOT NULL,
  atualizado_em timestamptz NOT NULL,
  CHECK ((defesa IS NULL) = (recebimento_defesa IS NULL)),
  CHECK ((finalizacao IS NULL) = (status IN ('ABERTA', 'EM_DEFESA')))
)
-- statement
-- GET /v2/gn/infracoes pages by creation time: one index walk per page, the count of the period included.
CREATE INDEX sandbox_psp_infractions_criado_em_idx ON sandbox_psp.infractions (criado_em, seq)
-- statement
-- A Pix is contested once at a time: a second infraction only after the first was decided.
CREATE UNIQUE INDEX sandbox_psp_infractions_open_idx ON sandbox_psp.infractions (end_to_end_id) WHERE status IN ('ABERTA', 'EM_DEFESA')
