/**
 * The served OpenAPI document as tests use it (CONTRACT §13): loaded and dereferenced, its operations
 * listed, a schema validator, and a harness that sets up what each operation's path parameters need
 * (shared by test/integration/openapi.test.ts and openapi-fuzz.test.ts).
 */
import assert from 'node:assert/strict';
import $RefParser from '@apidevtools/json-schema-ref-parser';
import type { ValidateFunction } from 'ajv';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { adminHeaders, type Gateway, type SellerKeys } from './gateway.ts';

export type Json = Record<string, unknown>;
export type Schema = Json;
export interface Media {
  schema?: Schema;
  examples?: Record<string, { summary?: string; value: unknown }>;
}
export interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
export interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, Media> };
  responses: Record<string, { description?: string; content?: Record<string, Media> }>;
}
export interface Op {
  method: string;
  path: string;
  operation: Operation;
}
export interface Document {
  paths: Record<string, Record<string, Operation>>;
}

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: true }));
const validators = new Map<Schema, ValidateFunction>();
function validatorOf(schema: Schema): ValidateFunction {
  let v = validators.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    validators.set(schema, v);
  }
  return v;
}

/** Why `value` does not fit `schema` (JSON Schema 2020-12, formats checked): one line per violation, none if it fits. */
export function validate(schema: Schema, value: unknown): string[] {
  const v = validatorOf(schema);
  return v(value) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** The dotted fields (`items.0.title`; '' for the root) that `value` breaks `schema` at, a missing or unknown field named itself; none if it fits. */
export function violatedFields(schema: Schema, value: unknown): string[] {
  const v = validatorOf(schema);
  if (v(value)) return [];
  return (v.errors ?? []).map((e) => {
    const path = e.instancePath
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (e.keyword === 'required') path.push(String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty));
    return path.join('.');
  });
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
export const operationsOf = (doc: Document): Op[] =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ method, path, operation })),
  );

/** The document the gateway serves, as served (`raw`) and with every `$ref` replaced by what it refers to (`doc`). */
export async function loadDocument(gw: Gateway): Promise<{ raw: Document; doc: Document }> {
  const raw = structuredClone(gw.app.swagger()) as unknown as Document;
  const doc = (await $RefParser.dereference(structuredClone(raw), { resolve: { external: false }, dereference: { circular: false } })) as Document;
  return { raw, doc };
}

// Set-up bodies, written here rather than taken from the document, so that an example cannot set itself up.
export const pixSale = {
  amount: 15000,
  paymentMethod: 'PIX',
  customer: { name: 'Maria Silva', email: 'maria@example.com' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
};
export const cardSale = {
  amount: 16000,
  paymentMethod: 'CREDIT_CARD',
  customer: { name: 'Maria Silva', email: 'maria@example.com' },
  items: [{ title: 'Curso', unitPrice: 16000, quantity: 1, tangible: false }],
  card: { number: '4111111111111111', holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: 2030, cvv: '123' },
};

export type SaleState = 'PENDENTE_PIX' | 'PENDENTE_CARD' | 'PAGO_PIX' | 'PAGO_CARD';
export type Setup = (example: Json) => Promise<Record<string, string>>;

/** Requests to `gw` as `seller` (or as the operator), and the set-up of each operation's path parameters. */
export function openapiHarness(gw: Gateway, seller: SellerKeys) {
  async function call(method: string, url: string, headers: Record<string, string>, payload?: unknown) {
    const res = await gw.app.inject({
      method: method.toUpperCase() as 'GET',
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return res;
  }
  async function ok(method: string, url: string, headers: Record<string, string>, payload?: unknown): Promise<Json> {
    const res = await call(method, url, headers, payload);
    assert.ok(res.statusCode >= 200 && res.statusCode < 300, `set-up ${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.body ? (res.json() as Json) : {};
  }
  const event = (id: unknown, e: string) => ok('post', `/admin/transactions/${id}/events`, adminHeaders, { event: e });

  // ---------- what each operation needs before it can succeed ----------
  const newSale = async (body: Json, who = seller) => (await ok('post', '/api/sales', who.headers, body)).sale as Json;
  async function saleIn(state: SaleState, who = seller): Promise<Json> {
    const sale = await newSale(state.endsWith('PIX') ? pixSale : cardSale, who);
    if (state === 'PAGO_PIX') await event(sale.id, 'PAYMENT_CONFIRMED');
    if (state === 'PAGO_CARD') for (const e of ['SENT_TO_PROCESSOR', 'APPROVED']) await event(sale.id, e);
    return sale;
  }
  const newCashout = async (who = seller) =>
    ok('post', '/api/public/cashout', who.headers, { amount: 150, pixKey: '52998224725', pixKeyType: 'CPF' });
  const newWebhook = async (who = seller) =>
    ok('post', '/api/webhooks', who.headers, { url: 'https://loja.example.com/hook', types: ['TRANSACTION'] });
  const newNotification = async (who = seller) => {
    const hook = await newWebhook(who);
    return ok('post', `/api/webhooks/${hook.id}/test`, who.headers);
  };
  /** A PIX sale paid by a Pix at the embedded PSP, its callback handed to the gateway (which may not listen in these tests). */
  async function paidByPix(): Promise<string> {
    const sale = await saleIn('PENDENTE_PIX');
    const read = await ok('get', `/api/transactions/${sale.id}`, seller.headers);
    const paid = await ok('post', `/sandbox/pix/${read.externalTransactionId}/pay`, adminHeaders, {});
    await ok('post', `/providers/pix/${gw.config.pixRail.webhookSecret}/pix`, {}, { pix: [{ endToEndId: paid.endToEndId }] });
    return String(sale.id);
  }
  /** A PIX sale in MED: an infraction the embedded PSP opened on its Pix, read by the gateway. */
  const inMed = async () => {
    const id = await paidByPix();
    return { id, idInfracao: String((await ok('post', `/sandbox/sales/${id}/infraction`, adminHeaders)).idInfracao) };
  };
  const newSellerId = async () => String((await gw.createSeller({ name: 'Loja Outra', email: 'outra@example.com' })).id);

  /** The path parameters of one call of `operationId`, after setting up what `example` (its body, if any) needs. */
  const setups: Record<string, Setup> = {
    getCashout: async () => ({ id: String((await newCashout()).id) }),
    deleteWebhook: async () => ({ id: String((await newWebhook()).id) }),
    testWebhook: async () => ({ id: String((await newWebhook()).id) }),
    resendNotification: async () => ({ id: String((await newNotification()).id) }),
    getTransaction: async () => ({ id: String((await saleIn('PENDENTE_PIX')).id) }),
    cancelTransaction: async () => ({ id: String((await saleIn('PENDENTE_PIX')).id) }),
    refundTransaction: async () => ({ id: String((await saleIn('PAGO_CARD')).id) }),
    listRefunds: async () => {
      const sale = await saleIn('PAGO_CARD');
      await ok('post', `/api/transactions/${sale.id}/refund`, seller.headers, { amount: 1000 });
      return { id: String(sale.id) };
    },
    sandboxPayPix: async () => {
      const sale = await saleIn('PENDENTE_PIX');
      const read = await ok('get', `/api/transactions/${sale.id}`, seller.headers);
      return { txid: String(read.externalTransactionId) };
    },
    sandboxPaySale: async () => ({ id: String((await saleIn('PENDENTE_PIX')).id) }),
    sandboxOpenInfraction: async () => ({ id: await paidByPix() }),
    sandboxResolveInfraction: async () => ({ idInfracao: (await inMed()).idInfracao }),
    defendMed: async () => ({ id: (await inMed()).id }),
    sandboxPayBoleto: async () => {
      const sale = await newSale({
        amount: 15000,
        paymentMethod: 'BOLETO',
        customer: { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725' },
        items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
      });
      return { id: String(sale.id) };
    },
    resolveProviderEvent: async () => {
      // A Pix for no sale: the PSP's callback makes it a provider event for the operator.
      const paid = await ok('post', `/sandbox/pix/unclaimed${Date.now()}/pay`, adminHeaders, { amount: 1000 });
      await ok('post', `/providers/pix/${gw.config.pixRail.webhookSecret}/pix`, {}, { pix: [{ endToEndId: paid.endToEndId }] });
      const open = await ok('get', '/admin/provider-events?state=needs_operator&limit=1', adminHeaders);
      return { id: String((open.data as Json[])[0]!.id) };
    },
    createPanelInvite: async () => ({ id: await newSellerId() }),
    getSeller: async () => ({ id: await newSellerId() }),
    updateSeller: async () => ({ id: await newSellerId() }),
    createSellerKey: async () => ({ id: await newSellerId() }),
    revokeSellerKey: async () => {
      const other = await gw.createSeller();
      return { id: String(other.id), publicKey: other.publicKey };
    },
    applyTransactionEvent: async (example) => {
      const states: Record<string, SaleState> = {
        PAYMENT_CONFIRMED: 'PENDENTE_PIX',
        SENT_TO_PROCESSOR: 'PENDENTE_CARD',
        MED_OPENED: 'PAGO_PIX',
        CHARGEBACK_OPENED: 'PAGO_CARD',
      };
      const state = states[String(example.event)];
      assert.ok(state, `no set-up for the transaction event ${String(example.event)}`);
      return { id: String((await saleIn(state)).id) };
    },
    applyCashoutEvent: async (example) => {
      const cashout = await newCashout();
      if (example.event === 'COMPLETED' || example.event === 'REJECTED') {
        await ok('post', `/admin/cashouts/${cashout.id}/events`, adminHeaders, { event: 'PROCESSING' });
      }
      return { id: String(cashout.id) };
    },
  };

  const urlOf = (path: string, params: Record<string, string>) =>
    path.replace(/\{(\w+)\}/g, (_m, name: string) => {
      assert.ok(params[name] !== undefined, `no value for {${name}} of ${path}`);
      return encodeURIComponent(params[name]!);
    });
  const isOperatorOnly = (op: Operation) => JSON.stringify(op.security ?? []).includes('operator');
  const headersOf = (op: Operation) => (isOperatorOnly(op) ? adminHeaders : seller.headers);

  return { call, ok, setups, urlOf, headersOf, isOperatorOnly, saleIn, newCashout, newWebhook, newNotification };
}
export type OpenapiHarness = ReturnType<typeof openapiHarness>;
