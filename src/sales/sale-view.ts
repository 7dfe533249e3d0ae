import { Type } from 'typebox';
import { centsToString } from '../domain/money.ts';
import { iso, Nullable } from '../http/router.ts';
import { shippingObject } from '../transactions/transaction-view.ts';
import type { CreatedSale } from './create-sale.ts';

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

export function saleCreatedView({ id, sale, createdAt, installments, pix, boleto }: CreatedSale) {
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
        pix: pix ? { key: pix.code, qrCodeBase64: pix.qrCodeBase64, expiresAt: iso(pix.expiresAt) } : null,
        boleto,
      },
      shipping: shipping ? JSON.stringify(shipping) : null,
      createdAt: createdAt.toISOString(),
    },
  };
}
