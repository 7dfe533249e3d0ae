import { Type } from 'typebox';
import { centsToString } from '../domain/money.ts';
import { PAYMENT_METHODS, TRANSACTION_STATUSES } from '../domain/transaction-states.ts';
import { iso, Nullable, StringEnum } from '../http/router.ts';
import { Customer, shippingObject } from '../transactions/transaction-view.ts';
import type { CreatedSale } from './create-sale.ts';

const SalePix = Type.Object(
  {
    key: Type.String({ description: 'the BR Code "copia e cola" text' }),
    qrCodeBase64: Type.String({ description: 'a data URI, data:image/png;base64,…, of the QR of exactly that text' }),
    expiresAt: Nullable(Type.String({ format: 'date-time', description: 'null: a static code that does not expire' })),
    txid: Type.String({
      description: "the charge's txid at the PSP, the transaction's externalTransactionId (addition; POST /sandbox/pix/{txid}/pay takes it)",
    }),
  },
  { title: 'SalePix' },
);

const SaleBoleto = Type.Object(
  {
    code: Type.String({ description: 'the 47-digit linha digitável' }),
    barcode: Type.String({ description: 'the 44-digit barcode' }),
    dueDate: Type.String({ format: 'date', description: 'YYYY-MM-DD' }),
    pdfUrl: Nullable(Type.String({ format: 'uri', description: 'the slip as a PDF at its issuer (null when it makes none)' })),
    pix: Nullable(
      Type.Object(
        {
          key: Type.String({ description: 'the BR Code copia e cola that pays this boleto by Pix (boleto híbrido)' }),
          qrCodeBase64: Type.String({ description: 'data:image/png;base64, QR of exactly `key`' }),
        },
        { title: 'SaleBoletoPix' },
      ),
    ),
  },
  { title: 'SaleBoleto' },
);

const SaleCard = Type.Object(
  {
    authentication: Nullable(
      Type.Object(
        {
          status: StringEnum(['REQUIRED'] as const, { description: 'the shopper must go to `url` now' }),
          url: Type.String({
            format: 'uri',
            description: "where the shopper's browser goes: the gateway forwards it to its issuer and back to the sale's returnUrl",
          }),
          expiresAt: Type.String({ format: 'date-time', description: 'a sale whose shopper has not come back by then is CANCELADO' }),
        },
        { title: 'SaleCardAuthentication' },
      ),
    ),
  },
  {
    title: 'SaleCard',
    'x-description':
      'CREDIT_CARD and DEBIT_CARD (addition): `authentication` is set for a sale sent with `authentication` (3-D Secure), null otherwise. When the issuer asks nothing the page sends the shopper straight back with the status.',
  },
);

/** The spec's Sale: money as strings of cents, shipping as JSON text (the spec's units). */
const Sale = Type.Object(
  {
    id: Type.Integer(),
    status: StringEnum(TRANSACTION_STATUSES, { description: 'always PENDENTE at creation; a card sale then moves on through the processor' }),
    amount: Type.String({ pattern: '^\\d+$', description: 'cents, as a string' }),
    paymentMethod: StringEnum(PAYMENT_METHODS),
    customer: Customer,
    payment: Type.Object(
      {
        method: StringEnum(PAYMENT_METHODS),
        installments: Nullable(Type.Integer({ description: 'CREDIT_CARD only' })),
        pix: Nullable(SalePix),
        boleto: Nullable(SaleBoleto),
        card: Nullable(SaleCard),
      },
      { title: 'SalePayment' },
    ),
    shipping: Nullable(Type.String({ description: 'the JSON text of the shipping object; null for a digital sale' })),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Sale' },
);

/** POST /api/sales answer. */
export const SaleCreated = Type.Object({ message: Type.String(), sale: Sale }, { title: 'SaleCreated' });

/** The shopper's 3-D Secure page of a sale (CONTRACT §11.2). */
export const authenticationUrl = (publicBaseUrl: string, token: string) => `${publicBaseUrl}/checkout/3ds/${token}`;

export function saleCreatedView({ id, sale, createdAt, installments, pix, boleto, authentication }: CreatedSale, publicBaseUrl: string) {
  const card = sale.paymentMethod === 'CREDIT_CARD' || sale.paymentMethod === 'DEBIT_CARD';
  const shipping = shippingObject(sale.shipping);
  return {
    message: 'Sale created',
    sale: {
      id,
      status: 'PENDENTE',
      amount: centsToString(sale.amount),
      paymentMethod: sale.paymentMethod,
      customer: { name: sale.customer.name, email: sale.customer.email, document: sale.customer.document, phone: sale.customer.phone },
      payment: {
        method: sale.paymentMethod,
        installments,
        pix: pix ? { key: pix.code, qrCodeBase64: pix.qrCodeBase64, expiresAt: iso(pix.expiresAt), txid: pix.txid } : null,
        boleto,
        card: card
          ? {
              authentication: authentication && {
                status: 'REQUIRED',
                url: authenticationUrl(publicBaseUrl, authentication.token),
                expiresAt: authentication.expiresAt.toISOString(),
              },
            }
          : null,
      },
      shipping: shipping ? JSON.stringify(shipping) : null,
      createdAt: createdAt.toISOString(),
    },
  };
}
