import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/db.ts';
import { cashoutWebhookPayload, transactionPostbackPayload, transactionWebhookPayload } from '../domain/notification-payloads.ts';
import { isNotifyingStatus } from '../domain/transaction-states.ts';
import { CASHOUT_NOTIFYING_STATUSES } from '../domain/cashout-states.ts';
import type { TransitionEffect } from '../transactions/effects.ts';
import type { CashoutEffect } from '../cashouts/transitions.ts';
import { itemsOf } from '../transactions/transactions-repo.ts';
import { shippingObject } from '../transactions/transaction-view.ts';

export const NOTIFICATIONS_CHANNEL = 'notifications_ready';

interface Target { kind: string; url: string; webhookId: number | null; payload: string }

// One statement for every target: the seller's matching webhooks plus the sale's postback.
const insert_sql = `
  INSERT INTO notifications (seller_id, kind, event_id, url, webhook_id, transaction_id, cashout_id, event_status,
    previous_status, status_changed_at, payload, order_key, next_attempt_at, created_at)
  SELECT $1, x.kind, x.event_id, x.url, x.webhook_id, $2::bigint, $3::bigint, $4, $5, $6, x.payload,
    x.kind || ':' || coalesce('t' || $2::bigint, 'c' || $3::bigint) || ':' || x.url, $6, $6
  FROM unnest($7::text[], $8::uuid[], $9::text[], $10::bigint[], $11::text[]) AS x (kind, event_id, url, webhook_id, payload)`;

async function webhooksOf(q: Queryable, sellerId: number, type: 'TRANSACTION' | 'WITHDRAWAL') {
  const r = await q.query<{ id: number; url: string }>(
    'SELECT id, url FROM webhooks WHERE seller_id = $1 AND deleted_at IS NULL AND $2 = ANY (types) ORDER BY id', [sellerId, type]);
  return r.rows;
}

async function enqueue(q: Queryable, sellerId: number, resource: { transactionId: number | null; cashoutId: number | null },
  move: { status: string; previous: string; at: Date }, targets: Target[]): Promise<void> {
  if (targets.length === 0) return;
  await q.query(insert_sql, [sellerId, resource.transactionId, resource.cashoutId, move.status, move.previous, move.at,
    targets.map((t) => t.kind), targets.map(() => randomUUID()), targets.map((t) => t.url), targets.map((t) => t.webhookId), targets.map((t) => t.payload)]);
  // Delivered at commit: delivery workers wake within milliseconds, not a polling interval.
  await q.query('SELECT pg_notify($1, $2)', [NOTIFICATIONS_CHANNEL, '']);
}

/** Outbox rows of a transaction's status change (CONTRACT §9), in its database transaction. */
export const transactionNotificationEffect: TransitionEffect = async (q, { before, after, at }) => {
  if (!isNotifyingStatus(after.status)) return;
  const hooks = await webhooksOf(q, after.seller_id, 'TRANSACTION');
  if (hooks.length === 0 && !after.postback_url) return;
  const sale = {
    id: after.id, sellerId: after.seller_id, amount: after.amount, createdAt: after.created_at, status: after.status,
    paymentMethod: after.payment_method,
    customer: { document: after.customer_document, email: after.customer_email, name: after.customer_name, phone: after.customer_phone },
    pixKey: after.pix_code, boletoCode: after.boleto_code, shipping: shippingObject(after.shipping),
    items: ((await itemsOf(q, [after.id])).get(after.id) ?? []).map((i) => ({ id: i.id, title: i.title, unitPrice: i.unit_price, quantity: i.quantity, tangible: i.tangible })),
    systemFee: after.system_fee, externalTransactionId: after.external_transaction_id,
  };
  const targets: Target[] = [];
  if (hooks.length > 0) {
    const payload = transactionWebhookPayload(sale);
    for (const h of hooks) targets.push({ kind: 'TRANSACTION_WEBHOOK', url: h.url, webhookId: h.id, payload });
  }
  if (after.postback_url) targets.push({ kind: 'TRANSACTION_POSTBACK', url: after.postback_url, webhookId: null, payload: transactionPostbackPayload(sale) });
  await enqueue(q, after.seller_id, { transactionId: after.id, cashoutId: null }, { status: after.status, previous: before.status, at }, targets);
};

/** Outbox rows of a cashout's status change: PROCESSING, COMPLETED, REJECTED, CANCELLED. */
export const cashoutNotificationEffect: CashoutEffect = async (q, { before, after, at }) => {
  if (!(CASHOUT_NOTIFYING_STATUSES as readonly string[]).includes(after.status)) return;
  const hooks = await webhooksOf(q, after.seller_id, 'WITHDRAWAL');
  if (hooks.length === 0) return;
  const seller = (await q.query<{ name: string; email: string }>('SELECT name, email FROM sellers WHERE id = $1', [after.seller_id])).rows[0]!;
  const payload = cashoutWebhookPayload({
    id: after.id, sellerId: after.seller_id, amount: after.amount, pixKey: after.pix_key, pixKeyType: after.pix_key_type,
    status: after.status, externalId: after.external_id, createdAt: after.created_at, updatedAt: after.updated_at,
    processedAt: after.processed_at, user: { id: after.seller_id, name: seller.name, email: seller.email },
  });
  await enqueue(q, after.seller_id, { transactionId: null, cashoutId: after.id }, { status: after.status, previous: before.status, at },
    hooks.map((h) => ({ kind: 'WITHDRAWAL_WEBHOOK', url: h.url, webhookId: h.id, payload })));
};
