import type { Queryable } from '../db/db.ts';
import { before, run, sql } from '../db/sql.ts';

export interface StatementLine {
  id: number;
  created_at: Date;
  account: 'available' | 'blocked';
  amount: number;
  kind: string;
  transaction_id: number | null;
  cashout_id: number | null;
}

/** The extrato: the seller's own journal lines, newest first, below `beforeId` (CONTRACT §3). */
export async function statementLines(q: Queryable, sellerId: number, beforeId: number | null, limit: number): Promise<StatementLine[]> {
  const r = await run<StatementLine>(
    q,
    sql`SELECT l.id, l.created_at, l.account, l.amount, p.kind, p.transaction_id, p.cashout_id
        FROM journal_lines l JOIN postings p ON p.id = l.posting_id
        WHERE l.seller_id = ${sellerId} AND ${before('l.id', beforeId)}
        ORDER BY l.id DESC LIMIT ${limit}`,
  );
  return r.rows;
}
