/**
 * Pure: what a PSP's word on a payout does to its cashout (CONTRACT §11.3, §14). A sent Pix made
 * completes the cashout, one not made rejects it (the money back to available), money the
 * receiver's bank returns later is credited back; whatever the cashout cannot take any more is for
 * the operator, with the money it concerns.
 */

import type { CashoutEvent, CashoutStatus } from './cashout-states.ts';
import { centsToReaisString } from './money.ts';
import type { Fact, FactState, PayoutStatus } from './provider-facts.ts';

export interface CashoutSnapshot {
  id: number;
  status: CashoutStatus;
  netAmount: number;
  returnedAmount: number;
}

export interface PayoutPlan {
  state: FactState;
  reason: string | null;
  /** The cashout's moves, in order. */
  events: CashoutEvent[];
  /** Cents the receiver's bank returned, credited back to the seller. */
  returned: number;
}

type PayoutFact = Extract<Fact, { kind: 'PAYOUT_OUTCOME' | 'PAYOUT_RETURNED' }>;

const applied = (events: CashoutEvent[] = [], returned = 0): PayoutPlan => ({ state: 'applied', reason: null, events, returned });
const forOperator = (reason: string): PayoutPlan => ({ state: 'needs_operator', reason, events: [], returned: 0 });
const reais = (cents: number) => `R$ ${centsToReaisString(cents)}`;

// From each cashout status, the moves each PSP status makes; absent: the cashout cannot take it.
const outcome_moves: Record<PayoutStatus, Partial<Record<CashoutStatus, CashoutEvent[]>>> = {
  EM_PROCESSAMENTO: { PENDING: ['PROCESSING'], PROCESSING: [], COMPLETED: [], REJECTED: [] },
  REALIZADO: { PENDING: ['PROCESSING', 'COMPLETED'], PROCESSING: ['COMPLETED'], COMPLETED: [] },
  // A cancelled cashout already has its money back, and the PSP did not send it either.
  NAO_REALIZADO: { PENDING: ['REJECTED'], PROCESSING: ['REJECTED'], REJECTED: [], CANCELLED: [] },
};

export function planPayoutFact(fact: PayoutFact, cashout: CashoutSnapshot | null): PayoutPlan {
  if (!cashout) return forOperator(`a payout of ${reais(fact.amount)} for a cashout this gateway does not have`);
  if (fact.kind === 'PAYOUT_RETURNED') return planReturn(fact.amount, cashout);
  if (fact.amount !== cashout.netAmount) {
    return forOperator(`the PSP reports ${fact.status} for ${reais(fact.amount)}; the cashout pays ${reais(cashout.netAmount)}`);
  }
  const moves = outcome_moves[fact.status][cashout.status];
  if (moves) return applied(moves);
  if (fact.status === 'REALIZADO') {
    return forOperator(`the PSP paid ${reais(fact.amount)} for a cashout closed here as ${cashout.status}: the seller has that money back too`);
  }
  return forOperator(`the PSP says ${fact.status} for a cashout ${cashout.status} here`);
}

function planReturn(amount: number, cashout: CashoutSnapshot): PayoutPlan {
  if (cashout.status !== 'COMPLETED') return forOperator(`${reais(amount)} returned for a cashout ${cashout.status} here`);
  const left = cashout.netAmount - cashout.returnedAmount;
  if (amount > left) return forOperator(`${reais(amount)} returned, more than the ${reais(left)} of the payout not yet returned`);
  return applied([], amount);
}
