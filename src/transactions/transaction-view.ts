import { Type } from 'typebox';
import type { SaleForNotification } from '../domain/notification-payloads.ts';
import type { ShippingInput } from '../domain/sale-request.ts';
import { PAYMENT_METHODS, TRANSACTION_STATUSES } from '../domain/transaction-states.ts';
import { iso, Nullable, StringEnum } from '../http/router.ts';
import type { ItemRow, TransactionRow } from './transactions-repo.ts';

const Cents = Type.Integer({ description: 'cents' });

export const Shipping = Type.Object({
  street: Type.String(),
  number: Type.String(),
  complement: Nullable(Type.String()),
  neighborhood: Type.String(),
  city: Type.String(),
  state: Type.String(),
  zipCode: Type.String(),
  fee: Cents,
});

/** GET /api/transactions/{id}: money as numbers of cents (the spec's unit for this area). */
export const Transaction = Type.Object({
  id: Type.Integer(),
  status: StringEnum(TRANSACTION_STATUSES),
  amount: Cents,
  netAmount: Nullable(Cents),
  systemFee: Nullable(Cents),
  reserveAmount: Nullable(Cents),
  refundedAmount: Type.Integer({ description: 'cents: the refunds that SUCCEEDED (0 when none)' }),
  paymentMethod: StringEnum(PAYMENT_METHODS),
  date: Type.String({ format: 'date-time' }),
  completedAt: Nullable(Type.String({ format: 'date-time' })),
  customer: Type.Object({ name: Type.String(), email: Type.String(), document: Nullable(Type.String()), phone: Nullable(Type.String()) }),
  items: Type.Array(Type.Object({ id: Type.Integer(), title: Type.String(), unitPrice: Cents, quantity: Type.Integer(), tangible: Type.Boolean() })),
  pixKey: Nullable(Type.String({ description: 'BR Code copia e cola, PIX only' })),
  cardLastFour: Nullable(Type.String()),
  cardBrand: Nullable(Type.String()),
  boletoCode: Nullable(Type.String({ description: 'linha digitável, boleto only' })),
  externalTransactionId: Type.String(),
  installments: Nullable(Type.Integer()),
  shipping: Nullable(Shipping),
});

export function transactionView(row: TransactionRow, items: ItemRow[]) {
  return {
    id: row.id,
    status: row.status,
    amount: row.amount,
    netAmount: row.net_amount,
    systemFee: row.system_fee,
    reserveAmount: row.reserve_amount,
    refundedAmount: row.refunded_amount,
    paymentMethod: row.payment_method,
    date: row.created_at.toISOString(),
    completedAt: iso(row.completed_at),
    customer: { name: row.customer_name, email: row.customer_email, document: row.customer_document, phone: row.customer_phone },
    items: items.map((i) => ({ id: i.id, title: i.title, unitPrice: i.unit_price, quantity: i.quantity, tangible: i.tangible })),
    pixKey: row.pix_code,
    cardLastFour: row.card_last_four,
    cardBrand: row.card_brand,
    boletoCode: row.boleto_code,
    externalTransactionId: row.external_transaction_id,
    installments: row.installments,
    shipping: shippingObject(row.shipping),
  };
}

/** jsonb reorders keys; the API shows shipping in the order of CONTRACT §4. */
export function shippingObject(s: ShippingInput | null) {
  if (!s) return null;
  return {
    street: s.street,
    number: s.number,
    complement: s.complement ?? null,
    neighborhood: s.neighborhood,
    city: s.city,
    state: s.state,
    zipCode: s.zipCode,
    fee: s.fee,
  };
}

/** The sale as its notifications describe it (CONTRACT §9). */
export function saleForNotification(row: TransactionRow, items: ItemRow[]): SaleForNotification & { status: TransactionRow['status'] } {
  return {
    id: row.id,
    sellerId: row.seller_id,
    amount: row.amount,
    createdAt: row.created_at,
    status: row.status,
    paymentMethod: row.payment_method,
    customer: { document: row.customer_document, email: row.customer_email, name: row.customer_name, phone: row.customer_phone },
    pixKey: row.pix_code,
    boletoCode: row.boleto_code,
    shipping: shippingObject(row.shipping),
    items: items.map((i) => ({ id: i.id, title: i.title, unitPrice: i.unit_price, quantity: i.quantity, tangible: i.tangible })),
    systemFee: row.system_fee,
    externalTransactionId: row.external_transaction_id,
  };
}
