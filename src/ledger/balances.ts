import type { Db, Queryable } from '../db/db.ts';
import { groupWriterPer, waitingAsForAConnection } from '../db/group-write.ts';
import { maybeOne, run, sql } from '../db/sql.ts';

export interface Balance {
  available: number;
  blocked: number;
  total: number;
}

const balanceOf = (row: { available: number; blocked: number } | undefined | null): Balance => {
  const { available, blocked } = row ?? { available: 0, blocked: 0 };
  return { available, blocked, total: available + blocked };
};

export async function readBalance(q: Queryable, sellerId: number): Promise<Balance> {
  return balanceOf(
    maybeOne(await run<{ available: number; blocked: number }>(q, sql`SELECT available, blocked FROM balances WHERE seller_id = ${sellerId}`)),
  );
}

/**
 * readBalance outside a transaction, in one statement with the reads that arrive while the database
 * is busy (db/group-write.ts). Each read's statement starts after the read arrived, so it sees
 * every write committed before it, as a statement of its own would.
 */
export const readBalanceInGroup = groupWriterPer((db: Db) => ({
  flush: async (sellerIds: number[]) => {
    const r = await run<{ seller_id: number; available: number; blocked: number }>(
      db,
      sql`SELECT seller_id, available, blocked FROM balances WHERE seller_id = ANY (${sellerIds}::bigint[])`,
    );
    const rows = new Map(r.rows.map((row) => [Number(row.seller_id), row]));
    return sellerIds.map((id) => balanceOf(rows.get(id)));
  },
  slot: () => null,
  inFlight: 1,
  maxItems: 64,
  ...waitingAsForAConnection('balance reads'),
}));
