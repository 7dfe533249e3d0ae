/**
 * The transaction read's `med` (CONTRACT §11.5): the sale's latest infraction as the PSP reported it,
 * with the seller's defence; for a MED known only from operator events or devoluções (no infraction
 * listed), what the sale's own history says. Null when the sale never had a MED.
 */
import { Type } from 'typebox';
import { INFRACTION_STATUSES, type InfractionStatus } from '../domain/provider-facts.ts';
import { Nullable, StringEnum } from '../http/router.ts';

const DEFENSE_STATES = ['SENDING', 'SENT', 'REFUSED'] as const;

export const Med = Type.Object(
  {
    status: StringEnum(INFRACTION_STATUSES, { description: "the infraction's status at the PSP (Efí's CANCELADA_EFI is CANCELADA)" }),
    reason: Nullable(Type.String({ description: "why the payer's bank contested the Pix, in the PSP's words" })),
    openedAt: Nullable(Type.String({ format: 'date-time' })),
    deadline: Nullable(Type.String({ format: 'date-time', description: 'when the analysis ends at the PSP: a defence must be sent before' })),
    defense: Nullable(
      Type.Object(
        {
          justification: Type.String(),
          status: StringEnum(DEFENSE_STATES, { description: 'SENDING until the PSP answered; SENT; REFUSED by the PSP (see refusalReason)' }),
          refusalReason: Nullable(Type.String()),
          sentAt: Nullable(Type.String({ format: 'date-time' })),
        },
        { title: 'MedDefense' },
      ),
    ),
  },
  { title: 'Med', description: 'a PIX dispute (MED 2.0) of the sale: null when it never had one' },
);

interface InfractionJson {
  status: InfractionStatus;
  reason: string | null;
  opened_at: string | null;
  deadline: string | null;
  defense: string | null;
  defense_state: (typeof DEFENSE_STATES)[number] | null;
  defense_refusal: string | null;
  defense_at: string | null;
}

/** What the read needs: the latest infraction, and the sale's MED events. */
export interface MedColumns {
  med_infraction?: InfractionJson | null;
  med_history?: { opened_at: string | null; lost: boolean | null } | null;
  status: string;
}

export const med_columns = `(SELECT jsonb_build_object('status', m.status, 'reason', m.reason, 'opened_at', m.opened_at, 'deadline', m.deadline,
    'defense', m.defense, 'defense_state', m.defense_state, 'defense_refusal', m.defense_refusal, 'defense_at', m.defense_at)
  FROM med_infractions m WHERE m.transaction_id = t.id ORDER BY m.created_at DESC, m.id_infracao DESC LIMIT 1) AS med_infraction,
  (SELECT jsonb_build_object('opened_at', max(e.created_at) FILTER (WHERE e.event = 'MED_OPENED'), 'lost', bool_or(e.event = 'MED_LOST'))
  FROM transaction_events e WHERE e.transaction_id = t.id AND e.event IN ('MED_OPENED', 'MED_LOST')) AS med_history`;

const iso = (v: string | null) => (v === null ? null : new Date(v).toISOString());

export function medView(row: MedColumns) {
  const m = row.med_infraction;
  if (m) {
    return {
      status: m.status,
      reason: m.reason,
      openedAt: iso(m.opened_at),
      deadline: iso(m.deadline),
      defense:
        m.defense === null
          ? null
          : { justification: m.defense, status: m.defense_state ?? 'SENT', refusalReason: m.defense_refusal, sentAt: iso(m.defense_at) },
    };
  }
  const h = row.med_history;
  if (!h?.opened_at) return null;
  const status: InfractionStatus = row.status === 'MED' ? 'ABERTA' : h.lost ? 'ACEITA' : 'REJEITADA';
  return { status, reason: null, openedAt: iso(h.opened_at), deadline: null, defense: null };
}
