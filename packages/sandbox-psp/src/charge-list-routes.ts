/**
 * GET /v1/charges of Efí's Cobranças API (the SDK's ListChargesParamsSchema and
 * ListChargesResponseSchema): the boletos made, paid or due between two São Paulo days
 * (`date_of` creation, payment or expired), filtered by custom_id or status, a page at a time
 * (`limit`, `page` from 1). The gateway asks it for a boleto an earlier attempt made, and for a
 * day's paid boletos to reconcile (CONTRACT §11.4, §15).
 */
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { ChargeFilter, ChargeRow, Charges } from './charges.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const invalid = (property: string, message: string) => ({
  code: 3500034,
  error: 'validation_error',
  error_description: { property: `/${property}`, message },
});

const BRT_MS = 3 * 3_600_000;
/** "YYYY-MM-DD HH:MM:SS" in São Paulo time (UTC−3 all year since 2019), as Efí writes its times. */
export const saoPauloTime = (at: Date) => new Date(at.getTime() - BRT_MS).toISOString().replace('T', ' ').slice(0, 19);

/** What the detail and the list say alike; created_at in Efí's format, in UTC where Efí writes São Paulo time (the gateway reads it nowhere). */
export const summary = (row: ChargeRow) => ({
  total: row.total_cents,
  status: row.status,
  custom_id: row.custom_id,
  created_at: row.created_at.toISOString().replace('T', ' ').slice(0, 19),
});

/** The customer as the list shows it: a person's name and CPF, or a company's name and CNPJ. */
function listedCustomer(customer: unknown) {
  const c = isObj(customer) ? customer : {};
  const phone = typeof c.phone_number === 'string' ? c.phone_number : null;
  const company = isObj(c.juridical_person) ? c.juridical_person : null;
  return company
    ? { phone_number: phone, cnpj: String(company.cnpj ?? ''), corporate_name: String(company.corporate_name ?? '') }
    : { phone_number: phone, cpf: String(c.cpf ?? ''), name: String(c.name ?? '') };
}

function listed(row: ChargeRow & { customer: unknown }, base: string) {
  return {
    id: row.charge_id,
    ...summary(row),
    customer: listedCustomer(row.customer),
    payment: {
      payment_method: 'banking_billet',
      // Read by reconciliation as the payment's time: São Paulo time, as Efí writes it.
      paid_at: row.paid_at ? saoPauloTime(row.paid_at) : null,
      ...(row.paid_cents === null ? {} : { paid_value: row.paid_cents }),
      banking_billet: {
        barcode: row.barcode,
        ...(row.pix_code ? { pix: { qrcode: row.pix_code, qrcode_image: `${base}/v1/charge/${row.charge_id}/qrcode.svg` } } : {}),
        link: `${base}/v1/charge/${row.charge_id}/link`,
        pdf: { charge: `${base}/v1/charge/${row.charge_id}/pdf` },
        expire_at: row.expire_at,
      },
    },
  };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const CHARGE_TYPES = ['billet', 'carnet', 'subscription', 'card'];
const DATES_OF = ['creation', 'payment', 'expired'];
const STATUSES = ['new', 'waiting', 'link', 'paid', 'unpaid', 'canceled', 'identified', 'settled', 'expired'];

function count(text: string | undefined, fallback: number, min: number, max: number): number | null {
  if (text === undefined) return fallback;
  const n = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
  return n >= min && n <= max ? n : null;
}

/** The query, or the error answer naming the first parameter that is wrong. */
function readQuery(q: Record<string, string | undefined>): { type: string; filter: ChargeFilter } | ReturnType<typeof invalid> {
  if (!CHARGE_TYPES.includes(q.charge_type ?? '')) return invalid('charge_type', 'charge_type é obrigatório');
  for (const name of ['begin_date', 'end_date'] as const)
    if (!DAY.test(q[name] ?? '') || Number.isNaN(Date.parse(q[name]!))) return invalid(name, `${name} é obrigatório (AAAA-MM-DD)`);
  if (q.date_of !== undefined && !DATES_OF.includes(q.date_of)) return invalid('date_of', 'date_of é creation, payment ou expired');
  if (q.status !== undefined && !STATUSES.includes(q.status)) return invalid('status', 'status inválido');
  const limit = count(q.limit, 100, 1, 1000);
  const page = count(q.page, 1, 1, 1_000_000);
  if (limit === null) return invalid('limit', 'limit é um inteiro de 1 a 1000');
  if (page === null) return invalid('page', 'page é um inteiro a partir de 1');
  const dateOf = (q.date_of ?? 'creation') as ChargeFilter['dateOf'];
  const filter = { dateOf, from: q.begin_date!, to: q.end_date!, customId: q.custom_id ?? null, status: q.status ?? null, limit, page };
  return { type: q.charge_type!, filter };
}

export function registerListRoute(app: FastifyInstance, o: { charges: Charges; base: () => string; bearer: onRequestHookHandler }): void {
  app.get<{ Querystring: Record<string, string | undefined> }>('/v1/charges', { onRequest: o.bearer }, async (request, reply) => {
    const read = readQuery(request.query);
    if ('error' in read) return reply.status(400).send(read);
    const { type, filter } = read;
    // The PSP issues boletos only: a list of another kind of charge is empty.
    const rows = type === 'billet' ? await o.charges.list(filter) : [];
    const pagination = { limit: filter.limit, offset: (filter.page - 1) * filter.limit, page: filter.page };
    return {
      code: 200,
      data: rows.map((row) => listed(row, o.base())),
      params: { begin_date: filter.from, end_date: filter.to, pagination },
    };
  });
}
