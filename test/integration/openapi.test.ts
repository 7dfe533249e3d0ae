// The served OpenAPI document (CONTRACT §13) against the running gateway: every operation named,
// every error status with its body, no catch-all; every request body example is sent as it stands
// and must be accepted (2xx), and every 2xx answer must fit the schema the document gives for it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import $RefParser from '@apidevtools/json-schema-ref-parser';
import type { ValidateFunction } from 'ajv';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { fund } from '../helpers/funding.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

type Json = Record<string, unknown>;
type Schema = Json;
interface Media {
  schema?: Schema;
  examples?: Record<string, { summary?: string; value: unknown }>;
}
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string }[];
  requestBody?: { required?: boolean; content?: Record<string, Media> };
  responses: Record<string, { description?: string; content?: Record<string, Media> }>;
}
interface Op {
  method: string;
  path: string;
  operation: Operation;
}

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: true }));
const validators = new Map<Schema, ValidateFunction>();
function validate(schema: Schema, value: unknown): string[] {
  let v = validators.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    validators.set(schema, v);
  }
  return v(value) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`);
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const operationsOf = (doc: { paths: Record<string, Record<string, Operation>> }): Op[] =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ method, path, operation })),
  );

// Set-up bodies, written here rather than taken from the document, so that an example cannot set itself up.
const pixSale = {
  amount: 15000,
  paymentMethod: 'PIX',
  customer: { name: 'Maria Silva', email: 'maria@example.com' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
};
const cardSale = {
  amount: 16000,
  paymentMethod: 'CREDIT_CARD',
  customer: { name: 'Maria Silva', email: 'maria@example.com' },
  items: [{ title: 'Curso', unitPrice: 16000, quantity: 1, tangible: false }],
  card: { number: '4111111111111111', holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: 2030, cvv: '123' },
};

describe('OpenAPI document (CONTRACT §13)', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let raw: { paths: Record<string, Record<string, Operation>> };
  let doc: { paths: Record<string, Record<string, Operation>> };

  before(async () => {
    gw = await startGateway();
    seller = await gw.createSeller();
    await fund(gw, seller.id, 10_000_000);
    raw = structuredClone(gw.app.swagger()) as unknown as typeof raw;
    doc = (await $RefParser.dereference(structuredClone(raw), { resolve: { external: false }, dereference: { circular: false } })) as typeof doc;
  });
  after(async () => {
    await gw?.close();
  });

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
  async function saleIn(state: 'PENDENTE_PIX' | 'PENDENTE_CARD' | 'PAGO_PIX' | 'PAGO_CARD'): Promise<Json> {
    const sale = await newSale(state.endsWith('PIX') ? pixSale : cardSale);
    if (state === 'PAGO_PIX') await event(sale.id, 'PAYMENT_CONFIRMED');
    if (state === 'PAGO_CARD') for (const e of ['SENT_TO_PROCESSOR', 'APPROVED']) await event(sale.id, e);
    return sale;
  }
  const newCashout = async () => ok('post', '/api/public/cashout', seller.headers, { amount: 150, pixKey: '52998224725', pixKeyType: 'CPF' });
  const newWebhook = async () => ok('post', '/api/webhooks', seller.headers, { url: 'https://loja.example.com/hook', types: ['TRANSACTION'] });
  const newSellerId = async () => String((await gw.createSeller({ name: 'Loja Outra', email: 'outra@example.com' })).id);

  /** The path parameters of one call of `operationId`, after setting up what `example` (its body, if any) needs. */
  const setups: Record<string, (example: Json) => Promise<Record<string, string>>> = {
    getCashout: async () => ({ id: String((await newCashout()).id) }),
    deleteWebhook: async () => ({ id: String((await newWebhook()).id) }),
    testWebhook: async () => ({ id: String((await newWebhook()).id) }),
    resendNotification: async () => {
      const hook = await newWebhook();
      return { id: String((await ok('post', `/api/webhooks/${hook.id}/test`, seller.headers)).id) };
    },
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
      const states: Record<string, Parameters<typeof saleIn>[0]> = {
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
  const headersOf = (op: Operation) => (JSON.stringify(op.security ?? []).includes('operator') ? adminHeaders : seller.headers);

  /** Sends one request of `op` and checks the answer is a 2xx whose body fits the documented schema. */
  async function exercise(op: Op, label: string, example?: { value: unknown }): Promise<string[]> {
    const { operation } = op;
    const id = operation.operationId!;
    const needsParams = /\{/.test(op.path);
    const setup = setups[id];
    if (needsParams && !setup) return [`${id}: no set-up in this test gives its path parameters`];
    const params = setup ? await setup((example?.value ?? {}) as Json) : {};
    const res = await call(op.method, urlOf(op.path, params), headersOf(operation), example?.value);
    const where = `${id} ${label}: ${op.method.toUpperCase()} ${op.path}`;
    if (res.statusCode < 200 || res.statusCode >= 300) return [`${where} answered ${res.statusCode} ${res.body}`];
    const documented = operation.responses[String(res.statusCode)];
    if (!documented) return [`${where} answered ${res.statusCode}, which the document does not list`];
    const schema = documented.content?.['application/json']?.schema;
    if (!schema) return res.body === '' ? [] : [`${where} answered a body the document does not describe: ${res.body}`];
    return validate(schema, res.json()).map((e) => `${where} answered ${res.statusCode} off its schema: ${e}`);
  }

  test('every operation has a unique operationId, no catch-all status, and a body on every error', () => {
    const ops = operationsOf(doc);
    assert.ok(ops.length >= 29, `only ${ops.length} operations`);
    const ids = ops.map((o) => o.operation.operationId);
    for (const o of ops) assert.ok(o.operation.operationId, `${o.method.toUpperCase()} ${o.path} has no operationId`);
    assert.equal(new Set(ids).size, ids.length, `operationIds repeat: ${ids.join(', ')}`);
    for (const { method, path, operation } of ops) {
      const where = `${operation.operationId} (${method.toUpperCase()} ${path})`;
      const statuses = Object.keys(operation.responses);
      for (const status of statuses) assert.match(status, /^[1-5][0-9][0-9]$/, `${where} answers "${status}", not one status`);
      assert.ok(
        statuses.some((s) => s.startsWith('2')),
        `${where} has no success status`,
      );
      assert.ok(statuses.includes('500'), `${where} does not document 500`);
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        const schema = operation.responses[status]!.content?.['application/json']?.schema;
        assert.ok(schema, `${where}: ${status} documents no JSON body`);
        assert.ok(operation.responses[status]!.description, `${where}: ${status} has no description`);
      }
    }
  });

  test('every request body has examples, and every example fits its schema', () => {
    for (const { method, path, operation } of operationsOf(doc)) {
      const media = operation.requestBody?.content?.['application/json'];
      if (!operation.requestBody) continue;
      const where = `${operation.operationId} (${method.toUpperCase()} ${path})`;
      assert.ok(media?.schema, `${where}: its body has no JSON schema`);
      const examples = Object.entries(media.examples ?? {});
      assert.ok(examples.length > 0, `${where}: its body has no example`);
      for (const [name, example] of examples) {
        assert.deepEqual(validate(media.schema, example.value), [], `${where}: example ${name} does not fit the body schema`);
      }
    }
  });

  test('the gateway accepts every request body example with a 2xx, whose body fits the documented response', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const op of operationsOf(doc)) {
      const examples = op.operation.requestBody?.content?.['application/json']?.examples ?? {};
      for (const [name, example] of Object.entries(examples)) {
        failures.push(...(await exercise(op, `example "${name}"`, example)));
        sent++;
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(sent >= 40, `only ${sent} examples sent`);
  });

  test('every GET answers a 2xx whose body fits the documented response', async () => {
    const failures: string[] = [];
    for (const op of operationsOf(doc).filter((o) => o.method === 'get')) failures.push(...(await exercise(op, 'read')));
    assert.deepEqual(failures, []);
  });

  test('the document names its shared schemas once and refers to them', () => {
    const schemas = (raw as unknown as { components: { schemas: Record<string, Schema> } }).components.schemas;
    for (const name of ['Balance', 'Cashout', 'CashoutRequest', 'Error', 'Sale', 'SaleRequest', 'Transaction', 'Refund', 'FeeSchedule', 'Shipping']) {
      assert.ok(schemas[name], `components.schemas has no ${name}`);
    }
    assert.ok(JSON.stringify(raw.paths).includes('"$ref":"#/components/schemas/Transaction"'), 'Transaction is not referred to');
    // Every titled schema is a component: none is left inline under paths (examples are data, not schemas).
    const inline: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'examples' || key === 'example') continue;
        if (key === 'title' && typeof value === 'string') inline.push(`${at}: ${value}`);
        walk(value, `${at}/${key}`);
      }
    };
    walk(raw.paths, '#/paths');
    assert.deepEqual(inline, []);
  });
});
