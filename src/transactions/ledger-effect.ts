import type { Queryable } from '../db/db.ts';
import type { MoneyEffect, MoneyUpdate, SaleMoney } from '../domain/transaction-postings.ts';
import { post } from '../ledger/postings.ts';
import type { TransactionRow } from './transactions-repo.ts';

export function saleMoney(row: TransactionRow): SaleMoney {
  return {
    id: row.id, sellerId: row.seller_id, paymentMethod: row.payment_method, amount: row.amount, feeSchedule: row.fee_schedule,
    systemFee: row.system_fee, reserveAmount: row.reserve_amount, netAmount: row.net_amount,
    reserveHeld: row.reserve_held, reserveReleaseAt: row.reserve_release_at,
  };
}

const update_columns = {
  systemFee: 'system_fee', reserveAmount: 'reserve_amount', netAmount: 'net_amount',
  reserveHeld: 'reserve_held', reserveReleaseAt: 'reserve_release_at',
} as const satisfies Record<keyof MoneyUpdate, keyof TransactionRow>;

/** The row with a money effect's update applied (in memory). */
export function withMoneyUpdate(row: TransactionRow, update: MoneyUpdate): TransactionRow {
  const after = { ...row };
  for (const key of Object.keys(update) as (keyof MoneyUpdate)[]) (after[update_columns[key]] as unknown) = update[key];
  return after;
}

/** Writes a money effect that is not a status change (a reserve falling due); returns the updated row. */
export async function applyMoneyEffect(q: Queryable, row: TransactionRow, effect: MoneyEffect): Promise<TransactionRow> {
  for (const posting of effect.postings) await post(q, posting);
  const keys = Object.keys(effect.update) as (keyof MoneyUpdate)[];
  if (keys.length === 0) return row;
  const sets = keys.map((k, i) => `${update_columns[k]} = $${i + 2}`).join(', ');
  const r = await q.query<TransactionRow>(
    `UPDATE transactions SET ${sets} WHERE id = $1 RETURNING *, boleto_due_date::text AS boleto_due_date`,
    [row.id, ...keys.map((k) => effect.update[k])]);
  return r.rows[0]!;
}
