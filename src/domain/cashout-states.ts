/**
 * The cashout state machine (CONTRACT §6), as data, with the same no-op rule as transactions.
 */
import { applyTableEvent, type TransitionOutcome, type TransitionRow } from './transaction-states.ts';

export const CASHOUT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'CANCELLED', 'REJECTED'] as const;
export type CashoutStatus = (typeof CASHOUT_STATUSES)[number];

export const CASHOUT_EVENTS = ['PROCESSING', 'COMPLETED', 'REJECTED', 'CANCELLED'] as const;
export type CashoutEvent = (typeof CASHOUT_EVENTS)[number];

export const CASHOUT_TRANSITIONS: readonly TransitionRow<CashoutStatus, CashoutEvent>[] = [
  { event: 'PROCESSING', from: ['PENDING'], to: 'PROCESSING' },
  { event: 'COMPLETED', from: ['PROCESSING'], to: 'COMPLETED' },
  // From PENDING too: a PSP that refuses the payout in the request itself never had it under way (CONTRACT §11.3).
  { event: 'REJECTED', from: ['PENDING', 'PROCESSING'], to: 'REJECTED' },
  // Only before the provider has it: once PROCESSING, money may already be on its way.
  { event: 'CANCELLED', from: ['PENDING'], to: 'CANCELLED' },
];

/** No event leaves these. */
export const CASHOUT_FINAL_STATUSES = ['COMPLETED', 'CANCELLED', 'REJECTED'] as const satisfies readonly CashoutStatus[];

/** Statuses sent to WITHDRAWAL webhooks (spec Events §3; PENDING, the creation status, is not). */
export const CASHOUT_NOTIFYING_STATUSES = ['PROCESSING', 'COMPLETED', 'REJECTED', 'CANCELLED'] as const satisfies readonly CashoutStatus[];

export interface CashoutState {
  status: CashoutStatus;
  lastEvent: CashoutEvent | null;
}

export function applyCashoutEvent(current: CashoutState, event: CashoutEvent): TransitionOutcome<CashoutStatus> {
  return applyTableEvent(CASHOUT_TRANSITIONS, current, event);
}
