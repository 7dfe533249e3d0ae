import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/db.ts';
import { cashoutWebhookPayload, transactionPostbackPayload, transactionWebhookPayload } from '../domain/notification-payloads.ts';
import { isNotifyingStatus } from '../domain/transaction-states.ts';
import { CASHOUT_NOTIFYING_STATUSES } from '../domain/cashout-states.ts';
import type { CashoutEffect } from '../cashouts/transitions.ts';
import type { ItemRow, TransactionRow } from '../transactions/transactions-repo.ts';
import { shippingObject } from '../transactions/transaction-view.ts';

export const NOTIFICATIONS_CHANNEL = 'notifications_ready';

/** One outbox row to write: where it goes and the exact bytes it will carry. */
export interface OutboxTarget { kind: string; url: string; webhookId: number | null; payload: string }

export interface OutboxMove { sellerId: number; transactionId: number | null; cashoutId: number | null; status: string; previous: string; at: Date }

/**
 * INSERT of one outbox row per target (the seller's matching webhooks plus a sale's postback),
 * parameters `outboxParams`'s from `$first`; with `gate`, written only if that CTE yields a row.
 */
export function outboxInsert(first: number, gate?: string): string {
  const $ = (i: number) => `$${first + i}`;
  return `
  INSERT INTO notifications (seller_id, kind, event_id, url, webhook_id, transaction_id, cashout_id, event_status,
    previous_status, status_changed_at, payload, order_key, next_attempt_at, created_at)
  SELECT ${$(0)}::bigint, x.kind, x.event_id, x.url, x.webhook_id, ${$(1)}::bigint, ${$(2)}::bigint, ${$(3)}::text, ${$(4)}::text,
    ${$(5)}::timestamptz, x.payload, x.kind || ':' || coalesce('t' || ${$(1)}::bigint, 'c' || ${$(2)}::bigint) || ':' || x.url,
    ${$(5)}::timestamptz, ${$(5)}::timestamptz
  FROM ${gate ? `${gate}, ` : ''}unnest(${$(6)}::text[], ${$(7)}::uuid[], ${$(8)}::text[], ${$(9)}::bigint[], ${$(10)}::text[])
    AS x (kind, event_id, url, webhook_id, payload)`;
}

export function outboxParams(move: OutboxMove, targets: OutboxTarget[]): unknown[] {
  return [move.sellerId, move.transactionId, move.cashoutId, move.status, move.previous, move.at,
    targets.map((t) => t.kind), targets.map(() => randomUUID()), targets.map((t) => t.url), targets.map((t) => t.webhookId), targets.map((t) => t.payload)];
}

const insert_sql = `WITH written AS (${outboxInsert(1)} RETURNING 1)
  SELECT pg_notify('${NOTIFICATIONS_CHANNEL}', '') FROM (SELECT 1 FROM written LIMIT 1) AS any_row`;

async function webhooksOf(q: Queryable, sellerId: number, type: 'TRANSACTION' | 'WITHDRAWAL') {
  const r = await q.query<{ id: number; url: string }>(
    'SELECT id, url FROM webhooks WHERE seller_id = $1 AND deleted_at IS NULL AND $2 = ANY (types) ORDER BY id', [sellerId, type]);
  return r.rows;
}

/** Writes outbox rows and wakes the delivery workers at commit (milliseconds, not a polling interval). */
async function enqueue(q: Queryable, move: OutboxMove, targets: OutboxTarget[]): Promise<void> {
  if (targets.length > 0) await q.query(insert_sql, outboxParams(move, targets));
}

/**
 * Outbox rows of a transaction's status change (CONTRACT §9), given the sale as it is after the
 * move, its items and the seller's TRANSACTION webhooks. Pure: the move writes them.
 */
export function transactionOutboxTargets(after: TransactionRow, items: ItemRow[], hooks: { id: number; url: string }[]): OutboxTarget[] {
  if (!isNotifyingStatus(after.status) || (hooks.length === 0 && !after.postback_url)) return [];
  const sale = {
    id: after.id, sellerId: after.seller_id, amount: after.amount, createdAt: after.created_at, status: after.status,
    paymentMethod: after.payment_method,
    customer: { document: after.customer_document, email: after.customer_email, name: after.customer_name, phone: after.customer_phone },
    pixKey: after.pix_code, boletoCode: after.boleto_code, shipping: shippingObject(after.shipping),
    items: items.map((i) => ({ id: i.id, title: i.title, unitPrice: i.unit_price, quantity: i.quantity, tangible: i.tangible })),
    systemFee: after.system_fee, externalTransactionId: after.external_transaction_id,
  };
  const targets: OutboxTarget[] = [];
  if (hooks.length > 0) {
    const payload = transactionWebhookPayload(sale);
    for (const h of hooks) targets.push({ kind: 'TRANSACTION_WEBHOOK', url: h.url, webhookId: h.id, payload });
  }
  if (after.postback_url) targets.push({ kind: 'TRANSACTION_POSTBACK', url: after.postback_url, webhookId: null, payload: transactionPostbackPayload(sale) });
  return targets;
}

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
  await enqueue(q, { sellerId: after.seller_id, transactionId: null, cashoutId: after.id, status: after.status, previous: before.status, at },
    hooks.map((h) => ({ kind: 'WITHDRAWAL_WEBHOOK', url: h.url, webhookId: h.id, payload })));
};
