import type { Queryable } from '../db/db.ts';
import { maybeOne } from '../db/sql.ts';

export interface Balance {
  available: number;
  blocked: number;
  total: number;
}

export async function readBalance(q: Queryable, sellerId: number): Promise<Balance> {
  const r = await q.query<{ available: number; blocked: number }>('SELECT available, blocked FROM balances WHERE seller_id = $1', [sellerId]);
  const row = maybeOne(r) ?? { available: 0, blocked: 0 };
  return { available: row.available, blocked: row.blocked, total: row.available + row.blocked };
}
