import type { Queryable } from '../db/db.ts';
import { before, maybeOne, run, sql } from '../db/sql.ts';
import type { CashoutMoney } from '../domain/cashout-postings.ts';
import type { CashoutEvent, CashoutStatus } from '../domain/cashout-states.ts';
import type { PixKeyType } from '../domain/pix-keys.ts';
import type { ProviderName } from '../domain/provider-facts.ts';

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
  /** The connector that pays it out. */
  provider: ProviderName;
  /** The provider account that pays it out (CONTRACT §11). Null: made before accounts. */
  account: string | null;
  provider_data: Record<string, unknown> | null;
  /** Why the PSP did not make the payout (CONTRACT §11.3), null otherwise. */
  failure_reason: string | null;
  /** Cents the receiver's bank returned after the payout was made. */
  returned_amount: number;
  /** When the payout job next sends it or asks the PSP about it; null: nothing to do. */
  next_check_at: Date | null;
  created_at: Date;
  updated_at: Date;
  processed_at: Date | null;
}

export async function findCashout(q: Queryable, id: number): Promise<CashoutRow | null> {
  const r = await run<CashoutRow>(q, sql`SELECT * FROM cashouts WHERE id = ${id}`);
  return maybeOne(r);
}

export function cashoutMoney(row: CashoutRow): CashoutMoney {
  return { id: row.id, sellerId: row.seller_id, amount: row.amount, netAmount: row.net_amount, feeTotal: row.fee_total };
}

/** The seller's cashouts, newest first, below `beforeId`. */
export async function listCashouts(q: Queryable, sellerId: number, beforeId: number | null, limit: number): Promise<CashoutRow[]> {
  const r = await run<CashoutRow>(
    q,
    sql`SELECT * FROM cashouts WHERE seller_id = ${sellerId} AND ${before('id', beforeId)} ORDER BY id DESC LIMIT ${limit}`,
  );
  return r.rows;
}
