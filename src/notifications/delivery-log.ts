import type { Db } from '../db/db.ts';
import { before, maybeOne, one, run, sql } from '../db/sql.ts';
import type { NotificationKind } from '../domain/notification-payloads.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
import { NOTIFICATIONS_CHANNEL } from './outbox.ts';

export type NotificationStatus = 'PENDING' | 'DELIVERED' | 'FAILED';

export interface NotificationRow {
  id: number;
  kind: NotificationKind;
  url: string;
  transaction_id: number | null;
  cashout_id: number | null;
  event_status: string;
  status: NotificationStatus;
  attempts: number;
  last_response_status: number | null;
  next_attempt_at: Date;
  created_at: Date;
  /** A test notification (POST /api/webhooks/{id}/test): both resource ids are null. */
  test: boolean;
}

/** The seller's notifications, newest first, below `beforeId`. */
export async function listNotifications(db: Db, sellerId: number, beforeId: number | null, limit: number): Promise<NotificationRow[]> {
  const r = await run<NotificationRow>(
    db,
    sql`SELECT id, kind, url, transaction_id, cashout_id, event_status, status, attempts, last_response_status, next_attempt_at, created_at, test
        FROM notifications WHERE seller_id = ${sellerId} AND ${before('id', beforeId)} ORDER BY id DESC LIMIT ${limit}`,
  );
  return r.rows;
}

/**
 * One more attempt of that same notification now, whatever its status (CONTRACT §3): same
 * X-Event-Id, the attempt count goes on, and a failed resend returns it to the status it had.
 */
export async function resendNotification(db: Db, sellerId: number, id: number, now: Date): Promise<Result<NotificationRow>> {
  return db.tx(async (q): Promise<Result<NotificationRow>> => {
    const found = maybeOne(await run<NotificationRow & { seller_id: number }>(q, sql`SELECT * FROM notifications WHERE id = ${id} FOR UPDATE`));
    if (!found) return refuse('NOT_FOUND', 'Notification not found');
    if (found.seller_id !== sellerId) return refuse('FORBIDDEN', 'This notification belongs to another account');
    const updated = one(
      await run<NotificationRow>(
        q,
        sql`UPDATE notifications SET resend_prior_status = status, status = 'PENDING', next_attempt_at = ${now}, locked_until = NULL
            WHERE id = ${id} RETURNING *`,
      ),
    );
    await run(q, sql`SELECT pg_notify(${NOTIFICATIONS_CHANNEL}, ${''})`);
    return ok(updated);
  });
}
