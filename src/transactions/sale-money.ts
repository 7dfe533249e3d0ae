import type { MoneyUpdate, SaleMoney } from '../domain/transaction-postings.ts';
import type { TransactionRow } from './transactions-repo.ts';

/** The sale's money state, as the ledger rules of CONTRACT §5 read it. */
export function saleMoney(row: TransactionRow): SaleMoney {
  return {
    id: row.id,
    sellerId: row.seller_id,
    paymentMethod: row.payment_method,
    amount: row.amount,
    feeSchedule: row.fee_schedule,
    systemFee: row.system_fee,
    reserveAmount: row.reserve_amount,
    netAmount: row.net_amount,
    reserveHeld: row.reserve_held,
    reserveReleaseAt: row.reserve_release_at,
    refundedAmount: row.refunded_amount,
    refundPending: row.refund_pending,
    medBlocked: row.med_blocked,
  };
}

const update_columns = {
  systemFee: 'system_fee',
  reserveAmount: 'reserve_amount',
  netAmount: 'net_amount',
  reserveHeld: 'reserve_held',
  reserveReleaseAt: 'reserve_release_at',
  refundedAmount: 'refunded_amount',
  refundPending: 'refund_pending',
  medBlocked: 'med_blocked',
} as const satisfies Record<keyof MoneyUpdate, keyof TransactionRow>;

/** The row with a money effect's update applied (in memory). */
export function withMoneyUpdate(row: TransactionRow, update: MoneyUpdate): TransactionRow {
  const after = { ...row };
  for (const key of Object.keys(update) as (keyof MoneyUpdate)[]) (after[update_columns[key]] as unknown) = update[key];
  return after;
}
