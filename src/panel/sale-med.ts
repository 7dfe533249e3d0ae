/**
 * A sale's PIX dispute (MED 2.0, CONTRACT §11.5) as its page shows it: why the payer's bank contested
 * it, since when, until when a defence may be sent, the infraction's status and the money blocked,
 * the seller's defence once sent; and the defence form's own checks, said beside its field.
 */
import { JUSTIFICATION_MAX, JUSTIFICATION_MIN } from '../med/defend.ts';
import type { medView } from '../transactions/med-view.ts';
import type { TransactionRow } from '../transactions/transactions-repo.ts';
import { reais, whenSaoPaulo } from './format.ts';
import { defense_refusals, defense_states, infraction_statuses, labelOf, med_words } from './labels.ts';

type Med = NonNullable<ReturnType<typeof medView>>;

const count = new Intl.NumberFormat('pt-BR');
const at = (iso: string | null) => (iso === null ? null : whenSaoPaulo(new Date(iso)));

/** The defence form's rule, in words: "de 10 a 2.000 caracteres". */
export const justification_rule = `de ${count.format(JUSTIFICATION_MIN)} a ${count.format(JUSTIFICATION_MAX)} caracteres`;
export const justification_limits = { min: JUSTIFICATION_MIN, max: JUSTIFICATION_MAX };

/** The MED section of a sale's page; null when the sale never had one. */
export function medSection(row: TransactionRow, med: Med | null) {
  if (!med) return null;
  const deadline = at(med.deadline);
  return {
    status: med.status === 'ACEITA' && row.status === 'ESTORNADO' ? med_words.returned : labelOf(infraction_statuses, med.status),
    reason: med.reason ?? med_words.noReason,
    since: at(med.openedAt),
    deadline: deadline && `${deadline} (horário de Brasília)`,
    // What the MED holds of the seller's money, while it does.
    blocked: row.status === 'MED' ? reais(row.med_blocked) : null,
    defense: med.defense && { text: med.defense.justification, state: defenseState(med.defense) },
    // Only an infraction the PSP listed can be defended there, while open and not defended yet.
    canDefend:
      row.status === 'MED' && row.med_infraction != null && med.status === 'ABERTA' && (med.defense === null || med.defense.status === 'REFUSED'),
  };
}

/** Why a defence was not taken: the PSP's words, or the gateway's own reason in the panel's. */
function refusalOf(reason: string | null): string {
  if (reason === null) return med_words.noRefusalReason;
  return defense_refusals.find(([said]) => said.test(reason))?.[1] ?? reason;
}

/** "Enviada em 12/11/2026 10:00", "Enviando…", "Recusada pelo PSP: <reason>". */
function defenseState(d: NonNullable<Med['defense']>): string {
  if (d.status === 'REFUSED') return `${defense_states.REFUSED}: ${refusalOf(d.refusalReason)}`;
  if (d.status === 'SENT') return d.sentAt ? `${defense_states.SENT} em ${at(d.sentAt)}` : defense_states.SENT;
  return labelOf(defense_states, d.status);
}

/** What the page says once the defence form was sent: the PSP's answer, as the sale now tells it. */
export function defenseOutcome(med: Med | null): { notice?: string; alert?: string } {
  const d = med?.defense;
  if (!d) return {};
  if (d.status === 'REFUSED') return { alert: `${med_words.refused}${refusalOf(d.refusalReason)}` };
  return { notice: d.status === 'SENT' ? med_words.sent : med_words.sending };
}

/**
 * The justification as typed, its line breaks as the browser counted them for maxlength (one
 * character each, where the form sends two) and without spaces at its ends, as the use case keeps it;
 * or why it cannot be sent.
 */
export function justificationOf(typed: string): { ok: true; text: string } | { ok: false; error: string } {
  const text = typed.replace(/\r\n?/g, '\n').trim();
  if (text.length >= JUSTIFICATION_MIN && text.length <= JUSTIFICATION_MAX) return { ok: true, text };
  const has = text.length === 0 ? 'está vazia' : `tem ${count.format(text.length)}`;
  return { ok: false, error: `Escreva a justificativa com ${justification_rule}; ela ${has}.` };
}
