/**
 * Efí's Cobranças API, the boleto subset (CONTRACT §11.4): a one-step charge, its cancel, its detail
 * and a notification's history. Called through the API Pix client's transport (one pool, one token
 * cache, deadlines; the token asked for at /v1/authorize with a JSON grant and no client certificate).
 * Efí wraps every answer as `{ code, data }`; answers are checked for what the gateway reads.
 */
import { AnswerError } from '../api-pix/client/api-pix-answers.ts';
import { ApiPixError, type PixTransport } from '../api-pix/client/api-pix-client.ts';

/** POST /v1/charge/one-step with a banking_billet payment (the SDK's CreateOneStepChargeBody). */
export interface OneStepChargeBody {
  items: { name: string; value: number; amount: number }[];
  shippings?: { name: string; value: number }[];
  metadata: { custom_id: string; notification_url?: string };
  payment: {
    banking_billet: {
      customer: {
        name?: string;
        cpf?: string;
        email?: string;
        phone_number?: string;
        juridical_person?: { corporate_name: string; cnpj: string };
        address?: { street: string; number: string; neighborhood: string; zipcode: string; city: string; complement?: string | null; state: string };
      };
      expire_at: string;
    };
  };
}

export interface ChargeIssued {
  chargeId: number;
  /** The linha digitável as Efí writes it (dots and spaces). */
  barcode: string;
  pdfUrl: string | null;
  /** The boleto híbrido's Pix: its BR Code, when Efí made one. */
  pixCode: string | null;
  status: string;
}

/** A status of a charge's history, as a notification or the charge's detail tells it. */
export interface ChargeChange {
  /** Efí's id of this change (a notification's `id`); null when read off the charge's detail. */
  id: number | null;
  chargeId: number;
  customId: string | null;
  status: string;
  /** The value paid, in cents (paid/settled), when given. */
  value: number | null;
  at: string;
}

export interface ChargeDetail {
  chargeId: number;
  customId: string | null;
  status: string;
  total: number;
  paidValue: number | null;
}

/** A boleto charge as GET /v1/charges lists it. */
export interface ChargeListed extends ChargeIssued {
  customId: string | null;
  /** In cents. */
  total: number;
  /** The due date, YYYY-MM-DD. */
  expireAt: string;
}

/** A boleto as GET /v1/charges lists those paid on a day: what was paid, and when, as Efí writes it. */
export interface ChargePaid {
  chargeId: number;
  customId: string | null;
  status: string;
  /** In cents, as every amount here. */
  total: number;
  paidValue: number | null;
  /** payment.paid_at: São Paulo time "YYYY-MM-DD HH:MM:SS" (or a date, or RFC 3339), null when absent. */
  paidAt: string | null;
}

/** What reconciliation reads of the charges account (CONTRACT §15). */
export interface EfiChargeReads {
  /** GET /v1/charges: one page (from 1) of the boletos paid between two São Paulo days (YYYY-MM-DD, inclusive). */
  paidBoletos(days: { from: string; to: string }, page: number, limit: number): Promise<{ limit: number; charges: ChargePaid[] }>;
  /** Every page of it (100 a page unless told, at most 10,000 pages). */
  paidBoletoPages(days: { from: string; to: string }, limit?: number): AsyncGenerator<ChargePaid[]>;
}

export interface EfiChargesClient {
  createOneStep(body: OneStepChargeBody): Promise<ChargeIssued>;
  /** GET /v1/charges: the boletos created between two days (YYYY-MM-DD, inclusive) whose custom_id is this one. */
  boletosOf(customId: string, days: { from: string; to: string }): Promise<ChargeListed[]>;
  cancel(chargeId: number): Promise<void>;
  detail(chargeId: number): Promise<ChargeDetail>;
  notification(token: string): Promise<ChargeChange[]>;
}

type Obj = Record<string, unknown>;
const TOKEN = /^[A-Za-z0-9-]{1,100}$/;

function object(value: unknown, path: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AnswerError(`${path} is not an object`);
  return value as Obj;
}
const data = (body: unknown): unknown => object(body, 'answer').data;
/** An optional object of the answer: empty when absent or not an object. */
const objectOr = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const integer = (v: unknown, path: string): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new AnswerError(`${path} is not an integer`);
  return v;
};
const cents = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null);

function readIssued(body: unknown): ChargeIssued {
  const d = object(data(body), 'data');
  const barcode = text(d.barcode);
  if (!barcode) throw new AnswerError('data.barcode is missing');
  const pix = objectOr(d.pix);
  const pdf = objectOr(d.pdf);
  return {
    chargeId: integer(d.charge_id, 'data.charge_id'),
    barcode,
    pdfUrl: text(pdf.charge),
    pixCode: text(pix.qrcode),
    status: text(d.status) ?? 'waiting',
  };
}

/**
 * Every entry must read as a boleto: the gateway lists only its own custom_id's billets, and one it
 * cannot read is an error (asked again), never "nothing found" (a second boleto registered).
 */
function readList(body: unknown): ChargeListed[] {
  const d = data(body);
  if (!Array.isArray(d)) throw new AnswerError('data is not a list');
  return d.map((item, i) => {
    const at = `data[${i}]`;
    const o = object(item, at);
    const payment = object(o.payment, `${at}.payment`);
    const billet = object(payment.banking_billet, `${at}.payment.banking_billet`);
    const barcode = text(billet.barcode);
    const expireAt = text(billet.expire_at);
    if (!barcode || !expireAt) throw new AnswerError(`${at}.payment.banking_billet lacks its barcode or expire_at`);
    const status = text(o.status);
    if (!status) throw new AnswerError(`${at}.status is missing`);
    const pix = objectOr(billet.pix ?? payment.pix);
    return {
      chargeId: integer(o.id, `${at}.id`),
      customId: text(o.custom_id),
      total: integer(o.total, `${at}.total`),
      expireAt,
      barcode,
      pdfUrl: text(objectOr(billet.pdf).charge),
      pixCode: text(pix.qrcode),
      status,
    };
  });
}

/** GET /v1/charges's query for one custom_id's boletos made between two São Paulo days. */
export const boletoListQuery = (customId: string, days: { from: string; to: string }) =>
  new URLSearchParams({ charge_type: 'billet', begin_date: days.from, end_date: days.to, date_of: 'creation', custom_id: customId });

/** GET /v1/charges's query for a page of the boletos paid between two São Paulo days (the SDK's ListChargesParamsSchema). */
export const paidBoletoQuery = (days: { from: string; to: string }, page: number, limit: number) =>
  new URLSearchParams({ charge_type: 'billet', begin_date: days.from, end_date: days.to, date_of: 'payment', limit: `${limit}`, page: `${page}` });

/** A page of paid boletos; the limit Efí applied (it may cap the one asked), and the page it is, are checked by the walker. */
function readPaid(body: unknown, page: number): { limit: number; charges: ChargePaid[] } {
  const pagination = object(object(object(body, 'answer').params, 'answer.params').pagination, 'answer.params.pagination');
  if (integer(pagination.page, 'answer.params.pagination.page') !== page) throw new AnswerError(`asked for page ${page}, got another`);
  const limit = integer(pagination.limit, 'answer.params.pagination.limit');
  const d = data(body);
  if (!Array.isArray(d)) throw new AnswerError('data is not a list');
  const charges = d.map((item, i) => {
    const o = object(item, `data[${i}]`);
    const status = text(o.status);
    if (!status) throw new AnswerError(`data[${i}].status is missing`);
    const payment = objectOr(o.payment);
    const total = integer(o.total, `data[${i}].total`);
    return {
      chargeId: integer(o.id, `data[${i}].id`),
      customId: text(o.custom_id),
      status,
      total,
      paidValue: cents(payment.paid_value),
      paidAt: text(payment.paid_at),
    };
  });
  return { limit, charges };
}

const paid_max_pages = 10_000;

async function* walkPaid(reads: EfiChargeReads, days: { from: string; to: string }, limit: number): AsyncGenerator<ChargePaid[]> {
  for (let page = 1; page <= paid_max_pages; page++) {
    const answer = await reads.paidBoletos(days, page, limit);
    yield answer.charges;
    // No count of pages here: a page shorter than the limit Efí applied is the last.
    if (answer.charges.length < Math.max(1, answer.limit)) return;
  }
  throw new ApiPixError({ kind: 'invalid-answer', operation: 'GET /v1/charges', reason: `more than ${paid_max_pages} pages of paid boletos` });
}

function readDetail(body: unknown): ChargeDetail {
  const d = object(data(body), 'data');
  const status = text(d.status);
  if (!status) throw new AnswerError('data.status is missing');
  const payment = objectOr(d.payment);
  return {
    chargeId: integer(d.charge_id, 'data.charge_id'),
    customId: text(d.custom_id),
    status,
    total: integer(d.total, 'data.total'),
    paidValue: cents(payment.paid_value) ?? cents(d.paid_value),
  };
}

function readHistory(body: unknown): ChargeChange[] {
  const d = data(body);
  if (!Array.isArray(d)) throw new AnswerError('data is not a list');
  return d.flatMap((item, i) => {
    const o = object(item, `data[${i}]`);
    const ids = object(o.identifiers, `data[${i}].identifiers`);
    // Carnets and subscriptions share the endpoint; the gateway makes charges only.
    if (ids.charge_id === undefined) return [];
    const status = object(o.status, `data[${i}].status`);
    const current = text(status.current);
    if (!current) throw new AnswerError(`data[${i}].status.current is missing`);
    return [
      {
        id: integer(o.id, `data[${i}].id`),
        chargeId: integer(ids.charge_id, `data[${i}].identifiers.charge_id`),
        customId: text(o.custom_id),
        status: current,
        value: cents(o.value),
        at: text(o.created_at) ?? '',
      },
    ];
  });
}

const chargePath = (id: number, op: string) => {
  if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(`Efí ${op}: a charge id is a positive integer`);
  return `/v1/charge/${id}`;
};

export function createEfiChargesClient(baseUrl: string, transport: PixTransport): EfiChargesClient & EfiChargeReads {
  const call = transport.caller(baseUrl);
  const client: EfiChargesClient & EfiChargeReads = {
    createOneStep: (body) =>
      // Not sent again on a lost answer: a second charge would be a second boleto. Reconciliation finds what was made.
      call({ method: 'POST', operation: 'POST /v1/charge/one-step', path: '/v1/charge/one-step', body, idempotent: false, read: readIssued }),
    boletosOf: (customId, days) =>
      call({
        method: 'GET',
        operation: 'GET /v1/charges',
        path: '/v1/charges',
        query: boletoListQuery(customId, days),
        idempotent: true,
        read: readList,
      }),
    async cancel(chargeId) {
      const operation = 'PUT /v1/charge/{id}/cancel';
      await call({
        method: 'PUT',
        operation,
        path: `${chargePath(chargeId, operation)}/cancel`,
        idempotent: true,
        read: () => undefined,
        bodyless: true,
      });
    },
    detail: (chargeId) =>
      call({
        method: 'GET',
        operation: 'GET /v1/charge/{id}',
        path: chargePath(chargeId, 'GET /v1/charge/{id}'),
        idempotent: true,
        read: readDetail,
      }),
    notification(token) {
      const operation = 'GET /v1/notification/{token}';
      if (!TOKEN.test(token)) throw new RangeError(`Efí ${operation}: not a notification token`);
      return call({ method: 'GET', operation, path: `/v1/notification/${token}`, idempotent: true, read: readHistory });
    },
    paidBoletos: (days, page, limit) => {
      if (!Number.isSafeInteger(page) || page < 1 || !Number.isSafeInteger(limit) || limit < 1)
        throw new RangeError('Efí GET /v1/charges: page and limit are integers ≥ 1');
      const query = paidBoletoQuery(days, page, limit);
      return call({ method: 'GET', operation: 'GET /v1/charges', path: '/v1/charges', query, idempotent: true, read: (a) => readPaid(a, page) });
    },
    paidBoletoPages: (days, limit = 100) => walkPaid(client, days, limit),
  };
  return client;
}
