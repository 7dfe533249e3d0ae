import type { Queryable } from '../db/db.ts';
import { moneyEffectOf, type MoneyEffect, type MoneyUpdate, type SaleMoney } from '../domain/transaction-postings.ts';
import { postingKind } from '../domain/transaction-states.ts';
import { post } from '../ledger/postings.ts';
import type { TransitionEffect } from './effects.ts';
import type { TransactionRow } from './transactions-repo.ts';

export function saleMoney(row: TransactionRow): SaleMoney {
  return {
    id: row.id, sellerId: row.seller_id, paymentMethod: row.payment_method, amount: row.amount, feeSchedule: row.fee_schedule,
    systemFee: row.system_fee, reserveAmount: row.reserve_amount, netAmount: row.net_amount,
    reserveHeld: row.reserve_held, reserveReleaseAt: row.reserve_release_at,
  };
}

const update_columns: Record<keyof MoneyUpdate, string> = {
  systemFee: 'system_fee', reserveAmount: 'reserve_amount', netAmount: 'net_amount',
  reserveHeld: 'reserve_held', reserveReleaseAt: 'reserve_release_at',
};

/** Writes an effect's postings and the sale's new money state; returns the updated row. */
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

/** Ledger postings of a status change (CONTRACT §5), in the status change's database transaction. */
export const ledgerEffect: TransitionEffect = async (q, move) => {
  const kind = postingKind(move.before.status, move.after.status);
  if (!kind) return;
  return applyMoneyEffect(q, move.after, moneyEffectOf(kind, saleMoney(move.after), move.at));
};


