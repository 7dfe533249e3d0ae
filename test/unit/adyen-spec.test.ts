import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  ADYEN_CHECKOUT_FILE,
  ADYEN_ERRATA,
  ADYEN_FAULTY_EXAMPLES,
  ADYEN_WEBHOOKS_FILE,
  adyenExample,
  adyenExamples,
  adyenNotificationExample,
  checkAdyenNotification,
  checkAdyenRequest,
  checkAdyenResponse,
  checkAdyenWebhook,
  SHARED_ADYEN_CHECKOUT_FILE,
  SHARED_ADYEN_WEBHOOKS_FILE,
  startAdyenValidatingProxy,
} from '../helpers/adyen-spec.ts';
import { prismCli, startPrism } from '../helpers/prism.ts';

const PSP = '993617894903480A';
const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'test_key', 'idempotency-key': 'b7f9c3a0-0000-4000-8000-000000000001' };
const card = { type: 'scheme', number: '4111111111111111', expiryMonth: '03', expiryYear: '2030', cvc: '737', holderName: 'Maria Silva' };
/** A card payment in three installments, as the connector sends it (returnUrl is required by the file). */
const payment = (): Record<string, unknown> => ({
  amount: { currency: 'BRL', value: 1000 },
  merchantAccount: 'PagarBR',
  reference: 'sale-1',
  returnUrl: 'https://gateway.example/adyen/return',
  paymentMethod: { ...card },
  installments: { value: 3 },
});
const post = (path: string, body: unknown, headers: Record<string, string> = HEADERS) => checkAdyenRequest({ method: 'POST', path, headers, body });
const has = (violations: string[], part: string) => violations.some((v) => v.includes(part));
const item = (n: Record<string, unknown>) =>
  (n.notificationItems as { NotificationRequestItem: Record<string, unknown> }[])[0]!.NotificationRequestItem;

it('reads the official files; a vendored copy, if any, is the shared one byte for byte', () => {
  for (const [file, shared] of [
    [ADYEN_CHECKOUT_FILE, SHARED_ADYEN_CHECKOUT_FILE],
    [ADYEN_WEBHOOKS_FILE, SHARED_ADYEN_WEBHOOKS_FILE],
  ] as const) {
    assert.equal((JSON.parse(readFileSync(file, 'utf8')) as { openapi: string }).openapi, '3.1.0');
    // The shared folder sits beside a developer's checkout, not beside CI's fresh clone.
    if (file !== shared && existsSync(shared)) assert.ok(readFileSync(file).equals(readFileSync(shared)), `${file} differs from ${shared}`);
  }
});

describe('Adyen Checkout requests', () => {
  it('a card payment in installments passes', () => {
    assert.deepEqual(post('/payments', payment()), []);
  });

  it('returnUrl is required even for a card paid without redirect', () => {
    const { returnUrl: _, ...body } = payment();
    assert.deepEqual(post('/payments', body), ["request body must have required property 'returnUrl'"]);
  });

  it('a missing amount, amount.value "10", a cvc as a number are named', () => {
    assert.deepEqual(post('/payments', { ...payment(), amount: undefined }), ["request body must have required property 'amount'"]);
    assert.deepEqual(post('/payments', { ...payment(), amount: { currency: 'BRL', value: '10' } }), ['request body /amount/value must be integer']);
    assert.deepEqual(post('/payments', { ...payment(), amount: { currency: 'REAL', value: 10 } }), [
      'request body /amount/currency must NOT have more than 3 characters',
    ]);
    const cvc = post('/payments', { ...payment(), paymentMethod: { ...card, cvc: 737 } });
    assert.deepEqual(cvc, ['request body /paymentMethod/cvc must be string'], 'only the branch of type scheme is reported');
  });

  it('unknown fields fail (additionalProperties: false), in the body and in the card', () => {
    const extra = post('/payments', { ...payment(), installment: 3, paymentMethod: { ...card, brand_id: 'visa' } });
    assert.deepEqual(extra.sort(), [
      'request body /paymentMethod must NOT have additional properties (brand_id)',
      'request body must NOT have additional properties (installment)',
    ]);
    const unknownType = post('/payments', { ...payment(), paymentMethod: { type: 'pix_card' } });
    assert.deepEqual(unknownType, ['request body /paymentMethod must match exactly one schema in oneOf: no branch admits type "pix_card"']);
  });

  it('credentials: X-API-Key or Basic; none is a violation; Idempotency-Key is optional', () => {
    const { 'x-api-key': _, 'idempotency-key': __, ...bare } = HEADERS;
    assert.deepEqual(post('/payments', payment(), { ...bare, authorization: 'Basic dXNlcjpwYXNz' }), []);
    assert.deepEqual(post('/payments', payment(), { ...bare, 'X-API-Key': 'k' }), []);
    assert.ok(has(post('/payments', payment(), bare), 'POST /payments requires credentials'));
    assert.ok(
      has(post('/payments', payment(), { ...HEADERS, 'content-type': 'text/plain' }), 'content type text/plain is not one the file documents'),
    );
  });

  it('refunds, captures, cancels and reversals: valid bodies pass, broken ones are named', () => {
    const amount = { currency: 'BRL', value: 500 };
    assert.deepEqual(post(`/payments/${PSP}/refunds`, { merchantAccount: 'PagarBR', amount, reference: 'refund-1' }), []);
    assert.deepEqual(post(`/payments/${PSP}/refunds`, { merchantAccount: 'PagarBR', amount, merchantRefundReason: null }), [], 'nullable (erratum)');
    assert.deepEqual(post(`/payments/${PSP}/refunds`, { merchantAccount: 'PagarBR', reference: 'r' }), [
      "request body must have required property 'amount'",
    ]);
    assert.deepEqual(post(`/payments/${PSP}/refunds`, { merchantAccount: 'PagarBR', amount: { ...amount, value: '10' } }), [
      'request body /amount/value must be integer',
    ]);
    assert.deepEqual(post(`/payments/${PSP}/captures`, { merchantAccount: 'PagarBR', amount, reference: 'capture-1' }), []);
    assert.deepEqual(post(`/payments/${PSP}/captures`, { merchantAccount: 'PagarBR' }), ["request body must have required property 'amount'"]);
    assert.deepEqual(post(`/payments/${PSP}/cancels`, { merchantAccount: 'PagarBR', reference: 'cancel-1' }), []);
    assert.deepEqual(post(`/payments/${PSP}/cancels`, { reference: 'cancel-1', amount }).sort(), [
      'request body must NOT have additional properties (amount)',
      "request body must have required property 'merchantAccount'",
    ]);
    assert.deepEqual(post(`/payments/${PSP}/reversals`, { merchantAccount: 'PagarBR' }), []);
  });

  it('unknown paths, methods and query parameters are violations', () => {
    assert.deepEqual(post('/payment', payment()), ['no path of the Checkout file matches /payment']);
    assert.deepEqual(checkAdyenRequest({ method: 'GET', path: `/payments/${PSP}/refunds` }), [
      'GET /payments/{paymentPspReference}/refunds: no such operation in the file (that path has POST)',
    ]);
    assert.deepEqual(post('/payments?async=1', payment()), ['query parameter async is not defined for POST /payments']);
  });

  it("every request example of the payment operations passes the file's schema", () => {
    for (const path of [
      '/payments',
      `/payments/${PSP}/refunds`,
      `/payments/${PSP}/captures`,
      `/payments/${PSP}/cancels`,
      `/payments/${PSP}/reversals`,
    ]) {
      const examples = Object.entries(adyenExamples('POST', path));
      assert.ok(examples.length > 0, path);
      for (const [name, body] of examples) assert.deepEqual(post(path, body), [], `${path} example ${name}`);
    }
  });
});

describe('Adyen Checkout answers', () => {
  it('the file examples pass: card-direct (Authorised), a refund received', () => {
    const direct = adyenExamples('POST', '/payments', 200)['card-direct'] as { resultCode: string };
    assert.equal(direct.resultCode, 'Authorised');
    assert.deepEqual(checkAdyenResponse({ method: 'POST', path: '/payments', status: 200, body: direct, contentType: 'application/json' }), []);
    const refund = adyenExample('post-payments-paymentPspReference-refunds-refund-201');
    assert.deepEqual(checkAdyenResponse({ method: 'POST', path: `/payments/${PSP}/refunds`, status: 201, body: refund }), []);
    const error = adyenExample('generic-422');
    assert.deepEqual(checkAdyenResponse({ method: 'POST', path: '/payments', status: 422, body: error }), []);
  });

  it('a refund answer without pspReference, an unknown resultCode and an undocumented status fail', () => {
    const refund = adyenExample('post-payments-paymentPspReference-refunds-refund-201') as Record<string, unknown>;
    const missing = checkAdyenResponse({
      method: 'POST',
      path: `/payments/${PSP}/refunds`,
      status: 201,
      body: { ...refund, pspReference: undefined },
    });
    assert.deepEqual(missing, ["response 201 body must have required property 'pspReference'"]);
    const approved = checkAdyenResponse({ method: 'POST', path: '/payments', status: 200, body: { pspReference: 'X', resultCode: 'Approved' } });
    assert.ok(has(approved, 'response 200 body /resultCode must be equal to one of the allowed values'), `${approved}`);
    assert.deepEqual(checkAdyenResponse({ method: 'POST', path: '/payments', status: 404, body: {} }), [
      'status 404 is not documented for POST /payments (the file has 200, 400, 401, 403, 422, 500)',
    ]);
  });
});

describe('Adyen standard notifications', () => {
  it('the AUTHORISATION example passes; an unknown item field, amount.value "10" or no pspReference fail', () => {
    const example = adyenExample('post-AUTHORISATION-authorisation') as Record<string, unknown>;
    assert.deepEqual(checkAdyenNotification(example), []);
    const extra = structuredClone(example);
    item(extra).authorisedAmount = 1000;
    assert.deepEqual(checkAdyenNotification(extra), [
      'notification AUTHORISATION /notificationItems/0/NotificationRequestItem must NOT have additional properties (authorisedAmount)',
    ]);
    const text = structuredClone(example);
    item(text).amount = { currency: 'BRL', value: '10' };
    assert.deepEqual(checkAdyenNotification(text), [
      'notification AUTHORISATION /notificationItems/0/NotificationRequestItem/amount/value must be integer',
    ]);
    const noId = structuredClone(example);
    delete item(noId).pspReference;
    assert.deepEqual(checkAdyenNotification(noId), [
      "notification AUTHORISATION /notificationItems/0/NotificationRequestItem must have required property 'pspReference'",
    ]);
  });

  it('the examples of the events the connector handles pass', () => {
    const events = [
      'AUTHORISATION',
      'CAPTURE',
      'CAPTURE_FAILED',
      'CANCELLATION',
      'REFUND',
      'REFUND_FAILED',
      'CHARGEBACK',
      'SECOND_CHARGEBACK',
      'NOTIFICATION_OF_CHARGEBACK',
      'CHARGEBACK_REVERSED',
    ];
    for (const event of events) {
      const example = adyenNotificationExample(event);
      assert.equal(item(example).eventCode, event);
      assert.deepEqual(checkAdyenNotification(example), [], event);
    }
  });

  it('each item is checked against its own event; an unknown eventCode and a body without items fail', () => {
    const both = adyenNotificationExample('AUTHORISATION');
    (both.notificationItems as unknown[]).push(...(adyenNotificationExample('REFUND').notificationItems as unknown[]));
    assert.deepEqual(checkAdyenNotification(both), []);
    item({ notificationItems: (both.notificationItems as unknown[]).slice(1) }).eventCode = 'AUTHORISATION_PENDING';
    assert.deepEqual(checkAdyenNotification(both), ['notification /notificationItems/1: eventCode AUTHORISATION_PENDING has no webhook in the file']);
    // Most item schemas admit every eventCode: what tells them apart is their fields (AUTHORISATION
    // alone has operations) and the keys of their additionalData.
    const refund = adyenNotificationExample('AUTHORISATION');
    item(refund).eventCode = 'REFUND';
    const where = 'notification REFUND /notificationItems/0/NotificationRequestItem';
    assert.deepEqual(checkAdyenNotification(refund), [
      `${where} must NOT have additional properties (operations)`,
      `${where}/additionalData must NOT have additional properties (tokenization.shopperReference)`,
      `${where}/additionalData must NOT have additional properties (tokenization.storedPaymentMethodId)`,
      `${where}/additionalData must NOT have additional properties (tokenization.store.operationType)`,
    ]);
    assert.deepEqual(checkAdyenNotification({ live: 'false' }), ['notification body has no notificationItems: no event code to check it against']);
  });

  it("errata: exactly the listed examples fail the file's own schemas, for the listed fields", () => {
    assert.equal(ADYEN_ERRATA.length, 5);
    type Webhooks = Record<string, { post: { requestBody: { content: { 'application/json': { examples?: Record<string, { $ref: string }> } } } } }>;
    const { webhooks } = JSON.parse(readFileSync(ADYEN_WEBHOOKS_FILE, 'utf8')) as { webhooks: Webhooks };
    const failing: Record<string, string[]> = {};
    let checked = 0;
    for (const [path, webhook] of Object.entries(webhooks)) {
      for (const { $ref } of Object.values(webhook.post.requestBody.content['application/json'].examples ?? {})) {
        const name = $ref.split('/').pop()!;
        const found = checkAdyenWebhook(path.slice(1), adyenExample(name));
        checked++;
        if (found.length > 0) failing[name] = found.map((v) => /\(([^)]+)\)$/.exec(v)?.[1] ?? v);
      }
    }
    assert.equal(checked, 42);
    assert.deepEqual(failing, ADYEN_FAULTY_EXAMPLES);
  });
});

describe('the Adyen validating proxy', () => {
  const seen: string[] = [];
  const target = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      const refund = req.url?.endsWith('/refunds');
      const body = refund ? adyenExample('post-payments-paymentPspReference-refunds-refund-201') : { pspReference: PSP, resultCode: 'Authorised' };
      res.writeHead(refund ? 201 : 200, { 'content-type': 'application/json', 'x-from': 'target' });
      res.end(JSON.stringify(req.url?.includes('BROKEN') ? { status: 'received' } : body));
    });
  });
  let proxy: Awaited<ReturnType<typeof startAdyenValidatingProxy>>;
  before(async () => {
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    proxy = await startAdyenValidatingProxy({ target: `http://127.0.0.1:${(target.address() as AddressInfo).port}/v71`, timeoutMs: 1_000 });
  });
  after(async () => {
    await proxy.close();
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
  });
  const send = (path: string, body: unknown) =>
    fetch(`${proxy.url}${path}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body), signal: AbortSignal.timeout(5_000) });

  it('passes valid exchanges through unchanged and records nothing', async () => {
    const res = await send('/payments', payment());
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-from'), 'target');
    assert.deepEqual(await res.json(), { pspReference: PSP, resultCode: 'Authorised' });
    await (await send(`/payments/${PSP}/refunds`, { merchantAccount: 'PagarBR', amount: { currency: 'BRL', value: 500 } })).text();
    assert.deepEqual(seen, ['POST /v71/payments', `POST /v71/payments/${PSP}/refunds`]);
    assert.deepEqual(proxy.violations, []);
  });

  it('records a bad request and a bad answer, with method and path', async () => {
    await (await send('/payments', { ...payment(), amount: { currency: 'BRL', value: '10' } })).text();
    await (await send('/payments/BROKEN/refunds', { merchantAccount: 'PagarBR', amount: { currency: 'BRL', value: 500 } })).text();
    assert.deepEqual(proxy.violations, [
      'POST /payments: request body /amount/value must be integer',
      "POST /payments/BROKEN/refunds: → 201: response 201 body must have required property 'amount'",
      "POST /payments/BROKEN/refunds: → 201: response 201 body must have required property 'merchantAccount'",
      "POST /payments/BROKEN/refunds: → 201: response 201 body must have required property 'paymentPspReference'",
      "POST /payments/BROKEN/refunds: → 201: response 201 body must have required property 'pspReference'",
    ]);
  });
});

const prism = prismCli();
describe('Prism serving the Checkout file, a second reader', { skip: 'unavailable' in prism ? prism.unavailable : false }, () => {
  let server: Awaited<ReturnType<typeof startPrism>>;
  before(async () => {
    server = await startPrism({ file: ADYEN_CHECKOUT_FILE, timeoutMs: 60_000 });
  });
  after(async () => {
    await server?.close();
  });
  const call = (path: string, body: unknown, headers: Record<string, string> = HEADERS) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  type PrismViolation = { location: string[]; code: string | number; message: string };
  // Prism prefixes a long list with "Too many violations! ".
  const violations = (res: Response) => JSON.parse((res.headers.get('sl-violations') ?? '[]').replace(/^[^[]*/, '')) as PrismViolation[];

  it('a valid payment: 200 with the first example (IdentifyShopper), or the one asked for with Prefer', async () => {
    const res = await call('/payments', payment());
    const body = (await res.json()) as { resultCode: string };
    assert.equal(res.status, 200, server.output());
    assert.deepEqual(violations(res), []);
    assert.equal(body.resultCode, 'IdentifyShopper');
    assert.deepEqual(checkAdyenResponse({ method: 'POST', path: '/payments', status: 200, body }), []);
    const direct = await call('/payments', payment(), { ...HEADERS, prefer: 'example=card-direct' });
    assert.equal(((await direct.json()) as { resultCode: string }).resultCode, 'Authorised');
  });

  it('an invalid payment: 422 whose sl-violations names what we name', async () => {
    for (const [body, location, ours] of [
      [{ ...payment(), amount: undefined }, 'request.body', "request body must have required property 'amount'"],
      [{ ...payment(), amount: { currency: 'BRL', value: '10' } }, 'request.body.amount.value', 'request body /amount/value must be integer'],
    ] as const) {
      const res = await call('/payments', body);
      await res.text();
      assert.equal(res.status, 422, server.output());
      assert.deepEqual(
        violations(res).map((v) => v.location.join('.')),
        [location],
      );
      assert.deepEqual(post('/payments', body), [ours]);
    }
    const anonymous = await call('/payments', payment(), { 'content-type': 'application/json' });
    await anonymous.text();
    assert.equal(anonymous.status, 401, 'without X-API-Key nor Basic');
  });

  it('a refund: 201 with the file example', async () => {
    const res = await call(`/payments/${PSP}/refunds`, {
      merchantAccount: 'PagarBR',
      amount: { currency: 'BRL', value: 500 },
      reference: 'refund-1',
    });
    const body = await res.json();
    assert.equal(res.status, 201, server.output());
    assert.deepEqual(body, adyenExample('post-payments-paymentPspReference-refunds-refund-201'));
  });
});
