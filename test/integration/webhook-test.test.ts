/**
 * POST /api/webhooks/{id}/test (CONTRACT §12): one notification of the webhook's type with a fixed
 * sample body in the real body's shape, marked X-Test-Event: true, delivered to a real receiver
 * through the delivery worker, listed in the delivery log and resendable.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pixExample } from '../helpers/fixtures.ts';
import { fund } from '../helpers/funding.ts';
import { adminHeaders, type SellerKeys } from '../helpers/gateway.ts';
import { bodyOf, header, notificationHarness } from '../helpers/notification-harness.ts';

type Json = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// CONTRACT §3's Notification, then the additive `test`.
const NOTIFICATION_KEYS = [
  'id',
  'kind',
  'url',
  'resourceId',
  'eventStatus',
  'status',
  'attempts',
  'lastResponseStatus',
  'nextAttemptAt',
  'createdAt',
  'test',
];

/** The shape of a JSON value: keys in order, and the JSON type of every leaf (null apart). */
function shapeOf(v: unknown): unknown {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.map(shapeOf);
  if (typeof v === 'object') return Object.entries(v as Json).map(([k, x]) => [k, shapeOf(x)]);
  return typeof v;
}

/** The notification suites' bench, with the two requests these tests make most. */
function harness(env?: Record<string, string>) {
  const h = notificationHarness(env);
  return Object.assign(h, {
    sendTest(seller: SellerKeys, webhookId: number | string, payload?: unknown) {
      return h.gw.app.inject({
        method: 'POST',
        url: `/api/webhooks/${webhookId}/test`,
        headers: seller.headers,
        ...(payload === undefined ? {} : { payload: payload as Json }),
      });
    },
    async paidSale(seller: SellerKeys) {
      const id = await h.sale(seller, pixExample({ postbackUrl: null }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      return id;
    },
  });
}

describe('POST /api/webhooks/{id}/test', () => {
  const h = harness();

  test('TRANSACTION: 202 with the notification; the receiver gets the sample, marked, in the real shape; logged; resent', async () => {
    // A real TRANSACTION webhook body to compare with (another seller: its notifications stay apart).
    const reference = await h.gw.createSeller({ name: 'Loja Real', email: 'real@example.com' });
    await h.webhook(reference, '/tx-real');
    const saleId = await h.paidSale(reference);
    await h.drain(h.job());
    const [realRequest] = h.rx.requestsTo('/tx-real');
    assert.ok(realRequest, 'the real webhook was delivered');
    assert.equal(realRequest.headers['x-test-event'], undefined, 'a real notification is not marked as a test');
    const real = bodyOf(realRequest);

    const seller = await h.gw.createSeller({ name: 'Loja Teste', email: 'teste@example.com' });
    const hookId = await h.webhook(seller, '/tx-test');
    h.tick(1000);
    const sentAt = h.current.toISOString();
    const res = await h.sendTest(seller, hookId);
    assert.equal(res.statusCode, 202, res.body);
    const queued = res.json() as Json;
    assert.deepEqual(Object.keys(queued), NOTIFICATION_KEYS);
    assert.ok(Number.isSafeInteger(queued.id), `id an integer, got ${JSON.stringify(queued.id)}`);
    assert.deepEqual(queued, {
      id: queued.id,
      kind: 'TRANSACTION_WEBHOOK',
      url: h.rx.url('/tx-test'),
      resourceId: null,
      eventStatus: 'PAGO',
      status: 'PENDING',
      attempts: 0,
      lastResponseStatus: null,
      nextAttemptAt: sentAt,
      createdAt: sentAt,
      test: true,
    });

    await h.drain(h.job());
    const got = h.rx.requestsTo('/tx-test');
    assert.equal(got.length, 1, 'exactly one notification sent');
    const r = got[0]!;
    assert.equal(r.method, 'POST');
    assert.equal(header(r, 'x-test-event'), 'true');
    assert.match(header(r, 'x-event-id')!, UUID);
    assert.equal(header(r, 'x-delivery-attempt'), '1');
    assert.equal(header(r, 'x-previous-status'), 'PENDENTE');
    assert.equal(header(r, 'x-status-changed-at'), sentAt);
    assert.match(header(r, 'content-type')!, /^application\/json\b/);
    assert.equal(r.headers['x-signature'], undefined, 'webhooks are not signed');
    const raw = r.body.toString('utf8');
    assert.equal(raw, JSON.stringify(JSON.parse(raw)), 'compact JSON');

    const sample = bodyOf(r);
    assert.deepEqual(shapeOf(sample), shapeOf(real), 'the sample has exactly the real body shape: keys, order and types');
    assert.equal(sample.type, 'TRANSACTION');
    assert.equal(sample.userId, seller.id, "the seller's own userId");
    assert.equal(sample.status, 'PAGO');
    assert.equal(sample.transactionId, sample.id);
    assert.notEqual(sample.id, saleId, 'no real transaction id');
    assert.equal((sample.saleItems as Json[])[0]!.saleId, sample.id);
    assert.match(sample.amount as string, /^\d+$/, 'cents as a string, as the real body');

    const [logged] = await h.notifications(seller);
    assert.deepEqual(logged, { ...queued, status: 'DELIVERED', attempts: 1, lastResponseStatus: 200, nextAttemptAt: null });
    assert.deepEqual(
      (await h.notifications(reference)).map((n) => [n.test, n.resourceId]),
      [[false, saleId]],
      'a real notification: test false, its transaction as resourceId',
    );

    h.tick(1000);
    const resent = await h.gw.app.inject({ method: 'POST', url: `/api/notifications/${queued.id}/resend`, headers: seller.headers });
    assert.equal(resent.statusCode, 202, resent.body);
    assert.deepEqual([resent.json().test, resent.json().resourceId, resent.json().status], [true, null, 'PENDING']);
    await h.drain(h.job());
    const again = h.rx.requestsTo('/tx-test');
    assert.equal(again.length, 2, 'the resend delivered once more');
    assert.equal(header(again[1]!, 'x-event-id'), header(r, 'x-event-id'), 'same X-Event-Id');
    assert.equal(header(again[1]!, 'x-test-event'), 'true', 'the resend is marked too');
    assert.equal(header(again[1]!, 'x-delivery-attempt'), '2');
    assert.equal(again[1]!.body.toString(), raw, 'the same bytes');
    const [afterResend] = await h.notifications(seller);
    assert.deepEqual([afterResend!.status, afterResend!.attempts, afterResend!.test], ['DELIVERED', 2, true]);
    assert.equal(h.rx.requestsTo('/tx-real').length, 1, 'nothing more to the other seller');
  });

  test('WITHDRAWAL: the cashout sample in the real shape; a webhook of both types gets the TRANSACTION sample', async () => {
    const seller = await h.gw.createSeller({ name: 'Loja Saque', email: 'saque@example.com' });
    await fund(h.gw, seller.id, 50_000);
    await h.webhook(seller, '/wd-real', ['WITHDRAWAL']);
    const created = await h.gw.app.inject({
      method: 'POST',
      url: '/api/public/cashout',
      headers: seller.headers,
      payload: { amount: 100, pixKey: '529.982.247-25', pixKeyType: 'CPF' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const cashoutId = (created.json() as { id: number }).id;
    for (const event of ['PROCESSING', 'COMPLETED']) {
      const res = await h.gw.app.inject({ method: 'POST', url: `/admin/cashouts/${cashoutId}/events`, headers: adminHeaders, payload: { event } });
      assert.equal(res.statusCode, 200, res.body);
    }
    await h.drain(h.job());
    const real = bodyOf(h.rx.requestsTo('/wd-real').at(-1)!);
    assert.equal(real.status, 'COMPLETED');

    const hookId = await h.webhook(seller, '/wd-test', ['WITHDRAWAL']);
    h.tick(1000);
    const res = await h.sendTest(seller, hookId, {});
    assert.equal(res.statusCode, 202, res.body);
    const queued = res.json() as Json;
    assert.deepEqual([queued.kind, queued.eventStatus, queued.resourceId, queued.test], ['WITHDRAWAL_WEBHOOK', 'COMPLETED', null, true]);
    await h.drain(h.job());
    const [r] = h.rx.requestsTo('/wd-test');
    assert.ok(r, 'the test was delivered');
    assert.equal(h.rx.requestsTo('/wd-test').length, 1);
    assert.equal(header(r, 'x-test-event'), 'true');
    assert.equal(header(r, 'x-previous-status'), 'PROCESSING');
    const sample = bodyOf(r);
    // externalId is the provider's id, a string, or null where none was given (the operator's events here).
    assert.equal(typeof sample.externalId, 'string');
    assert.deepEqual(
      shapeOf(sample),
      shapeOf({ ...real, externalId: real.externalId ?? 'none' }),
      'the sample has exactly the real cashout body shape',
    );
    assert.equal(sample.type, 'WITHDRAWAL');
    assert.notEqual(sample.id, cashoutId, 'no real cashout id');
    assert.deepEqual(sample.user, real.user, "the seller's own user object");
    assert.match(sample.amount as string, /^\d+\.\d{2}$/, 'reais, as the real body');
    assert.equal(h.rx.requestsTo('/wd-real').length, 2, 'only the tested webhook got it');

    const both = await h.webhook(seller, '/both-test', ['WITHDRAWAL', 'TRANSACTION']);
    const bothRes = await h.sendTest(seller, both);
    assert.equal(bothRes.statusCode, 202, bothRes.body);
    assert.equal(bothRes.json().kind, 'TRANSACTION_WEBHOOK');
    await h.drain(h.job());
    const [b] = h.rx.requestsTo('/both-test');
    assert.equal(bodyOf(b!).type, 'TRANSACTION');
    assert.equal(header(b!, 'x-test-event'), 'true');
  });

  test("refused: another seller's webhook 403, unknown or removed 404, bad id 400, no keys 401, a body field 400; nothing queued or sent", async () => {
    const owner = await h.gw.createSeller();
    const other = await h.gw.createSeller();
    const hookId = await h.webhook(owner, '/refused');
    const removed = await h.webhook(other, '/refused-removed');
    assert.equal((await h.gw.app.inject({ method: 'DELETE', url: `/api/webhooks/${removed}`, headers: other.headers })).statusCode, 204);

    const forbidden = await h.sendTest(other, hookId);
    assert.equal(forbidden.statusCode, 403, forbidden.body);
    assert.equal(typeof forbidden.json().message, 'string');
    assert.equal((await h.sendTest(owner, 999_999_999)).statusCode, 404);
    assert.equal((await h.sendTest(other, removed)).statusCode, 404, 'a removed webhook');
    assert.equal((await h.sendTest(owner, 'abc')).statusCode, 400);
    assert.equal((await h.gw.app.inject({ method: 'POST', url: `/api/webhooks/${hookId}/test` })).statusCode, 401);
    const field = await h.sendTest(owner, hookId, { url: 'https://elsewhere.example/x' });
    assert.equal(field.statusCode, 400, field.body);
    assert.equal(field.json().errorType, 'VALIDATION_ERROR');

    await h.drain(h.job());
    assert.deepEqual(await h.notifications(owner), []);
    assert.deepEqual(await h.notifications(other), []);
    assert.equal(h.rx.requestsTo('/refused').length + h.rx.requestsTo('/refused-removed').length, 0, 'nothing sent');
  });

  test("a test neither waits for nor holds back a resource's notifications; it is retried and released like any other", async () => {
    const seller = await h.gw.createSeller();
    const hookId = await h.webhook(seller, '/order');
    // The first real notification and the first test attempt fail; everything after is answered 200.
    const seen = { real: 0, test: 0 };
    h.rx.script('/order', (r) => {
      const which = header(r, 'x-test-event') === 'true' ? 'test' : 'real';
      seen[which]++;
      return seen[which] === 1 ? 500 : 200;
    });
    const job = h.job();
    const first = await h.paidSale(seller);
    assert.equal(await h.runOnce(job), 1);
    const [paid] = await h.notifications(seller);
    assert.deepEqual([paid!.status, paid!.attempts], ['PENDING', 1], 'the real PAGO waits for its retry');

    // Not held back by the pending PAGO of the same target.
    assert.equal((await h.sendTest(seller, hookId)).statusCode, 202);
    assert.equal(await h.runOnce(job), 1, 'the test goes at once');
    const [queued] = await h.notifications(seller);
    assert.deepEqual([queued!.test, queued!.status, queued!.attempts, queued!.lastResponseStatus], [true, 'PENDING', 1, 500], 'retried later');

    // Not holding back another sale's notification to the same target.
    const second = await h.paidSale(seller);
    assert.equal(await h.runOnce(job), 1, "the other sale's PAGO goes at once");
    // That success released the target's waiting notifications (CONTRACT §9 recovery), the test included.
    assert.equal(await h.runOnce(job), 2);
    assert.equal(await h.runOnce(job), 0);
    const sent = h.rx.requestsTo('/order').map((r) => [header(r, 'x-test-event') ?? 'real', bodyOf(r).id, header(r, 'x-delivery-attempt')]);
    assert.deepEqual(sent.slice(0, 3), [
      ['real', first, '1'],
      ['true', 0, '1'],
      ['real', second, '1'],
    ]);
    assert.deepEqual(
      sent.slice(3).map(String).sort(),
      [
        ['real', first, '2'],
        ['true', 0, '2'],
      ]
        .map(String)
        .sort(),
    );
    assert.deepEqual(
      (await h.notifications(seller)).map((n) => [n.test, n.status, n.resourceId]),
      [
        [false, 'DELIVERED', second],
        [true, 'DELIVERED', null],
        [false, 'DELIVERED', first],
      ],
    );
  });
  test('the schema: only a test notification is about no resource, and a test is about none', async () => {
    const seller = await h.gw.createSeller();
    const saleId = await h.paidSale(seller);
    const insert = (test: boolean, transactionId: number | null) =>
      h.gw.ctx.db.query(
        `INSERT INTO notifications (seller_id, kind, event_id, url, transaction_id, event_status, previous_status, status_changed_at,
           payload, order_key, next_attempt_at, created_at, test)
         VALUES ($1, 'TRANSACTION_WEBHOOK', gen_random_uuid(), 'https://seller.example/x', $2, 'PAGO', 'PENDENTE', now(), '{}', 'k', now(), now(), $3)`,
        [seller.id, transactionId, test],
      );
    await assert.rejects(insert(false, null), /check constraint/, 'a real notification names its resource');
    await assert.rejects(insert(true, saleId), /check constraint/, 'a test names none');
  });
});

describe('POST /api/webhooks/{id}/test with WEBHOOK_ALLOW_PRIVATE=false', () => {
  const h = harness({ WEBHOOK_ALLOW_PRIVATE: 'false' });

  test('a loopback target (a row that bypassed creation) is refused at delivery, as any notification', async () => {
    const seller = await h.gw.createSeller();
    const row = await h.gw.ctx.db.query<{ id: number }>(
      `INSERT INTO webhooks (seller_id, url, types) VALUES ($1, $2, ARRAY['TRANSACTION']) RETURNING id`,
      [seller.id, h.rx.url('/private-test')],
    );
    const res = await h.sendTest(seller, row.rows[0]!.id);
    assert.equal(res.statusCode, 202, res.body);
    await h.runOnce(h.job({ retryDelaysMs: [1000] }));
    assert.equal(h.rx.requests.length, 0, 'the receiver got nothing');
    const [n] = await h.notifications(seller);
    assert.deepEqual([n!.test, n!.status, n!.attempts, n!.lastResponseStatus], [true, 'PENDING', 1, null]);
    const lastError = (await h.gw.ctx.db.query<{ last_error: string | null }>('SELECT last_error FROM notifications WHERE id = $1', [n!.id])).rows[0]!
      .last_error;
    assert.match(lastError ?? '', /private/);
  });
});

describe('POST /api/webhooks/{id}/test, a few a minute', () => {
  const h = harness();

  test('the eleventh test within a minute is 429 with Retry-After and queues nothing; a minute later tests go again', async () => {
    const seller = await h.gw.createSeller({ name: 'Loja Ansiosa', email: 'ansiosa@example.com' });
    const id = await h.webhook(seller, '/ansiosa');
    for (let i = 0; i < 10; i++) assert.equal((await h.sendTest(seller, id)).statusCode, 202, `test ${i + 1}`);
    const refused = await h.sendTest(seller, id);
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal((refused.json() as Json).errorType, 'RATE_LIMITED');
    assert.equal((await h.notifications(seller)).length, 10, 'nothing queued by the refused one');
    h.tick(61_000);
    assert.equal((await h.sendTest(seller, id)).statusCode, 202);
  });
});
