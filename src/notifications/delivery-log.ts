import type { Db } from '../db/db.ts';
import { maybeOne, one } from '../db/sql.ts';
import { ApiError } from '../domain/errors.ts';
import type { NotificationKind } from '../domain/notification-payloads.ts';
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
  const r = await db.query<NotificationRow>(
    `SELECT id, kind, url, transaction_id, cashout_id, event_status, status, attempts, last_response_status, next_attempt_at, created_at, test
     FROM notifications WHERE seller_id = $1 AND ($2::bigint IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [sellerId, beforeId, limit],
  );
  return r.rows;
}

/**
 * One more attempt of that same notification now, whatever its status (CONTRACT §3): same
 * X-Event-Id, the attempt count goes on, and a failed resend returns it to the status it had.
 */
export async function resendNotification(db: Db, sellerId: number, id: number, now: Date): Promise<NotificationRow> {
  return db.tx(async (q) => {
    const found = maybeOne(await q.query<NotificationRow & { seller_id: number }>('SELECT * FROM notifications WHERE id = $1 FOR UPDATE', [id]));
    if (!found) throw new ApiError('NOT_FOUND', 'Notification not found');
    if (found.seller_id !== sellerId) throw new ApiError('FORBIDDEN', 'This notification belongs to another account');
    const updated = one(
      await q.query<NotificationRow>(
        `UPDATE notifications SET resend_prior_status = status, status = 'PENDING', next_attempt_at = $2, locked_until = NULL
         WHERE id = $1 RETURNING *`,
        [id, now],
      ),
    );
    await q.query('SELECT pg_notify($1, $2)', [NOTIFICATIONS_CHANNEL, '']);
    return updated;
  });
}
