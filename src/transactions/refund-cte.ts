import { raw, type Sql, sql } from '../db/sql.ts';

export type RefundStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';
export type RefundRequester = 'SELLER' | 'PLATFORM';

/** What a move writes to its sale's refunds: a new refund, or the settlement of the PENDING one. */
export type RefundWrite =
  | { kind: 'create'; amount: number; status: RefundStatus; requestedBy: RefundRequester; completedAt: Date | null }
  | { kind: 'settle'; id: number; status: 'SUCCEEDED' | 'FAILED'; failureReason: string | null; completedAt: Date };

/**
 * CTE `refund_row` writing `write` only if `gate` (the move's guarded update) yields a row, so the
 * refund and the sale's money change together or not at all; it yields the refund's id.
 */
export function refundCte(write: RefundWrite | null, gate: string, sellerId: number, at: Date): Sql {
  const from = raw(gate);
  if (write === null) return sql`refund_row AS (SELECT NULL::bigint AS id WHERE false)`;
  if (write.kind === 'create') {
    return sql`refund_row AS (
      INSERT INTO refunds (transaction_id, seller_id, amount, status, requested_by, created_at, completed_at, account)
      SELECT g.id, ${sellerId}::bigint, ${write.amount}::bigint, ${write.status}::text, ${write.requestedBy}::text,
        ${at}::timestamptz, ${write.completedAt}::timestamptz, (SELECT t.account FROM transactions t WHERE t.id = g.id) FROM ${from} g
      RETURNING id
    )`;
  }
  return sql`refund_row AS (
    UPDATE refunds SET status = ${write.status}::text, failure_reason = ${write.failureReason}::text, completed_at = ${write.completedAt}::timestamptz
    WHERE id = ${write.id}::bigint AND status = 'PENDING' AND EXISTS (SELECT 1 FROM ${from})
    RETURNING id
  )`;
}
