/**
 * Pure: what a MED 2.0 infraction (CONTRACT §11.5) does to the sale whose Pix it contests. The PSP
 * lists an infraction with its status of the moment, so facts may come late or out of order: the
 * plan moves the sale to what the infraction's latest status asks for, never back. Open, defended
 * or accepted: the sale is in MED (its money blocked); rejected or cancelled: the block is released.
 * Accepted only blocks: the devolução that takes the money applies MED_LOST (11.1).
 */
import { checked, type FactPlan, type SaleSnapshot } from './fact-plans.ts';
import type { Fact, InfractionStatus } from './provider-facts.ts';

type Infraction = Extract<Fact, { kind: 'INFRACTION' }>;

const rank: Record<InfractionStatus, number> = { ABERTA: 0, EM_DEFESA: 1, ACEITA: 2, REJEITADA: 2, CANCELADA: 2 };

/** The infraction's status once this fact is taken: a status earlier than the one known is a late word, and the first decision stands. */
export function latestStatus(known: InfractionStatus | null, told: InfractionStatus): InfractionStatus {
  return known !== null && (rank[known] === 2 || rank[known] > rank[told]) ? known : told;
}

const none: FactPlan = { state: 'applied', reason: null, events: [], followup: null, naming: null, settle: null };
const plan = (extra: Partial<FactPlan>): FactPlan => ({ ...none, ...extra });

/**
 * `known`: the infraction's status as recorded before this fact (null when it is new here).
 * `othersOpen`: another infraction of the same sale is still open or accepted, so its block stays.
 */
export function planInfraction(fact: Infraction, sale: SaleSnapshot, known: InfractionStatus | null, othersOpen = false): FactPlan {
  const status = latestStatus(known, fact.status);
  if (fact.overdue) return planOverdue(fact, status, sale);
  if (status === 'REJEITADA' || status === 'CANCELADA')
    return sale.status === 'MED' && !othersOpen ? checked(sale, plan({ events: ['MED_WON'] })) : none;
  switch (sale.status) {
    case 'PENDENTE':
    case 'EM_PROCESSAMENTO':
    case 'FALHA':
      return plan({ state: 'held', reason: 'a MED opened before the payment was recorded' });
    case 'PAGO':
      return checked(sale, plan({ events: ['MED_OPENED'] }));
    case 'MED':
      return none;
    case 'ESTORNADO':
      // The devolução of an accepted infraction came first: it already took the money.
      if (sale.lastEvent === 'MED_LOST') return none;
      return plan({ state: 'needs_operator', reason: 'a MED opened for an ESTORNADO sale: its money was already returned' });
    default:
      return plan({ state: 'needs_operator', reason: `a MED opened for a ${sale.status} sale` });
  }
}

/** The gateway's own finding that an infraction waits too long, shown to the operator while the money is blocked. */
function planOverdue(fact: Infraction, status: InfractionStatus, sale: SaleSnapshot): FactPlan {
  const still = fact.status === 'ACEITA' ? status === 'ACEITA' : rank[status] < 2;
  if (sale.status !== 'MED' || !still) return none;
  const reason =
    status === 'ACEITA'
      ? `infraction ${fact.infractionId} was accepted and no devolução came in 11 days: the money is still blocked at the PSP`
      : `infraction ${fact.infractionId} is still undecided 30 days past its deadline: the money is still blocked at the PSP`;
  return plan({ state: 'needs_operator', reason });
}
