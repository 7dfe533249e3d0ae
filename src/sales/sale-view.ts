import { Type } from 'typebox';
import { centsToString } from '../domain/money.ts';
import { iso } from '../http/router.ts';
import { shippingObject } from '../transactions/transaction-view.ts';
import type { CreatedSale } from './create-sale.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** POST /api/sales answer: money as strings of cents, shipping as JSON text (the spec's units). */
export const SaleCreated = Type.Object({
  message: Type.String(),
  sale: Type.Object({
    id: Type.Integer(),
    status: Type.String(),
    amount: Type.String({ description: 'cents as string' }),
    paymentMethod: Type.String(),
    customer: Type.Object({ name: Type.String(), email: Type.String(), document: Nullable(Type.String()), phone: Nullable(Type.String()) }),
    payment: Type.Object({
      method: Type.String(),
      installments: Nullable(Type.Integer()),
      pix: Nullable(Type.Object({ key: Type.String(), qrCodeBase64: Type.String(), expiresAt: Nullable(Type.String()) })),
      boleto: Nullable(Type.Object({ code: Type.String(), barcode: Type.String(), dueDate: Type.String() })),
    }),
    shipping: Nullable(Type.String({ description: 'JSON text of the shipping object' })),
    createdAt: Type.String(),
  }),
});

export function saleCreatedView({ row, qrCodeBase64 }: CreatedSale) {
  const shipping = shippingObject(row.shipping);
  return {
    message: 'Sale created',
    sale: {
      id: row.id,
      status: row.status,
      amount: centsToString(row.amount),
      paymentMethod: row.payment_method,
      customer: { name: row.customer_name, email: row.customer_email, document: row.customer_document, phone: row.customer_phone },
      payment: {
        method: row.payment_method,
        installments: row.installments,
        pix: row.pix_code ? { key: row.pix_code, qrCodeBase64: qrCodeBase64!, expiresAt: iso(row.pix_expires_at) } : null,
        boleto: row.boleto_code ? { code: row.boleto_code, barcode: row.boleto_barcode!, dueDate: row.boleto_due_date! } : null,
      },
      shipping: shipping ? JSON.stringify(shipping) : null,
      createdAt: row.created_at.toISOString(),
    },
  };
}
