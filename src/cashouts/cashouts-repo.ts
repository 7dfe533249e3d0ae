import type { Queryable } from '../db/db.ts';
import { maybeOne } from '../db/sql.ts';
import type { CashoutMoney } from '../domain/cashout-postings.ts';
import type { CashoutEvent, CashoutStatus } from '../domain/cashout-states.ts';
import type { PixKeyType } from '../domain/pix-keys.ts';

export interface CashoutRow {
  id: number;
  seller_id: number;
  status: CashoutStatus;
  last_event: CashoutEvent | null;
  amount: number;
  fee_fixed: number;
  fee_variable: number;
  fee_total: number;
  net_amount: number;
  pix_key: string;
  pix_key_type: PixKeyType;
  external_id: string | null;
  provider_data: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  processed_at: Date | null;
}

export async function findCashout(q: Queryable, id: number): Promise<CashoutRow | null> {
  const r = await q.query<CashoutRow>('SELECT * FROM cashouts WHERE id = $1', [id]);
  return maybeOne(r);
}

export function cashoutMoney(row: CashoutRow): CashoutMoney {
  return { id: row.id, sellerId: row.seller_id, amount: row.amount, netAmount: row.net_amount, feeTotal: row.fee_total };
}

/** The seller's cashouts, newest first, below `beforeId`. */
export async function listCashouts(q: Queryable, sellerId: number, beforeId: number | null, limit: number): Promise<CashoutRow[]> {
  const r = await q.query<CashoutRow>('SELECT * FROM cashouts WHERE seller_id = $1 AND ($2::bigint IS NULL OR id < $2) ORDER BY id DESC LIMIT $3', [
    sellerId,
    beforeId,
    limit,
  ]);
  return r.rows;
}
