/** A sale's page as the seller reads it: every code in words, money in reais, dates in São Paulo time. */

import { formatDigitableLine } from '../domain/boleto.ts';
import type { ShippingInput } from '../domain/sale-request.ts';
import { authenticationLabel, saleStatusLabel } from './authentication.ts';
import { formatDocument, formatPhone, reais, whenSaoPaulo } from './format.ts';
import {
  announcedStatus,
  deliveryInWords,
  labelOf,
  notification_kinds,
  payment_methods,
  refund_statuses,
  sale_events,
  sale_statuses,
} from './labels.ts';
import type { saleDetail } from './sale-detail.ts';
import { justification_limits, justification_rule, medSection } from './sale-med.ts';

type Detail = Extract<Awaited<ReturnType<typeof saleDetail>>, { ok: true }>['value'];

export function saleView(d: Detail) {
  const { row, sale } = d;
  return {
    sale,
    status: saleStatusLabel(row.status, d.awaiting, row.last_event),
    authentication: authenticationLabel(sale.authenticated),
    created: labelOf(sale_statuses, 'PENDENTE'),
    method: labelOf(payment_methods, row.payment_method),
    when: whenSaoPaulo(row.created_at),
    customer: {
      name: sale.customer.name,
      email: sale.customer.email,
      document: sale.customer.document ? formatDocument(sale.customer.document) : null,
      phone: sale.customer.phone ? formatPhone(sale.customer.phone) : null,
    },
    money: {
      amount: reais(row.amount),
      fee: row.system_fee === null ? '—' : reais(row.system_fee),
      net: row.net_amount === null ? '—' : reais(row.net_amount),
      refunded: reais(row.refunded_amount),
      refundable: reais(d.refundable),
    },
    items: sale.items.map((i) => ({ ...i, unitPrice: reais(i.unitPrice) })),
    shipping: row.shipping ? { address: addressOf(row.shipping), fee: reais(row.shipping.fee) } : null,
    // The linha digitável grouped as banks print it (5.5 5.6 5.6 1 14).
    boletoLine: row.boleto_code ? formatDigitableLine(row.boleto_code.replace(/[.\s]/g, '')) : null,
    pixExpiry: pixExpiryOf(row),
    qr: d.qr,
    history: d.history.map((h) => ({
      when: whenSaoPaulo(h.created_at),
      from: labelOf(sale_statuses, h.from_status),
      to: saleStatusLabel(h.to_status, false, h.event),
      event: labelOf(sale_events, h.event),
    })),
    refunds: d.refunds.map((r) => ({
      id: r.id,
      amount: reais(r.amount),
      status: labelOf(refund_statuses, r.status),
      reason: r.failure_reason,
      when: whenSaoPaulo(r.created_at),
    })),
    notifications: d.notifications.map((n) => ({
      when: whenSaoPaulo(n.created_at),
      kind: labelOf(notification_kinds, n.kind),
      url: n.url,
      event: announcedStatus(n.kind, n.event_status),
      delivery: deliveryInWords(n.status, n.attempts, n.last_response_status),
    })),
    med: medSection(row, sale.med),
    justification: { ...justification_limits, rule: justification_rule },
    refundPending: row.refund_pending > 0,
    canRefund: row.status === 'PAGO' && d.refundable > 0 && row.refund_pending === 0,
    canCancel: row.status === 'PENDENTE' || row.status === 'FALHA',
  };
}

/** A shipping address on one line: "Rua X, 100, apto 1 · Centro · São Paulo/SP · CEP 01310-100". */
function addressOf(s: ShippingInput): string {
  const street = [s.street, s.number, s.complement].filter((p) => p).join(', ');
  const zip = /^\d{8}$/.test(s.zipCode) ? `${s.zipCode.slice(0, 5)}-${s.zipCode.slice(5)}` : s.zipCode;
  return `${street} · ${s.neighborhood} · ${s.city}/${s.state} · CEP ${zip}`;
}

/** When a PIX sale's code stops being payable: a static code never does. Null for other methods. */
function pixExpiryOf(row: Detail['row']): string | null {
  if (row.payment_method !== 'PIX' || !row.pix_code) return null;
  if (row.pix_charge === 'STATIC') return 'Não expira (código estático)';
  return row.pix_expires_at ? `${whenSaoPaulo(row.pix_expires_at)} (horário de Brasília)` : 'Não expira';
}
