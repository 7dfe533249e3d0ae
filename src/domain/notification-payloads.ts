/**
 * The three notification bodies, with exactly the spec's fields, in the spec's order and units:
 * transaction webhook and postback (money as strings of cents, `fee` a number of cents), cashout
 * webhook (money as strings of reais). Serialised compact; the postback is signed over these bytes.
 */

import { CASHOUT_NOTIFYING_STATUSES, type CashoutStatus } from './cashout-states.ts';
import { centsToReaisString, centsToString } from './money.ts';
import { isNotifyingStatus, type TransactionStatus } from './transaction-states.ts';

export type NotificationKind = 'TRANSACTION_WEBHOOK' | 'TRANSACTION_POSTBACK' | 'WITHDRAWAL_WEBHOOK';

/** One outbox row to write: where it goes and the exact bytes it will carry. */
export interface OutboxTarget {
  kind: NotificationKind;
  url: string;
  webhookId: number | null;
  payload: string;
}

/** A seller's permanent webhook of the matching type. */
export interface WebhookTarget {
  id: number;
  url: string;
}

export interface SaleForNotification {
  id: number;
  sellerId: number;
  amount: number;
  createdAt: Date;
  status: string;
  paymentMethod: string;
  customer: { document: string | null; email: string | null; name: string | null; phone: string | null };
  pixKey: string | null;
  boletoCode: string | null;
  /** The shipping object in CONTRACT §4 key order, or null. */
  shipping: Record<string, unknown> | null;
  items: { id: number; title: string; unitPrice: number; quantity: number; tangible: boolean }[];
  systemFee: number | null;
  externalTransactionId: string;
}

function common(s: SaleForNotification) {
  return {
    id: s.id,
    userId: s.sellerId,
    amount: centsToString(s.amount),
    date: s.createdAt.toISOString(),
    status: s.status,
    paymentMethod: s.paymentMethod,
    customerDocument: s.customer.document,
    customerEmail: s.customer.email,
    customerName: s.customer.name,
    customerPhone: s.customer.phone,
    pixKey: s.pixKey,
    boletoCode: s.boletoCode,
    shipping: s.shipping ? JSON.stringify(s.shipping) : null,
    saleItems: s.items.map((i) => ({
      id: i.id,
      saleId: s.id,
      title: i.title,
      unitPrice: centsToString(i.unitPrice),
      quantity: i.quantity,
      tangible: i.tangible,
    })),
  };
}

export function transactionWebhookPayload(s: SaleForNotification): string {
  // `fee` is the sale's systemFee, 0 while unpaid (CONTRACT §5).
  return JSON.stringify({ ...common(s), fee: s.systemFee ?? 0, transactionId: s.id, type: 'TRANSACTION' });
}

export function transactionPostbackPayload(s: SaleForNotification): string {
  return JSON.stringify({ ...common(s), externalTransactionId: s.externalTransactionId });
}

export interface CashoutForNotification {
  id: number;
  sellerId: number;
  amount: number;
  pixKey: string | null;
  pixKeyType: string | null;
  status: string;
  externalId: string | null;
  createdAt: Date;
  updatedAt: Date;
  processedAt: Date | null;
  user: { id: number; name: string; email: string };
}

export function cashoutWebhookPayload(c: CashoutForNotification): string {
  return JSON.stringify({
    id: c.id,
    userId: c.sellerId,
    amount: centsToReaisString(c.amount),
    pixKey: c.pixKey,
    pixKeyType: c.pixKeyType,
    status: c.status,
    externalId: c.externalId,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
    processedAt: c.processedAt ? c.processedAt.toISOString() : null,
    user: { id: c.user.id, name: c.user.name, email: c.user.email },
    type: 'WITHDRAWAL',
  });
}

/** Outbox rows of a transaction's status change (CONTRACT §9): its webhooks and its postback. */
export function transactionTargets(
  sale: SaleForNotification & { status: TransactionStatus },
  postbackUrl: string | null,
  hooks: WebhookTarget[],
): OutboxTarget[] {
  if (!isNotifyingStatus(sale.status) || (hooks.length === 0 && !postbackUrl)) return [];
  const targets: OutboxTarget[] = [];
  if (hooks.length > 0) {
    const payload = transactionWebhookPayload(sale);
    for (const h of hooks) targets.push({ kind: 'TRANSACTION_WEBHOOK', url: h.url, webhookId: h.id, payload });
  }
  if (postbackUrl) targets.push({ kind: 'TRANSACTION_POSTBACK', url: postbackUrl, webhookId: null, payload: transactionPostbackPayload(sale) });
  return targets;
}

/** Outbox rows of a cashout's status change: PROCESSING, COMPLETED, REJECTED, CANCELLED, to its WITHDRAWAL webhooks. */
export function cashoutTargets(cashout: CashoutForNotification & { status: CashoutStatus }, hooks: WebhookTarget[]): OutboxTarget[] {
  if (!(CASHOUT_NOTIFYING_STATUSES as readonly string[]).includes(cashout.status) || hooks.length === 0) return [];
  const payload = cashoutWebhookPayload(cashout);
  return hooks.map((h) => ({ kind: 'WITHDRAWAL_WEBHOOK', url: h.url, webhookId: h.id, payload }));
}
