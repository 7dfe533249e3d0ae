// The served OpenAPI document (CONTRACT §13) against the running gateway: every operation named,
// every error status with its body, no catch-all; every request body example is sent as it stands
// and must be accepted (2xx), and every 2xx answer must fit the schema the document gives for it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fund } from '../helpers/funding.ts';
import { type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import {
  type Document,
  type Json,
  loadDocument,
  type Op,
  type OpenapiHarness,
  openapiHarness,
  operationsOf,
  type Schema,
  validate,
} from '../helpers/openapi.ts';

describe('OpenAPI document (CONTRACT §13)', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let raw: Document;
  let doc: Document;
  let h: OpenapiHarness;

  before(async () => {
    gw = await startGateway();
    seller = await gw.createSeller();
    await fund(gw, seller.id, 10_000_000);
    ({ raw, doc } = await loadDocument(gw));
    h = openapiHarness(gw, seller);
  });
  after(async () => {
    await gw?.close();
  });

  /** Sends one request of `op` and checks the answer is a 2xx whose body fits the documented schema. */
  async function exercise(op: Op, label: string, example?: { value: unknown }): Promise<string[]> {
    const { operation } = op;
    const id = operation.operationId!;
    const needsParams = /\{/.test(op.path);
    const setup = h.setups[id];
    if (needsParams && !setup) return [`${id}: no set-up in this test gives its path parameters`];
    const params = setup ? await setup((example?.value ?? {}) as Json) : {};
    const res = await h.call(op.method, h.urlOf(op.path, params), h.headersOf(operation), example?.value);
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
