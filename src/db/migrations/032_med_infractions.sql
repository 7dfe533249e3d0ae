-- MED 2.0 (CONTRACT §11.5): the infractions a PSP reports on Pix this installation received, one row
-- per infraction, written by the one apply step in the same transaction as the sale's move. The row
-- keeps the infraction's latest status, so facts that arrive out of order never move a sale back.
CREATE TABLE med_infractions (
  id_infracao text PRIMARY KEY,
  transaction_id bigint NOT NULL REFERENCES transactions (id),
  -- The PIX account that reported it: the defence goes to that account, whatever is configured today.
  account text NOT NULL,
  end_to_end_id text NOT NULL,
  -- Cents contested, as the PSP says.
  amount bigint NOT NULL,
  status text NOT NULL CHECK (status IN ('ABERTA', 'EM_DEFESA', 'ACEITA', 'REJEITADA', 'CANCELADA')),
  reason text,
  opened_at timestamptz,
  deadline timestamptz,
  -- When the gateway first saw it ACEITA: the devolução that finishes it is awaited from then.
  accepted_at timestamptz,
  -- The seller's defence: SENDING until the PSP answered, SENT, or REFUSED with the PSP's reason.
  defense text,
  defense_state text CHECK (defense_state IN ('SENDING', 'SENT', 'REFUSED')),
  defense_refusal text,
  defense_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
)
-- statement
CREATE INDEX med_infractions_transaction_idx ON med_infractions (transaction_id)
-- statement
-- The poller's work list: infractions that can still change, oldest first.
CREATE INDEX med_infractions_open_idx ON med_infractions (opened_at) WHERE status IN ('ABERTA', 'EM_DEFESA', 'ACEITA')
-- statement
CREATE TABLE med_poll_state (
  account text PRIMARY KEY,
  polled_until timestamptz NOT NULL
)
