import type { Queryable } from '../db/db.ts';
import { maybeOne, run, sql } from '../db/sql.ts';
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
  /** The provider account of its sale (null: made before accounts). */
  account: string | null;
  created_at: Date;
  completed_at: Date | null;
}

export async function findRefund(q: Queryable, id: number): Promise<RefundRow | null> {
  return maybeOne(await run<RefundRow>(q, sql`SELECT * FROM refunds WHERE id = ${id}`));
}

/** A sale's refunds, oldest first (CONTRACT §3). */
export async function refundsOf(q: Queryable, transactionId: number): Promise<RefundRow[]> {
  return (await run<RefundRow>(q, sql`SELECT * FROM refunds WHERE transaction_id = ${transactionId} ORDER BY id`)).rows;
}

/** Records the provider's reference once it accepted the refund (the refund stays PENDING). */
export async function setProviderRef(q: Queryable, id: number, ref: string): Promise<void> {
  await run(q, sql`UPDATE refunds SET provider_ref = ${ref} WHERE id = ${id} AND status = 'PENDING'`);
}

/** PENDING refunds the provider has not yet accepted, created before `before` (a crash or outage in between). */
export async function unsentRefunds(q: Queryable, before: Date, limit: number): Promise<RefundRow[]> {
  return (
    await run<RefundRow>(
      q,
      sql`SELECT * FROM refunds WHERE status = 'PENDING' AND provider_ref IS NULL AND created_at < ${before}
          ORDER BY coalesce(tried_at, created_at), id LIMIT ${limit}`,
    )
  ).rows;
}

/** A send that failed: the refund goes behind those tried longer ago. */
export async function markRefundTried(q: Queryable, id: number, at: Date): Promise<void> {
  await run(q, sql`UPDATE refunds SET tried_at = ${at} WHERE id = ${id} AND status = 'PENDING'`);
}
