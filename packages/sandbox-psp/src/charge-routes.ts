/**
 * Efí's Cobranças API, the boleto subset (CONTRACT §11.4): POST /v1/authorize (Basic, JSON grant),
 * POST /v1/charge/one-step, GET /v1/charge/{id}, GET /v1/charges (charge-list-routes.ts), PUT /v1/charge/{id}/cancel,
 * GET /v1/notification/{token}.
 * Answers wrapped as Efí wraps them (`{ code: 200, data }`), refusals as `{ code, error, error_description }`.
 */
import type { FastifyInstance, FastifyReply, onRequestHookHandler } from 'fastify';
import { registerListRoute, summary } from './charge-list-routes.ts';
import { ChargeRefusal, type ChargeRow, type Charges } from './charges.ts';

const wrap = (data: unknown) => ({ code: 200, data });
const refusalCodes: Record<number, number> = { 400: 3500034, 404: 3500010 };

function sendRefusal(reply: FastifyReply, e: ChargeRefusal) {
  return reply.status(e.status).send({ code: refusalCodes[e.status] ?? 3500000, error: e.error, error_description: e.description });
}
const invalid = (property: string, message: string) => ({
  code: 3500034,
  error: 'validation_error',
  error_description: { property: `/${property}`, message },
});

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The body's total in cents, or the first property that is wrong. */
function readCharge(
  body: unknown,
): { ok: true; total: number; customId: string | null; url: string | null; expireAt: string } | { ok: false; property: string; message: string } {
  if (!isObj(body) || !Array.isArray(body.items) || body.items.length === 0) return { ok: false, property: 'items', message: 'items é obrigatório' };
  let total = 0;
  for (const [i, item] of body.items.entries()) {
    if (
      !isObj(item) ||
      typeof item.name !== 'string' ||
      !Number.isSafeInteger(item.value) ||
      !Number.isSafeInteger(item.amount) ||
      (item.value as number) < 1 ||
      (item.amount as number) < 1
    )
      return { ok: false, property: `items/${i}`, message: 'item inválido' };
    total += (item.value as number) * (item.amount as number);
  }
  for (const s of Array.isArray(body.shippings) ? body.shippings : []) total += isObj(s) && Number.isSafeInteger(s.value) ? (s.value as number) : 0;
  const billet = isObj(body.payment) && isObj(body.payment.banking_billet) ? body.payment.banking_billet : null;
  if (!billet || typeof billet.expire_at !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(billet.expire_at))
    return { ok: false, property: 'payment/banking_billet/expire_at', message: 'expire_at é obrigatório (AAAA-MM-DD)' };
  const customer = isObj(billet.customer) ? billet.customer : {};
  const person = typeof customer.name === 'string' && typeof customer.cpf === 'string' && /^\d{11}$/.test(customer.cpf);
  const company = isObj(customer.juridical_person) && typeof customer.juridical_person.cnpj === 'string';
  if (!person && !company) return { ok: false, property: 'payment/banking_billet/customer', message: 'informe name e cpf, ou juridical_person' };
  const metadata = isObj(body.metadata) ? body.metadata : {};
  return {
    ok: true,
    total,
    customId: typeof metadata.custom_id === 'string' ? metadata.custom_id : null,
    url: typeof metadata.notification_url === 'string' ? metadata.notification_url : null,
    expireAt: billet.expire_at,
  };
}

function created(row: ChargeRow, base: string) {
  return {
    barcode: row.barcode,
    pix: row.pix_code ? { qrcode: row.pix_code, qrcode_image: `${base}/v1/charge/${row.charge_id}/qrcode.svg` } : undefined,
    link: `${base}/v1/charge/${row.charge_id}/link`,
    billet_link: `${base}/v1/charge/${row.charge_id}/link`,
    pdf: { charge: `${base}/v1/charge/${row.charge_id}/pdf` },
    expire_at: row.expire_at,
    charge_id: row.charge_id,
    status: row.status,
    total: row.total_cents,
    payment: 'banking_billet',
  };
}

function detail(row: ChargeRow, base: string) {
  return {
    charge_id: row.charge_id,
    ...summary(row),
    notification_url: row.notification_url,
    items: [{ name: 'Venda', value: row.total_cents, amount: 1 }],
    history: row.history.map((h) => ({ message: `Cobrança ${h.status}`, created_at: h.at })),
    payment: {
      method: 'banking_billet',
      created_at: row.created_at.toISOString(),
      message: null,
      ...(row.paid_cents === null ? {} : { paid_value: row.paid_cents }),
      banking_billet: {
        barcode: row.barcode,
        link: `${base}/v1/charge/${row.charge_id}/link`,
        pdf: { charge: `${base}/v1/charge/${row.charge_id}/pdf` },
        expire_at: row.expire_at,
      },
    },
  };
}

type RouteDeps = { charges: Charges; base: () => string; bearer: onRequestHookHandler };

function history(row: ChargeRow) {
  return row.history.map((h) => ({
    id: h.id,
    type: 'charge',
    custom_id: row.custom_id,
    status: { current: h.status, previous: h.previous },
    identifiers: { charge_id: row.charge_id },
    created_at: h.at.replace('T', ' ').slice(0, 19),
    ...(h.value === undefined ? {} : { value: h.value }),
  }));
}

export function registerChargeRoutes(app: FastifyInstance, o: RouteDeps): void {
  const api = { onRequest: o.bearer };
  const id = (text: string) => (/^[1-9]\d{0,14}$/.test(text) ? Number(text) : null);
  const refusing = (reply: FastifyReply, e: unknown) => {
    if (e instanceof ChargeRefusal) return sendRefusal(reply, e);
    throw e;
  };

  app.post('/v1/charge/one-step', api, async (request, reply) => {
    const read = readCharge(request.body);
    if (!read.ok) return reply.status(400).send(invalid(read.property, read.message));
    try {
      const row = await o.charges.create({
        totalCents: read.total,
        customId: read.customId,
        notificationUrl: read.url,
        expireAt: read.expireAt,
        request: request.body,
      });
      return wrap(created(row, o.base()));
    } catch (e) {
      return refusing(reply, e);
    }
  });

  registerListRoute(app, o);

  app.get<{ Params: { id: string } }>('/v1/charge/:id', api, async (request, reply) => {
    const chargeId = id(request.params.id);
    const row = chargeId === null ? null : await o.charges.find(chargeId);
    if (!row) return reply.status(404).send({ code: 3500010, error: 'charge_not_found', error_description: 'Cobrança não encontrada.' });
    return wrap(detail(row, o.base()));
  });

  app.put<{ Params: { id: string } }>('/v1/charge/:id/cancel', api, async (request, reply) => {
    const chargeId = id(request.params.id);
    if (chargeId === null) return reply.status(404).send({ code: 3500010, error: 'charge_not_found', error_description: 'Cobrança não encontrada.' });
    try {
      await o.charges.cancel(chargeId);
      return { code: 200 };
    } catch (e) {
      return refusing(reply, e);
    }
  });

  // The slip a payer prints: public, as Efí's PDF links are.
  app.get<{ Params: { id: string } }>('/v1/charge/:id/pdf', async (request, reply) => {
    const chargeId = id(request.params.id);
    const row = chargeId === null ? null : await o.charges.find(chargeId);
    if (!row) return reply.status(404).send({ code: 3500010, error: 'charge_not_found', error_description: 'Cobrança não encontrada.' });
    const lines = [
      `Boleto (sandbox) - cobranca ${row.charge_id}`,
      `Linha digitavel: ${row.barcode}`,
      `Valor: ${(row.total_cents / 100).toFixed(2)}`,
      `Vencimento: ${row.expire_at}`,
    ];
    return reply.type('application/pdf').send(textPdf(lines));
  });

  app.get<{ Params: { token: string } }>('/v1/notification/:token', api, async (request, reply) => {
    const row = /^[0-9a-f]{32}$/.test(request.params.token) ? await o.charges.notification(request.params.token) : null;
    if (!row) return reply.status(404).send({ code: 3500010, error: 'notification_not_found', error_description: 'Notificação não encontrada.' });
    return wrap(history(row));
  });
}

/** A one-page PDF of a few lines of ASCII text (Helvetica): enough for a sandbox slip a browser opens. */
export function textPdf(lines: string[]): Buffer {
  const pdfText = (t: string) => t.replace(/[^\x20-\x7e]/g, '?').replace(/[\\()]/g, (c) => `\\${c}`);
  const stream = `BT /F1 12 Tf 50 780 Td 18 TL ${lines.map((l) => `(${pdfText(l)}) '`).join(' ')} ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((obj, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${obj}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
