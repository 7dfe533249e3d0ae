// verifyWebhook against the reference implementation of Standard Webhooks (the `standardwebhooks`
// package): what it signs verifies with ours, what we sign verifies with it, and both refuse the
// same forgeries. verifyPostback against the spec's X-Signature rules.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { WebhookVerificationError as ReferenceVerificationError, Webhook } from 'standardwebhooks';
import { verifyPostback, verifyWebhook, WebhookVerificationError } from '../src/index.ts';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Our own signer, from the specification: v1,base64(HMAC-SHA256(key, "id.timestamp.body")), key = base64 after whsec_. */
function sign(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
}

function headersFor(secret: string | string[], body: string, id = 'msg_2Lh9KqdZ', timestamp = nowSeconds()) {
  const signature = [secret]
    .flat()
    .map((s) => sign(s, id, timestamp, body))
    .join(' ');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

const body = JSON.stringify({ id: 42, userId: 7, amount: '15000', status: 'PAGO', customerName: 'Maria Conceição', type: 'TRANSACTION' });

/** Both implementations' verdicts on the same input: the parsed body, or 'refused'. */
function verdicts(payload: string, headers: Record<string, string>, secret: string) {
  let ours: unknown;
  let reference: unknown;
  try {
    ours = verifyWebhook(payload, headers, secret);
  } catch (e) {
    assert.ok(e instanceof WebhookVerificationError, String(e));
    ours = 'refused';
  }
  try {
    reference = new Webhook(secret).verify(payload, headers);
  } catch (e) {
    assert.ok(e instanceof ReferenceVerificationError, String(e));
    reference = 'refused';
  }
  return { ours, reference };
}

describe('verifyWebhook (Standard Webhooks)', () => {
  test('what the reference implementation signs, ours verifies (string, Buffer and Uint8Array bodies)', () => {
    const secret = newSecret();
    const wh = new Webhook(secret);
    const id = 'msg_reference';
    const at = new Date();
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': wh.sign(id, at, body) };
    const expected = JSON.parse(body);
    assert.deepEqual(verifyWebhook(body, headers, secret), expected);
    assert.deepEqual(verifyWebhook(Buffer.from(body), headers, secret), expected);
    assert.deepEqual(verifyWebhook(new TextEncoder().encode(body), headers, secret), expected);
    const sliced = Buffer.from(`xx${body}yy`).subarray(2, 2 + Buffer.byteLength(body));
    assert.deepEqual(verifyWebhook(new Uint8Array(sliced.buffer, sliced.byteOffset, sliced.byteLength), headers, secret), expected);
  });

  test('what we sign, the reference implementation verifies', () => {
    const secret = newSecret();
    const { ours, reference } = verdicts(body, headersFor(secret, body), secret);
    assert.deepEqual(ours, JSON.parse(body));
    assert.deepEqual(reference, JSON.parse(body));
  });

  test('headers found case-insensitively, in a plain object, a Node headers object or a fetch Headers', () => {
    const secret = newSecret();
    const h = headersFor(secret, body);
    const shouting = { 'Webhook-Id': h['webhook-id'], 'WEBHOOK-TIMESTAMP': h['webhook-timestamp'], 'webhook-Signature': h['webhook-signature'] };
    assert.deepEqual(verifyWebhook(body, shouting, secret), JSON.parse(body));
    assert.deepEqual(verifyWebhook(body, new Headers(h), secret), JSON.parse(body));
    assert.deepEqual(verifyWebhook(body, { ...h, 'content-type': 'application/json', 'set-cookie': ['a=b'] }, secret), JSON.parse(body));
  });

  test('during a rotation: two signatures, either secret verifies, in both implementations', () => {
    const old = newSecret();
    const current = newSecret();
    const headers = headersFor([old, current], body);
    for (const secret of [old, current]) assert.deepEqual(verdicts(body, headers, secret), { ours: JSON.parse(body), reference: JSON.parse(body) });
    assert.deepEqual(verdicts(body, headers, newSecret()), { ours: 'refused', reference: 'refused' });
    const unknownVersion = { ...headers, 'webhook-signature': `v2,${headers['webhook-signature'].split(' ')[1]!.slice(3)}` };
    assert.deepEqual(verdicts(body, unknownVersion, current), { ours: 'refused', reference: 'refused' }, 'only v1 signatures count');
  });

  test('both refuse: a tampered body, a wrong secret, a stale or future timestamp, a missing header', () => {
    const secret = newSecret();
    const good = headersFor(secret, body);
    const refused = { ours: 'refused', reference: 'refused' };
    assert.deepEqual(verdicts(body.replace('15000', '15001'), good, secret), refused, 'tampered body');
    assert.deepEqual(verdicts(body, good, newSecret()), refused, 'wrong secret');
    assert.deepEqual(verdicts(body, headersFor(secret, body, 'msg_old', nowSeconds() - 301), secret), refused, 'stale');
    assert.deepEqual(verdicts(body, headersFor(secret, body, 'msg_future', nowSeconds() + 301), secret), refused, 'future');
    assert.deepEqual(verdicts(body, { ...good, 'webhook-id': 'msg_other' }, secret), refused, 'another id');
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _gone, ...rest } = good;
      assert.deepEqual(verdicts(body, rest, secret), refused, `without ${name}`);
    }
    assert.deepEqual(verdicts(body, { ...good, 'webhook-timestamp': 'yesterday' }, secret), refused, 'a timestamp that is not a number');
    assert.deepEqual(verdicts(body, { ...good, 'webhook-signature': 'v1,' }, secret), refused, 'an empty signature');
  });

  test('within the tolerance both accept (4 minutes either way)', () => {
    const secret = newSecret();
    for (const skew of [-240, 240])
      assert.deepEqual(verdicts(body, headersFor(secret, body, 'msg_skew', nowSeconds() + skew), secret), {
        ours: JSON.parse(body),
        reference: JSON.parse(body),
      });
  });

  test('a verified body that is not JSON, and a header sent twice, are refused', () => {
    const secret = newSecret();
    assert.throws(() => verifyWebhook('not json', headersFor(secret, 'not json'), secret), WebhookVerificationError);
    const h = headersFor(secret, body);
    assert.throws(() => verifyWebhook(body, { ...h, 'Webhook-Id': 'msg_other' }, secret), WebhookVerificationError);
  });

  test('options: toleranceSeconds and now', () => {
    const secret = newSecret();
    const h = headersFor(secret, body, 'msg_t', 1_700_000_000);
    assert.deepEqual(verifyWebhook(body, h, secret, { now: new Date(1_700_000_100_000) }), JSON.parse(body));
    assert.throws(() => verifyWebhook(body, h, secret, { now: new Date(1_700_000_100_000), toleranceSeconds: 60 }), /too old/);
  });
});

describe('verifyPostback (X-Signature)', () => {
  const secret = 'test-postback-secret-0123456789abcdef';
  const hex = (raw: string | Buffer) => createHmac('sha256', secret).update(raw).digest('hex');

  test('the lower-case hex HMAC-SHA256 of the raw bytes verifies; string, Buffer and Uint8Array bodies', () => {
    const expected = JSON.parse(body);
    assert.deepEqual(verifyPostback(body, hex(body), secret), expected);
    assert.deepEqual(verifyPostback(Buffer.from(body), hex(body), secret), expected);
    assert.deepEqual(verifyPostback(new TextEncoder().encode(body), hex(body), secret), expected);
  });

  test('the bytes count, not the JSON: the same object re-serialised with spaces does not verify', () => {
    const spaced = JSON.stringify(JSON.parse(body), null, 1);
    assert.throws(() => verifyPostback(spaced, hex(body), secret), WebhookVerificationError);
  });

  test('refused: a tampered body, another secret, a missing or malformed header', () => {
    const sig = hex(body);
    assert.throws(() => verifyPostback(body.replace('PAGO', 'MED'), sig, secret), WebhookVerificationError);
    assert.throws(() => verifyPostback(body, sig, `${secret}x`), WebhookVerificationError);
    assert.throws(() => verifyPostback(body, undefined, secret), /missing/);
    assert.throws(() => verifyPostback(body, '', secret), /missing/);
    assert.throws(() => verifyPostback(body, ['a', 'b'], secret), /missing/);
    assert.throws(() => verifyPostback(body, sig.slice(0, 63), secret), /not a hex/);
    assert.throws(() => verifyPostback(body, `sha256=${sig}`, secret), /not a hex/);
  });
});
