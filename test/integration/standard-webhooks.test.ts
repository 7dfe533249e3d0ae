// Standard Webhooks (CONTRACT §13): every notification is signed with its seller's own secret, and
// the reference implementation (the `standardwebhooks` npm package) is the judge.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { pixExample } from '../helpers/fixtures.ts';
import { POSTBACK_SECRET } from '../helpers/gateway.ts';
import { header, notificationHarness } from '../helpers/notification-harness.ts';
import type { ReceivedRequest } from '../helpers/receiver.ts';

const day_ms = 24 * 60 * 60 * 1000;

const h = notificationHarness();

const signaturesOf = (r: ReceivedRequest) => (header(r, 'webhook-signature') ?? '').split(' ');
/** What the reference implementation signs for this request's id, timestamp and body with `secret`. */
const referenceSignature = (secret: string, r: ReceivedRequest) =>
  new Webhook(secret).sign(header(r, 'webhook-id') ?? '', new Date(Number(header(r, 'webhook-timestamp')) * 1000), r.body.toString('utf8'));

const headersOf = (r: ReceivedRequest) => ({
  'webhook-id': header(r, 'webhook-id') ?? '',
  'webhook-timestamp': header(r, 'webhook-timestamp') ?? '',
  'webhook-signature': header(r, 'webhook-signature') ?? '',
});

async function secretOf(seller: { headers: Record<string, string> }) {
  const res = await h.gw.app.inject({ method: 'GET', url: '/api/signing-secret', headers: seller.headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { secret: string; createdAt: string; previousSecretExpiresAt: string | null };
}

async function rotate(seller: { headers: Record<string, string> }) {
  const res = await h.gw.app.inject({ method: 'POST', url: '/api/signing-secret/rotate', headers: seller.headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { secret: string; createdAt: string; previousSecretExpiresAt: string | null };
}

/** A paid PIX sale with a postback to `path` and a webhook to `path`-webhook; both delivered. */
async function paidSale(seller: Awaited<ReturnType<typeof h.gw.createSeller>>, path: string) {
  await h.webhook(seller, `${path}-webhook`);
  const id = await h.sale(seller, pixExample({ postbackUrl: h.rx.url(path) }));
  await h.move(id, 'PAYMENT_CONFIRMED');
  await h.drain(h.job());
  const [postback] = h.rx.requestsTo(path);
  const [webhook] = h.rx.requestsTo(`${path}-webhook`);
  assert.ok(postback && webhook, 'both notifications delivered');
  return { postback, webhook };
}

describe('Standard Webhooks signatures (CONTRACT §13)', () => {
  it('each seller has its own whsec_ secret of 32 random bytes, stable until rotated', async () => {
    const a = await h.gw.createSeller();
    const b = await h.gw.createSeller();
    const first = await secretOf(a);
    assert.match(first.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(first.secret.slice(6), 'base64').length, 32);
    assert.equal(first.previousSecretExpiresAt, null);
    assert.deepEqual(await secretOf(a), first);
    const read = await h.gw.app.inject({ method: 'GET', url: '/api/signing-secret', headers: a.headers });
    assert.equal(read.headers['cache-control'], 'no-store');
    assert.notEqual((await secretOf(b)).secret, first.secret);
    const unauthenticated = await h.gw.app.inject({ method: 'GET', url: '/api/signing-secret' });
    assert.equal(unauthenticated.statusCode, 401);
  });

  it('webhooks and postbacks verify with the reference implementation; one changed byte, another seller or a stale timestamp is refused', async () => {
    h.current = new Date();
    const seller = await h.gw.createSeller();
    const other = await h.gw.createSeller();
    const { secret } = await secretOf(seller);
    const otherSecret = (await secretOf(other)).secret;
    const { postback, webhook } = await paidSale(seller, '/sw-signed');
    for (const r of [postback, webhook]) {
      const body = r.body.toString('utf8');
      assert.deepEqual(new Webhook(secret).verify(body, headersOf(r)), JSON.parse(body));
      assert.equal(header(r, 'webhook-id'), header(r, 'x-event-id'));
      assert.equal(header(r, 'webhook-timestamp'), String(Math.floor(h.current.getTime() / 1000)));

      const tampered = Buffer.from(r.body);
      const at = tampered.length - 2;
      tampered[at] = tampered[at]! ^ 1;
      assert.throws(() => new Webhook(secret).verify(tampered.toString('utf8'), headersOf(r)), WebhookVerificationError);
      assert.throws(() => new Webhook(otherSecret).verify(body, headersOf(r)), WebhookVerificationError);
    }
    // The spec's postback signature is unchanged: hex HMAC-SHA256 of the bytes, keyed by POSTBACK_SECRET.
    assert.equal(header(postback, 'x-signature'), createHmac('sha256', POSTBACK_SECRET).update(postback.body).digest('hex'));
    assert.equal(header(webhook, 'x-signature'), undefined);

    // Sent by a gateway whose clock is ten minutes behind: correctly signed, but too old to accept.
    h.current = new Date(Date.now() - 10 * 60 * 1000);
    const late = await paidSale(seller, '/sw-stale');
    const lateBody = late.webhook.body.toString('utf8');
    assert.throws(() => new Webhook(secret).verify(lateBody, headersOf(late.webhook)), /too old/);
    assert.equal(signaturesOf(late.webhook).length, 1);
    assert.ok(signaturesOf(late.webhook).includes(referenceSignature(secret, late.webhook)));
  });

  it('a rotation signs with both secrets for 24 hours, then with the new one only', async () => {
    h.current = new Date();
    const seller = await h.gw.createSeller();
    const old = (await secretOf(seller)).secret;
    const rotatedAt = h.current;
    const rotated = await rotate(seller);
    assert.notEqual(rotated.secret, old);
    assert.equal(rotated.previousSecretExpiresAt, new Date(rotatedAt.getTime() + day_ms).toISOString());
    assert.deepEqual(await secretOf(seller), rotated);

    const during = (await paidSale(seller, '/sw-rotating')).webhook;
    const body = during.body.toString('utf8');
    assert.deepEqual(signaturesOf(during), [referenceSignature(rotated.secret, during), referenceSignature(old, during)]);
    for (const secret of [old, rotated.secret]) assert.deepEqual(new Webhook(secret).verify(body, headersOf(during)), JSON.parse(body));

    // A day and a second later (the gateway's clock): the old secret no longer signs.
    h.current = new Date(rotatedAt.getTime() + day_ms + 1000);
    assert.equal((await secretOf(seller)).previousSecretExpiresAt, null);
    const after = (await paidSale(seller, '/sw-rotated')).webhook;
    assert.deepEqual(signaturesOf(after), [referenceSignature(rotated.secret, after)]);
    assert.notEqual(signaturesOf(after)[0], referenceSignature(old, after));
  });

  it('rotating again within the overlap ends the oldest secret at once: never more than two sign', async () => {
    h.current = new Date();
    const seller = await h.gw.createSeller();
    const first = (await secretOf(seller)).secret;
    const second = (await rotate(seller)).secret;
    h.tick(60_000);
    const third = await rotate(seller);
    assert.equal(third.previousSecretExpiresAt, new Date(h.current.getTime() + day_ms).toISOString());
    const r = (await paidSale(seller, '/sw-twice')).webhook;
    assert.deepEqual(signaturesOf(r), [referenceSignature(third.secret, r), referenceSignature(second, r)]);
    assert.ok(!signaturesOf(r).includes(referenceSignature(first, r)));
    // Concurrent rotations are serialised: each answers a secret, and exactly one is current.
    const answers = await Promise.all([rotate(seller), rotate(seller), rotate(seller)]);
    assert.equal(new Set(answers.map((a) => a.secret)).size, 3);
    const live = await h.gw.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM signing_secrets WHERE seller_id = $1 AND (expires_at IS NULL OR expires_at > $2)',
      [seller.id, h.current],
    );
    assert.equal(live.rows[0]!.n, 2);
  });

  it('a rotation retried under its Idempotency-Key rotates once and answers the same secret', async () => {
    h.current = new Date();
    const seller = await h.gw.createSeller();
    const old = (await secretOf(seller)).secret;
    const headers = { ...seller.headers, 'idempotency-key': 'rotate-once' };
    const first = await h.gw.app.inject({ method: 'POST', url: '/api/signing-secret/rotate', headers });
    const again = await h.gw.app.inject({ method: 'POST', url: '/api/signing-secret/rotate', headers });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(again.body, first.body);
    const r = (await paidSale(seller, '/sw-rotate-once')).webhook;
    assert.deepEqual(signaturesOf(r), [referenceSignature(first.json().secret, r), referenceSignature(old, r)], 'the first secret still signs');
  });

  it("a webhook's test notification carries the three headers too", async () => {
    h.current = new Date();
    const seller = await h.gw.createSeller();
    const { secret } = await secretOf(seller);
    const hook = await h.webhook(seller, '/sw-test-event');
    const res = await h.gw.app.inject({ method: 'POST', url: `/api/webhooks/${hook}/test`, headers: seller.headers });
    assert.equal(res.statusCode, 202, res.body);
    await h.drain(h.job());
    const [r] = h.rx.requestsTo('/sw-test-event');
    assert.ok(r);
    assert.equal(header(r, 'x-test-event'), 'true');
    const body = r.body.toString('utf8');
    assert.deepEqual(new Webhook(secret).verify(body, headersOf(r)), JSON.parse(body));
  });
});
