import type { Queryable } from '../db/db.ts';

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
  const r = await q.query<StatementLine>(
    `SELECT l.id, l.created_at, l.account, l.amount, p.kind, p.transaction_id, p.cashout_id
     FROM journal_lines l JOIN postings p ON p.id = l.posting_id
     WHERE l.seller_id = $1 AND ($2::bigint IS NULL OR l.id < $2)
     ORDER BY l.id DESC LIMIT $3`,
    [sellerId, beforeId, limit],
  );
  return r.rows;
}
