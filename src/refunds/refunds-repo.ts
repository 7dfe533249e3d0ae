import type { Queryable } from '../db/db.ts';
import { maybeOne } from '../db/sql.ts';
import type { RefundRequester, RefundStatus } from './refund-cte.ts';

export interface RefundRow {
  id: number;
  transaction_id: number;
  seller_id: number;
  amount: number;
  status: RefundStatus;
  failure_reason: string | null;
  requested_by: RefundRequester;
  provider_ref: string | null;
  created_at: Date;
  completed_at: Date | null;
}

export async function findRefund(q: Queryable, id: number): Promise<RefundRow | null> {
  return maybeOne(await q.query<RefundRow>('SELECT * FROM refunds WHERE id = $1', [id]));
}

/** A sale's refunds, oldest first (CONTRACT §3). */
export async function refundsOf(q: Queryable, transactionId: number): Promise<RefundRow[]> {
  return (await q.query<RefundRow>('SELECT * FROM refunds WHERE transaction_id = $1 ORDER BY id', [transactionId])).rows;
}

/** Records the provider's reference once it accepted the refund (the refund stays PENDING). */
export async function setProviderRef(q: Queryable, id: number, ref: string): Promise<void> {
  await q.query("UPDATE refunds SET provider_ref = $2 WHERE id = $1 AND status = 'PENDING'", [id, ref]);
}

/** PENDING refunds the provider has not yet accepted, created before `before` (a crash or outage in between). */
export async function unsentRefunds(q: Queryable, before: Date, limit: number): Promise<RefundRow[]> {
  return (
    await q.query<RefundRow>("SELECT * FROM refunds WHERE status = 'PENDING' AND provider_ref IS NULL AND created_at < $1 ORDER BY id LIMIT $2", [
      before,
      limit,
    ])
  ).rows;
}
