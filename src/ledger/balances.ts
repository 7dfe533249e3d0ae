import type { Queryable } from '../db/db.ts';
import { maybeOne, run, sql } from '../db/sql.ts';

export interface Balance {
  available: number;
  blocked: number;
  total: number;
}

export async function readBalance(q: Queryable, sellerId: number): Promise<Balance> {
  const r = await run<{ available: number; blocked: number }>(q, sql`SELECT available, blocked FROM balances WHERE seller_id = ${sellerId}`);
  const row = maybeOne(r) ?? { available: 0, blocked: 0 };
  return { available: row.available, blocked: row.blocked, total: row.available + row.blocked };
}
