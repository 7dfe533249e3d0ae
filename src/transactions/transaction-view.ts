import { Type } from 'typebox';
import type { SaleForNotification } from '../domain/notification-payloads.ts';
import type { ShippingInput } from '../domain/sale-request.ts';
import { PAYMENT_METHODS, TRANSACTION_STATUSES } from '../domain/transaction-states.ts';
import { iso, Nullable, StringEnum } from '../http/router.ts';
import { Med, medView } from './med-view.ts';
import type { ItemRow, ShownRow, TransactionRow } from './transactions-repo.ts';

const Cents = Type.Integer({ description: 'cents' });
const nullableCents = (description: string) => Nullable(Type.Integer({ description }));

/** A sale's delivery address and fee, as the transaction read returns it (CONTRACT §4). */
export const Shipping = Type.Object(
  {
    street: Type.String(),
    number: Type.String(),
    complement: Nullable(Type.String()),
    neighborhood: Type.String(),
    city: Type.String(),
    state: Type.String({ description: 'UF, two letters' }),
    zipCode: Type.String({ description: 'CEP, 8 digits' }),
    fee: Type.Integer({ description: 'cents, included in the amount' }),
  },
  { title: 'Shipping' },
);

/** The customer as sales and transactions show it. */
export const Customer = Type.Object(
  {
    name: Type.String(),
    email: Type.String(),
    document: Nullable(Type.String({ description: 'CPF or CNPJ, normalised (no punctuation)' })),
    phone: Nullable(Type.String({ description: 'digits only' })),
  },
  { title: 'Customer' },
);

const TransactionItem = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    unitPrice: Cents,
    quantity: Type.Integer(),
    tangible: Type.Boolean({ description: 'true: a physical product; false: digital' }),
  },
  { title: 'TransactionItem' },
);

/** GET /api/transactions/{id}: money as numbers of cents (the spec's unit for this area). */
export const Transaction = Type.Object(
  {
    id: Type.Integer({ description: 'the sale id' }),
    status: StringEnum(TRANSACTION_STATUSES),
    amount: Type.Integer({ description: 'gross, cents' }),
    netAmount: nullableCents('cents credited to the seller at the first payment (after fees and reserve); null until paid'),
    systemFee: nullableCents('fees, cents; null until paid'),
    reserveAmount: nullableCents('cents of the financial reserve held from the net at the first payment; null until paid'),
    refundedAmount: Type.Integer({ description: 'cents: the refunds that SUCCEEDED (0 when none)' }),
    paymentMethod: StringEnum(PAYMENT_METHODS),
    date: Type.String({ format: 'date-time', description: 'creation time' }),
    completedAt: Nullable(Type.String({ format: 'date-time', description: 'the first payment; null for a sale never paid' })),
    customer: Customer,
    items: Type.Array(TransactionItem),
    pixKey: Nullable(Type.String({ description: 'the BR Code copia e cola, PIX only' })),
    cardLastFour: Nullable(Type.String({ description: 'card only' })),
    cardBrand: Nullable(Type.String({ description: 'card only: VISA, MASTERCARD, ELO, AMEX, HIPERCARD or DINERS' })),
    authenticated: Nullable(
      Type.Boolean({
        description:
          'card only (addition): whether the shopper passed 3-D Secure; false when it failed or never came back, null when none was asked or the answer is not in yet',
      }),
    ),
    boletoCode: Nullable(Type.String({ description: 'the 47-digit linha digitável, boleto only' })),
    boletoPdfUrl: Nullable(Type.String({ description: "the boleto's PDF at its issuer, when it made one" })),
    boletoPixKey: Nullable(Type.String({ description: 'the BR Code that pays the boleto by Pix (boleto híbrido), when its issuer made one' })),
    externalTransactionId: Type.String({ description: "the id at the provider: the PIX charge's txid, the card processor's reference" }),
    installments: Nullable(Type.Integer({ description: 'credit card only' })),
    shipping: Nullable(Shipping),
    med: Nullable(Med),
  },
  { title: 'Transaction', description: 'A sale as read: money in numbers of cents.' },
);

export function transactionView(row: ShownRow, items: ItemRow[]) {
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
    authenticated: row.authenticated ?? null,
    boletoCode: row.boleto_code,
    boletoPdfUrl: row.boleto_pdf_url,
    boletoPixKey: row.boleto_pix_code,
    externalTransactionId: row.external_transaction_id,
    installments: row.installments,
    shipping: shippingObject(row.shipping),
    med: medView(row),
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
