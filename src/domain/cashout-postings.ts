/** CONTRACT §5's posting table for cashouts. */

import type { CashoutStatus } from './cashout-states.ts';
import type { Posting } from './ledger.ts';

export interface CashoutMoney {
  id: number;
  sellerId: number;
  amount: number;
  netAmount: number;
  feeTotal: number;
}

const posting = (c: CashoutMoney, kind: string, lines: Posting['lines']): Posting => ({ kind, sellerId: c.sellerId, cashoutId: c.id, lines });

/** Created (PENDING): the amount leaves available for blocked. The caller posts it only if covered. */
export function cashoutCreatedPosting(c: CashoutMoney): Posting {
  return posting(c, 'CASHOUT_CREATED', [
    { account: 'available', amount: -c.amount },
    { account: 'blocked', amount: c.amount },
  ]);
}

/** The posting a move into `to` writes, or null (PROCESSING moves no money). */
export function cashoutMovePosting(c: CashoutMoney, to: CashoutStatus): Posting | null {
  switch (to) {
    case 'COMPLETED':
      // The net leaves the platform's funds at the account that sent it (CONTRACT §15).
      return posting(c, 'CASHOUT_COMPLETED', [
        { account: 'blocked', amount: -c.amount },
        { account: 'customer_funds', amount: c.netAmount },
        { account: 'fee_revenue', amount: c.feeTotal },
      ]);
    case 'REJECTED':
    case 'CANCELLED':
      return posting(c, `CASHOUT_${to}`, [
        { account: 'blocked', amount: -c.amount },
        { account: 'available', amount: c.amount },
      ]);
    default:
      return null;
  }
}

/** Money a receiver's bank returned after the payout was made: back to the seller's available balance. */
export function cashoutReturnedPosting(c: CashoutMoney, amount: number): Posting {
  return posting(c, 'CASHOUT_RETURNED', [
    { account: 'customer_funds', amount: -amount },
    { account: 'available', amount },
  ]);
}
