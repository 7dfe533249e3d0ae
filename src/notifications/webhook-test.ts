/**
 * "Enviar teste" (CONTRACT §12, POST /api/webhooks/{id}/test): one notification of the webhook's
 * type with a fixed sample body, in exactly the shape of the real one, marked by the header
 * X-Test-Event: true. It goes through the outbox and the delivery worker like any other (retries,
 * address guard, delivery log, resend), about no resource: its ids are null and its order key is
 * its own, so it never waits for, nor holds back, a resource's notifications.
 */
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.ts';
import type { Queryable } from '../db/db.ts';
import { maybeOne, one, run, sql } from '../db/sql.ts';
import { cashoutWebhookPayload, type NotificationKind, transactionWebhookPayload } from '../domain/notification-payloads.ts';
import { buildBrCode } from '../domain/pix-brcode.ts';
import { ok, type Refused, type Result, refuse } from '../domain/result.ts';
import type { NotificationRow } from './delivery-log.ts';
import { type NotificationView, notificationView } from './notification-view.ts';
import { NOTIFICATIONS_CHANNEL } from './outbox.ts';
import type { WebhookType } from './webhooks.ts';

// Sample ids are 0: no real transaction or cashout has it, so a receiver that acts on ids finds nothing.
const sample_id = 0;
const sample_amount_cents = 15000;
const sample_pix_code = buildBrCode({
  key: 'pagamentos@example.com',
  amountCents: sample_amount_cents,
  merchantName: 'LOJA EXEMPLO',
  merchantCity: 'SAO PAULO',
  txid: 'TESTE',
});

interface Seller {
  id: number;
  name: string;
  email: string;
}

interface Sample {
  kind: NotificationKind;
  status: string;
  previous: string;
  payload: string;
}

/** A paid PIX sale of R$ 150,00 (PENDENTE → PAGO), as the TRANSACTION webhook sends it. */
function transactionSample(seller: Seller, now: Date): Sample {
  const payload = transactionWebhookPayload({
    id: sample_id,
    sellerId: seller.id,
    amount: sample_amount_cents,
    createdAt: now,
    status: 'PAGO',
    paymentMethod: 'PIX',
    customer: { document: '52998224725', email: 'cliente@example.com', name: 'Cliente Exemplo', phone: '11987654321' },
    pixKey: sample_pix_code,
    boletoCode: null,
    shipping: null,
    items: [{ id: sample_id, title: 'Produto de teste', unitPrice: sample_amount_cents, quantity: 1, tangible: false }],
    systemFee: 298,
    externalTransactionId: 'TESTE',
  });
  return { kind: 'TRANSACTION_WEBHOOK', status: 'PAGO', previous: 'PENDENTE', payload };
}

/** A completed cashout of R$ 150,00 to an e-mail key (PROCESSING → COMPLETED), as the WITHDRAWAL webhook sends it. */
function cashoutSample(seller: Seller, now: Date): Sample {
  const payload = cashoutWebhookPayload({
    id: sample_id,
    sellerId: seller.id,
    amount: sample_amount_cents,
    pixKey: 'cliente@example.com',
    pixKeyType: 'EMAIL',
    status: 'COMPLETED',
    externalId: 'TESTE',
    createdAt: now,
    updatedAt: now,
    processedAt: now,
    user: { id: seller.id, name: seller.name, email: seller.email },
  });
  return { kind: 'WITHDRAWAL_WEBHOOK', status: 'COMPLETED', previous: 'PROCESSING', payload };
}

/** The webhook's type; one with both gets the TRANSACTION sample. */
function testSample(types: readonly WebhookType[], seller: Seller, now: Date): Sample {
  return types.includes('TRANSACTION') ? transactionSample(seller, now) : cashoutSample(seller, now);
}

// A test is retried like any notification (days, to a dead URL): a few a minute is all a seller needs.
const tests_per_minute = 10;
/** The wait a refusal over the limit announces (Retry-After): the minute the limit counts. */
export const tests_retry_after_s = 60;

/** 429 once the seller queued `tests_per_minute` tests in the last minute (the row lock serialises the count). */
async function testRateRefusal(q: Queryable, sellerId: number, now: Date): Promise<Refused | null> {
  await run(q, sql`SELECT 1 FROM sellers WHERE id = ${sellerId} FOR UPDATE`);
  const recent = one(
    await run<{ n: number }>(
      q,
      sql`SELECT count(*)::int AS n FROM notifications WHERE seller_id = ${sellerId} AND test AND created_at > ${new Date(now.getTime() - 60_000)}`,
    ),
  ).n;
  if (recent < tests_per_minute) return null;
  return refuse('RATE_LIMITED', `At most ${tests_per_minute} test notifications a minute; try again shortly`);
}

/**
 * Queues one test notification to the seller's webhook `webhookId` and answers it as the delivery
 * log lists it. 404 unknown or removed, 403 another seller's (as removing a webhook answers).
 */
export async function sendTestNotification(ctx: AppContext, sellerId: number, webhookId: number, now: Date): Promise<Result<NotificationView>> {
  return ctx.db.tx(async (q): Promise<Result<NotificationView>> => {
    // Shared lock: a removal waits for this queueing to end, and a removed webhook is not found.
    const hook = maybeOne(
      await run<{ seller_id: number; url: string; types: WebhookType[]; name: string; email: string }>(
        q,
        sql`SELECT w.seller_id, w.url, w.types, s.name, s.email FROM webhooks w JOIN sellers s ON s.id = w.seller_id
            WHERE w.id = ${webhookId} AND w.deleted_at IS NULL FOR SHARE OF w`,
      ),
    );
    if (!hook) return refuse('NOT_FOUND', 'Webhook not found');
    if (hook.seller_id !== sellerId) return refuse('FORBIDDEN', 'This webhook belongs to another account');
    const limited = await testRateRefusal(q, sellerId, now);
    if (limited) return limited;
    const sample = testSample(hook.types, { id: sellerId, name: hook.name, email: hook.email }, now);
    const eventId = randomUUID();
    // Its own order key: no resource's line to join or to hold up.
    const orderKey = `test:${eventId}`;
    const row = one(
      await run<NotificationRow>(
        q,
        sql`INSERT INTO notifications (seller_id, kind, event_id, url, webhook_id, transaction_id, cashout_id, event_status,
              previous_status, status_changed_at, payload, order_key, next_attempt_at, created_at, test)
            VALUES (${sellerId}, ${sample.kind}, ${eventId}, ${hook.url}, ${webhookId}, NULL, NULL, ${sample.status}, ${sample.previous},
              ${now}, ${sample.payload}, ${orderKey}, ${now}, ${now}, true)
            RETURNING *`,
      ),
    );
    // Wakes the delivery workers at commit: the test goes out in milliseconds.
    await run(q, sql`SELECT pg_notify(${NOTIFICATIONS_CHANNEL}, ${''})`);
    return ok(notificationView(row));
  });
}
