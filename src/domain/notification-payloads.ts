/**
 * The three notification bodies, with exactly the spec's fields, in the spec's order and units:
 * transaction webhook and postback (money as strings of cents, `fee` a number of cents), cashout
 * webhook (money as strings of reais). Serialised compact; the postback is signed over these bytes.
 */
import { centsToReaisString, centsToString } from './money.ts';

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
    saleItems: s.items.map((i) => ({ id: i.id, saleId: s.id, title: i.title, unitPrice: centsToString(i.unitPrice), quantity: i.quantity, tangible: i.tangible })),
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
