/**
 * A notification as the seller sees it (CONTRACT §3's delivery log): the API's answers and the
 * panel's pages are built by this one function. Imports nothing that imports it back.
 */
import { Type } from 'typebox';
import { iso, StringEnum } from '../http/router.ts';
import type { NotificationRow } from './delivery-log.ts';

export const Notification = Type.Object(
  {
    id: Type.Integer(),
    kind: StringEnum(['TRANSACTION_WEBHOOK', 'TRANSACTION_POSTBACK', 'WITHDRAWAL_WEBHOOK'] as const),
    url: Type.String(),
    resourceId: Type.Union([Type.Integer(), Type.Null()], {
      description: 'the transaction id or the cashout id; null for a test notification (POST /api/webhooks/{id}/test)',
    }),
    eventStatus: Type.String({ description: 'the status it announces (PAGO, ESTORNADO…, or PROCESSING, COMPLETED… for a cashout)' }),
    status: StringEnum(['PENDING', 'DELIVERED', 'FAILED'] as const, {
      description: 'PENDING until a 2xx within 10 s (DELIVERED) or the retries end, about three days later (FAILED)',
    }),
    attempts: Type.Integer(),
    lastResponseStatus: Type.Union([Type.Integer(), Type.Null()], { description: "the receiver's last HTTP status; null before any answer" }),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'while PENDING; otherwise null' }),
    createdAt: Type.String({ format: 'date-time' }),
    test: Type.Boolean({
      description: 'a test notification (POST /api/webhooks/{id}/test): a fixed sample body, sent with the header X-Test-Event: true',
    }),
  },
  { title: 'Notification' },
);

export function notificationView(n: NotificationRow) {
  return {
    id: n.id,
    kind: n.kind,
    url: n.url,
    resourceId: n.transaction_id ?? n.cashout_id ?? null,
    eventStatus: n.event_status,
    status: n.status,
    attempts: n.attempts,
    lastResponseStatus: n.last_response_status,
    nextAttemptAt: n.status === 'PENDING' ? iso(n.next_attempt_at) : null,
    createdAt: n.created_at.toISOString(),
    test: n.test,
  };
}

export type NotificationView = ReturnType<typeof notificationView>;
