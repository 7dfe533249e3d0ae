import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { describe, test } from 'node:test';
import { moveTransaction } from '../../src/transactions/transitions.ts';
import { cardExample, pixExample, shippingExample } from '../helpers/fixtures.ts';
import { fund } from '../helpers/funding.ts';
import { POSTBACK_SECRET } from '../helpers/gateway.ts';
import { bodyOf, header, notificationHarness } from '../helpers/notification-harness.ts';

type Json = Record<string, unknown>;

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// The spec's field order (Events), compared as arrays: order matters for the signed bytes.
const TX_COMMON_KEYS = [
  'id',
  'userId',
  'amount',
  'date',
  'status',
  'paymentMethod',
  'customerDocument',
  'customerEmail',
  'customerName',
  'customerPhone',
  'pixKey',
  'boletoCode',
  'shipping',
  'saleItems',
];
const TX_WEBHOOK_KEYS = [...TX_COMMON_KEYS, 'fee', 'transactionId', 'type'];
const TX_POSTBACK_KEYS = [...TX_COMMON_KEYS, 'externalTransactionId'];
const SALE_ITEM_KEYS = ['id', 'saleId', 'title', 'unitPrice', 'quantity', 'tangible'];
const CASHOUT_WEBHOOK_KEYS = [
  'id',
  'userId',
  'amount',
  'pixKey',
  'pixKeyType',
  'status',
  'externalId',
  'createdAt',
  'updatedAt',
  'processedAt',
  'user',
  'type',
];
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

// CONTRACT §4's examples (test/helpers/fixtures.ts): the PIX one without its postbackUrl, plus `extra`.
const pixBody = (extra: Json = {}): Json => pixExample({ postbackUrl: null }, extra);
const cardBody = (number = '4111111111111111', extra: Json = {}): Json => cardExample(number, '123', extra);

const hmacHex = (raw: Buffer) => createHmac('sha256', POSTBACK_SECRET).update(raw).digest('hex');

describe('notifications', () => {
  const h = notificationHarness();

  describe('webhooks API', () => {
    test('create 201, list, delete 204 then gone; exact shapes', async () => {
      const seller = await h.gw.createSeller();
      const res = await h.gw.app.inject({
        method: 'POST',
        url: '/api/webhooks',
        headers: seller.headers,
        payload: { url: 'https://seller.example/hooks', types: ['TRANSACTION', 'WITHDRAWAL'] },
      });
      assert.equal(res.statusCode, 201, res.body);
      const w = res.json() as Json;
      assert.deepEqual(Object.keys(w), ['id', 'url', 'types', 'createdAt']);
      assert.ok(Number.isSafeInteger(w.id) && (w.id as number) > 0, `webhook id a positive integer, got ${JSON.stringify(w.id)}`);
      assert.equal(w.url, 'https://seller.example/hooks');
      assert.deepEqual(w.types, ['TRANSACTION', 'WITHDRAWAL']);
      assert.match(w.createdAt as string, ISO_MS);

      const second = await h.gw.app.inject({
        method: 'POST',
        url: '/api/webhooks',
        headers: seller.headers,
        payload: { url: 'http://seller.example/w', types: ['WITHDRAWAL'] },
      });
      assert.equal(second.statusCode, 201, second.body);

      const list = await h.gw.app.inject({ method: 'GET', url: '/api/webhooks', headers: seller.headers });
      assert.equal(list.statusCode, 200);
      assert.deepEqual(list.json(), { data: [w, second.json()] });

      const del = await h.gw.app.inject({ method: 'DELETE', url: `/api/webhooks/${w.id}`, headers: seller.headers });
      assert.equal(del.statusCode, 204);
      assert.equal(del.body, '');
      const after = await h.gw.app.inject({ method: 'GET', url: '/api/webhooks', headers: seller.headers });
      assert.deepEqual(after.json(), { data: [second.json()] });
      const again = await h.gw.app.inject({ method: 'DELETE', url: `/api/webhooks/${w.id}`, headers: seller.headers });
      assert.equal(again.statusCode, 404, again.body);
    });

    test("another seller's webhook: 403 on delete, not listed; unknown id 404; bad id 400; no keys 401", async () => {
      const owner = await h.gw.createSeller();
      const other = await h.gw.createSeller();
      const res = await h.gw.app.inject({
        method: 'POST',
        url: '/api/webhooks',
        headers: owner.headers,
        payload: { url: 'https://seller.example/a', types: ['TRANSACTION'] },
      });
      const id = (res.json() as { id: number }).id;
      const del = await h.gw.app.inject({ method: 'DELETE', url: `/api/webhooks/${id}`, headers: other.headers });
      assert.equal(del.statusCode, 403, del.body);
      assert.equal(typeof (del.json() as Json).message, 'string');
      assert.deepEqual((await h.gw.app.inject({ method: 'GET', url: '/api/webhooks', headers: other.headers })).json(), { data: [] });
      assert.equal((await h.gw.app.inject({ method: 'GET', url: '/api/webhooks', headers: owner.headers })).json().data.length, 1, 'still there');
      assert.equal((await h.gw.app.inject({ method: 'DELETE', url: '/api/webhooks/999999999', headers: owner.headers })).statusCode, 404);
      assert.equal((await h.gw.app.inject({ method: 'DELETE', url: '/api/webhooks/abc', headers: owner.headers })).statusCode, 400);
      assert.equal((await h.gw.app.inject({ method: 'GET', url: '/api/webhooks' })).statusCode, 401);
    });

    test('bad url → 400 VALIDATION_ERROR on field url', async () => {
      const seller = await h.gw.createSeller();
      for (const url of ['ftp://x', 'not a url', 'http://user:pw@host', 'http://user@host/x', '/relative/path', 'javascript:alert(1)', '']) {
        const res = await h.gw.app.inject({
          method: 'POST',
          url: '/api/webhooks',
          headers: seller.headers,
          payload: { url, types: ['TRANSACTION'] },
        });
        assert.equal(res.statusCode, 400, `${url} → ${res.body}`);
        const body = res.json() as { errorType: string; details: { field: string }[] };
        assert.equal(body.errorType, 'VALIDATION_ERROR');
        assert.ok(
          body.details.some((d) => d.field === 'url'),
          `${url}: ${res.body}`,
        );
      }
      assert.deepEqual((await h.gw.app.inject({ method: 'GET', url: '/api/webhooks', headers: seller.headers })).json(), { data: [] });
    });

    test('bad types → 400 VALIDATION_ERROR', async () => {
      const seller = await h.gw.createSeller();
      for (const types of [[], ['FOO'], 'TRANSACTION', ['TRANSACTION', 'TRANSACTION'], undefined]) {
        const res = await h.gw.app.inject({
          method: 'POST',
          url: '/api/webhooks',
          headers: seller.headers,
          payload: { url: 'https://seller.example/x', types },
        });
        assert.equal(res.statusCode, 400, `${JSON.stringify(types)} → ${res.body}`);
        const body = res.json() as { errorType: string; details: { field: string }[] };
        assert.equal(body.errorType, 'VALIDATION_ERROR');
        assert.ok(
          body.details.some((d) => d.field.startsWith('types')),
          res.body,
        );
      }
    });

    test('a deleted webhook gets no further notifications', async () => {
      const seller = await h.gw.createSeller();
      const id = await h.webhook(seller, '/deleted-hook');
      const del = await h.gw.app.inject({ method: 'DELETE', url: `/api/webhooks/${id}`, headers: seller.headers });
      assert.equal(del.statusCode, 204);
      const sale = await h.sale(seller, pixBody());
      await h.move(sale, 'PAYMENT_CONFIRMED');
      assert.equal(await h.countRows('transaction_id = $1', [sale]), 0);
      await h.drain(h.job());
      assert.equal(h.rx.requestsTo('/deleted-hook').length, 0);
    });
  });

  describe('bodies, headers and signature', () => {
    test("PIX sale paid: transaction webhook and postback with the spec's exact fields, order and types", async () => {
      const seller = await h.gw.createSeller({ name: 'Loja Corpo', email: 'corpo@example.com' });
      await h.webhook(seller, '/shape-hook');
      h.tick(1000);
      const createdAt = h.current.toISOString();
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/shape-postback?ref=abc') }));
      h.tick(5000);
      const paidAt = h.current.toISOString();
      await h.move(id, 'PAYMENT_CONFIRMED');
      h.tick(1000);
      await h.drain(h.job());

      const read = (await h.gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers })).json() as Json;
      const items = read.items as { id: number }[];

      const [hook] = h.rx.requestsTo('/shape-hook');
      assert.ok(hook, 'webhook delivered');
      assert.equal(h.rx.requestsTo('/shape-hook').length, 1);
      const w = bodyOf(hook);
      assert.deepEqual(Object.keys(w), TX_WEBHOOK_KEYS);
      assert.deepEqual(w, {
        id,
        userId: seller.id,
        amount: '15000',
        date: createdAt,
        status: 'PAGO',
        paymentMethod: 'PIX',
        customerDocument: '52998224725',
        customerEmail: 'maria@example.com',
        customerName: 'Maria Silva',
        customerPhone: '11987654321',
        pixKey: read.pixKey,
        boletoCode: null,
        shipping: null,
        saleItems: [{ id: items[0]!.id, saleId: id, title: 'Curso', unitPrice: '15000', quantity: 1, tangible: false }],
        fee: 298,
        transactionId: id,
        type: 'TRANSACTION',
      });
      assert.equal(typeof w.pixKey, 'string');
      assert.ok((w.pixKey as string).startsWith('000201'), 'the BR Code text');
      assert.deepEqual(Object.keys((w.saleItems as Json[])[0]!), SALE_ITEM_KEYS);
      assert.equal(read.systemFee, 298);

      const [pb] = h.rx.requestsTo('/shape-postback');
      assert.ok(pb, 'postback delivered');
      assert.equal(pb.path, '/shape-postback?ref=abc', 'the query string is kept');
      const p = bodyOf(pb);
      assert.deepEqual(Object.keys(p), TX_POSTBACK_KEYS);
      const { fee: _f, transactionId: _t, type: _y, ...common } = w;
      assert.deepEqual(p, { ...common, externalTransactionId: read.externalTransactionId });
      assert.equal(typeof p.externalTransactionId, 'string');
      assert.ok((p.externalTransactionId as string).length > 0, 'the postback carries the externalTransactionId');

      for (const r of [hook, pb]) {
        assert.equal(r.method, 'POST');
        assert.match(header(r, 'content-type')!, /^application\/json\b/);
        const raw = r.body.toString('utf8');
        assert.equal(raw, JSON.stringify(JSON.parse(raw)), 'compact JSON');
        assert.match(header(r, 'x-event-id')!, UUID);
        assert.equal(header(r, 'x-delivery-attempt'), '1');
        assert.equal(header(r, 'x-previous-status'), 'PENDENTE');
        assert.equal(header(r, 'x-status-changed-at'), paidAt);
        assert.equal(r.headers['x-test-event'], undefined, 'a real notification is not marked as a test');
      }
      assert.notEqual(header(hook, 'x-event-id'), header(pb, 'x-event-id'), 'one event id per notification');

      // Signature: only on the postback, HMAC-SHA256 of the raw bytes received, lower-case hex.
      assert.equal(hook.headers['x-signature'], undefined, 'webhooks are not signed');
      const sig = header(pb, 'x-signature')!;
      assert.match(sig, /^[0-9a-f]{64}$/);
      assert.ok(
        timingSafeEqual(Buffer.from(sig, 'hex'), Buffer.from(hmacHex(pb.body), 'hex')),
        `X-Signature the HMAC of the bytes received (${hmacHex(pb.body)}), got ${sig}`,
      );
      assert.equal(sig, hmacHex(pb.body));
      // Not over a re-serialisation with sorted keys.
      const sorted = Buffer.from(JSON.stringify(Object.fromEntries(Object.entries(p).sort(([a], [b]) => a.localeCompare(b)))));
      assert.notEqual(sig, hmacHex(sorted));
    });

    test('card sale with shipping and non-ASCII text: shipping as JSON text, fee of the card schedule, signature over UTF-8 bytes', async () => {
      const seller = await h.gw.createSeller();
      await h.webhook(seller, '/card-hook');
      const id = await h.sale(seller, cardBody('4111111111111111', { postbackUrl: h.rx.url('/card-postback') }));
      await h.move(id, 'SENT_TO_PROCESSOR', 'APPROVED');
      await h.drain(h.job());
      const read = (await h.gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers })).json() as Json;
      const [hook] = h.rx.requestsTo('/card-hook');
      const [pb] = h.rx.requestsTo('/card-postback');
      assert.ok(
        hook && pb,
        `one webhook and one postback received: ${h.rx.requestsTo('/card-hook').length} and ${h.rx.requestsTo('/card-postback').length}`,
      );
      for (const r of [hook, pb]) {
        const b = bodyOf(r);
        assert.equal(b.paymentMethod, 'CREDIT_CARD');
        assert.equal(b.status, 'PAGO');
        assert.equal(b.amount, '16000');
        assert.equal(b.pixKey, null);
        assert.equal(b.customerDocument, null);
        assert.equal(b.customerPhone, null);
        assert.equal(typeof b.shipping, 'string');
        assert.equal(b.shipping, JSON.stringify(shippingExample()));
        assert.deepEqual((b.saleItems as Json[])[0], {
          id: (read.items as { id: number }[])[0]!.id,
          saleId: id,
          title: 'Camiseta',
          unitPrice: '15000',
          quantity: 1,
          tangible: true,
        });
        assert.equal(header(r, 'x-previous-status'), 'EM_PROCESSAMENTO');
        assert.ok(r.body.includes(Buffer.from('São Paulo', 'utf8')), 'UTF-8 on the wire');
      }
      // 49 + round(16000 × 4.99 %) = 49 + 798 = 847
      assert.equal(bodyOf(hook).fee, 847);
      assert.equal(bodyOf(hook).fee, read.systemFee);
      assert.equal(header(pb, 'x-signature'), hmacHex(pb.body));
    });

    test('cashout webhook: exact fields, reais, user; only to WITHDRAWAL webhooks, not signed', async () => {
      const seller = await h.gw.createSeller({ name: 'Loja Saque', email: 'saque@example.com' });
      await fund(h.gw, seller.id, 50_000);
      await h.webhook(seller, '/cashout-hook', ['WITHDRAWAL']);
      const created = await h.gw.app.inject({
        method: 'POST',
        url: '/api/public/cashout',
        headers: seller.headers,
        payload: { amount: 100, pixKey: '529.982.247-25', pixKeyType: 'CPF' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const c = created.json() as { id: number; createdAt: string };
      h.tick(2000);
      const processingAt = h.current.toISOString();
      await h.cashoutEvent(c.id, 'PROCESSING');
      h.tick(2000);
      const completedAt = h.current.toISOString();
      await h.cashoutEvent(c.id, 'COMPLETED');
      await h.drain(h.job());

      const got = h.rx.requestsTo('/cashout-hook');
      assert.deepEqual(
        got.map((r) => bodyOf(r).status),
        ['PROCESSING', 'COMPLETED'],
      );
      const [processing, completed] = got.map(bodyOf) as [Json, Json];
      for (const b of [processing, completed]) assert.deepEqual(Object.keys(b), CASHOUT_WEBHOOK_KEYS);
      assert.deepEqual(Object.keys(processing.user as Json), ['id', 'name', 'email']);
      assert.deepEqual(processing, {
        id: c.id,
        userId: seller.id,
        amount: '100.00',
        pixKey: '52998224725',
        pixKeyType: 'CPF',
        status: 'PROCESSING',
        externalId: processing.externalId,
        createdAt: c.createdAt,
        updatedAt: processingAt,
        processedAt: null,
        user: { id: seller.id, name: 'Loja Saque', email: 'saque@example.com' },
        type: 'WITHDRAWAL',
      });
      assert.ok(
        processing.externalId === null || typeof processing.externalId === 'string',
        `externalId null or a string, got ${JSON.stringify(processing.externalId)}`,
      );
      assert.equal(completed.updatedAt, completedAt);
      assert.equal(completed.processedAt, completedAt);
      assert.deepEqual(
        got.map((r) => header(r, 'x-previous-status')),
        ['PENDING', 'PROCESSING'],
      );
      assert.deepEqual(
        got.map((r) => header(r, 'x-status-changed-at')),
        [processingAt, completedAt],
      );
      for (const r of got) {
        assert.equal(r.headers['x-signature'], undefined);
        assert.match(header(r, 'content-type')!, /^application\/json\b/);
        assert.equal(r.body.toString(), JSON.stringify(JSON.parse(r.body.toString())));
        assert.match(header(r, 'x-event-id')!, UUID);
        assert.equal(header(r, 'x-delivery-attempt'), '1');
      }
      const kinds = (await h.notifications(seller)).map((n) => n.kind);
      assert.deepEqual(kinds, ['WITHDRAWAL_WEBHOOK', 'WITHDRAWAL_WEBHOOK']);
    });
  });

  describe('which status changes notify', () => {
    test('none for PENDENTE or EM_PROCESSAMENTO; one per PAGO, CANCELADO, RECUSADO, ESTORNADO, FALHA, CHARGEBACK, MED and MED → PAGO', async () => {
      const seller = await h.gw.createSeller();
      await h.webhook(seller, '/statuses-hook', ['TRANSACTION']);
      await h.webhook(seller, '/statuses-wd-only', ['WITHDRAWAL']);

      const card = await h.sale(seller, cardBody());
      assert.equal(await h.countRows('transaction_id = $1', [card]), 0, 'PENDENTE: nothing queued');
      await h.move(card, 'SENT_TO_PROCESSOR');
      assert.equal(await h.countRows('transaction_id = $1', [card]), 0, 'EM_PROCESSAMENTO: nothing queued');
      await h.move(card, 'APPROVED', 'CHARGEBACK_OPENED', 'CHARGEBACK_REVERTED', 'CHARGEBACK_OPENED', 'CHARGEBACK_CONFIRMED');

      const declined = await h.sale(seller, cardBody('4000000000000002'));
      await h.move(declined, 'SENT_TO_PROCESSOR', 'DECLINED');
      const pix = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/statuses-postback') }));
      await h.move(pix, 'PAYMENT_CONFIRMED', 'MED_OPENED', 'MED_WON', 'MED_OPENED', 'MED_LOST');
      const cancelled = await h.sale(seller, pixBody());
      await h.move(cancelled, 'CANCELLED');
      const failed = await h.sale(seller, pixBody());
      await h.move(failed, 'PROCESSING_ERROR', 'RETRY_PROCESSED', 'REFUNDED');

      const expected: Record<number, [string, string][]> = {
        [card]: [
          ['EM_PROCESSAMENTO', 'PAGO'],
          ['PAGO', 'CHARGEBACK'],
          ['CHARGEBACK', 'PAGO'],
          ['PAGO', 'CHARGEBACK'],
          ['CHARGEBACK', 'ESTORNADO'],
        ],
        [declined]: [['EM_PROCESSAMENTO', 'RECUSADO']],
        [pix]: [
          ['PENDENTE', 'PAGO'],
          ['PAGO', 'MED'],
          ['MED', 'PAGO'],
          ['PAGO', 'MED'],
          ['MED', 'ESTORNADO'],
        ],
        [cancelled]: [['PENDENTE', 'CANCELADO']],
        [failed]: [
          ['PENDENTE', 'FALHA'],
          ['FALHA', 'PAGO'],
          ['PAGO', 'ESTORNADO'],
        ],
      };
      const list = (await h.notifications(seller)).reverse();
      const hooks = list.filter((n) => n.kind === 'TRANSACTION_WEBHOOK');
      const postbacks = list.filter((n) => n.kind === 'TRANSACTION_POSTBACK');
      assert.equal(list.length, hooks.length + postbacks.length, 'no WITHDRAWAL_WEBHOOK for sales');
      assert.equal(hooks.length, 15);
      assert.deepEqual(
        postbacks.map((n) => n.eventStatus),
        ['PAGO', 'MED', 'PAGO', 'MED', 'ESTORNADO'],
      );
      for (const [id, moves] of Object.entries(expected)) {
        assert.deepEqual(
          hooks.filter((n) => n.resourceId === Number(id)).map((n) => n.eventStatus),
          moves.map(([, to]) => to),
          `sale ${id}`,
        );
      }

      await h.drain(h.job());
      const got = h.rx.requestsTo('/statuses-hook');
      assert.equal(got.length, 15);
      for (const [id, moves] of Object.entries(expected)) {
        const mine = got.filter((r) => bodyOf(r).id === Number(id));
        assert.deepEqual(
          mine.map((r) => [header(r, 'x-previous-status'), bodyOf(r).status]),
          moves,
          `sale ${id}: delivered in order`,
        );
      }
      // `fee` is the systemFee: 0 while never paid, the split's fee afterwards (kept on refund).
      const feeOf = (id: number, status: string) =>
        got
          .map(bodyOf)
          .filter((b) => b.id === id && b.status === status)
          .map((b) => b.fee);
      assert.deepEqual(feeOf(cancelled, 'CANCELADO'), [0]);
      assert.deepEqual(feeOf(failed, 'FALHA'), [0]);
      assert.deepEqual(feeOf(failed, 'ESTORNADO'), [298]);
      assert.deepEqual(feeOf(pix, 'MED'), [298, 298]);
      assert.deepEqual(feeOf(declined, 'RECUSADO'), [0]);
      assert.deepEqual(feeOf(card, 'CHARGEBACK'), [847, 847]);
      assert.deepEqual(
        h.rx.requestsTo('/statuses-postback').map((r) => bodyOf(r).status),
        ['PAGO', 'MED', 'PAGO', 'MED', 'ESTORNADO'],
      );
      assert.equal(h.rx.requestsTo('/statuses-wd-only').length, 0, 'a WITHDRAWAL-only webhook gets nothing for sales');
      const statusesOf = (await h.notifications(seller)).map((n) => n.status);
      assert.ok(
        statusesOf.every((s) => s === 'DELIVERED'),
        `every notification delivered: ${JSON.stringify(statusesOf)}`,
      );
    });

    test('cashouts: PROCESSING, COMPLETED, REJECTED, CANCELLED each notify WITHDRAWAL webhooks only; creation (PENDING) does not', async () => {
      const seller = await h.gw.createSeller();
      await fund(h.gw, seller.id, 100_000);
      await h.webhook(seller, '/co-tx-only', ['TRANSACTION']);
      await h.webhook(seller, '/co-wd-only', ['WITHDRAWAL']);
      await h.webhook(seller, '/co-both', ['WITHDRAWAL', 'TRANSACTION']);
      const cashout = async () => {
        const res = await h.gw.app.inject({
          method: 'POST',
          url: '/api/public/cashout',
          headers: seller.headers,
          payload: { amount: 100, pixKey: '52998224725' },
        });
        assert.equal(res.statusCode, 201, res.body);
        return (res.json() as { id: number }).id;
      };
      const a = await cashout();
      const b = await cashout();
      const c = await cashout();
      assert.equal(await h.countRows('seller_id = $1', [seller.id]), 0, 'PENDING: nothing queued');
      await h.cashoutEvent(a, 'PROCESSING');
      await h.cashoutEvent(a, 'COMPLETED');
      await h.cashoutEvent(b, 'PROCESSING');
      await h.cashoutEvent(b, 'REJECTED');
      await h.cashoutEvent(c, 'CANCELLED');
      await h.drain(h.job());
      for (const path of ['/co-wd-only', '/co-both']) {
        const got = h.rx.requestsTo(path).map(bodyOf);
        assert.equal(got.length, 5, path);
        assert.ok(
          got.every((g) => g.type === 'WITHDRAWAL'),
          `${path}: every type WITHDRAWAL, got ${JSON.stringify(got.map((g) => g.type))}`,
        );
        assert.deepEqual(
          got.filter((g) => g.id === a).map((g) => g.status),
          ['PROCESSING', 'COMPLETED'],
        );
        assert.deepEqual(
          got.filter((g) => g.id === b).map((g) => g.status),
          ['PROCESSING', 'REJECTED'],
        );
        assert.deepEqual(
          got.filter((g) => g.id === c).map((g) => g.status),
          ['CANCELLED'],
        );
      }
      assert.equal(h.rx.requestsTo('/co-tx-only').length, 0, 'a TRANSACTION-only webhook gets nothing for cashouts');
      const list = await h.notifications(seller);
      assert.equal(list.length, 10);
      assert.ok(
        list.every((n) => n.kind === 'WITHDRAWAL_WEBHOOK' && n.status === 'DELIVERED'),
        `every notification a delivered WITHDRAWAL_WEBHOOK: ${JSON.stringify(list.map((n) => [n.kind, n.status]))}`,
      );
    });

    test('atomicity: a refused change (409) writes no row; a rolled-back change leaves none either', async () => {
      const seller = await h.gw.createSeller();
      await h.webhook(seller, '/atomic-hook');
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/atomic-postback') }));
      for (const e of ['REFUNDED', 'MED_OPENED', 'CHARGEBACK_OPENED', 'APPROVED', 'DECLINED']) {
        const res = await h.event(id, e);
        assert.equal(res.statusCode, 409, `${e}: ${res.body}`);
        assert.equal((res.json() as Json).errorType, 'INVALID_TRANSITION');
      }
      const refund = await h.gw.app.inject({ method: 'POST', url: `/api/transactions/${id}/refund`, headers: seller.headers });
      assert.equal(refund.statusCode, 409);
      assert.equal(await h.countRows('transaction_id = $1', [id]), 0);

      // The outbox rows are written inside the status change's database transaction.
      await assert.rejects(
        h.gw.ctx.db.tx(async (q) => {
          const moved = await moveTransaction(q, id, 'PAYMENT_CONFIRMED', h.current);
          assert.equal(moved.kind, 'moved');
          const inside = (await q.query<{ n: number }>('SELECT count(*)::int AS n FROM notifications WHERE transaction_id = $1', [id])).rows[0]!.n;
          assert.equal(inside, 2, 'webhook + postback rows, visible inside the transaction');
          throw new Error('crash before commit');
        }),
        /crash before commit/,
      );
      assert.equal(await h.countRows('transaction_id = $1', [id]), 0);
      const read = (await h.gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers })).json() as Json;
      assert.equal(read.status, 'PENDENTE');

      await h.move(id, 'PAYMENT_CONFIRMED');
      assert.equal(await h.countRows('transaction_id = $1', [id]), 2);
      const again = await h.event(id, 'CHARGEBACK_OPENED');
      assert.equal(again.statusCode, 409, 'PIX: no chargeback');
      assert.equal(await h.countRows('transaction_id = $1', [id]), 2);
      // Repeating the last event is a 200 no-op and notifies nothing.
      assert.equal((await h.event(id, 'PAYMENT_CONFIRMED')).statusCode, 200);
      assert.equal(await h.countRows('transaction_id = $1', [id]), 2);
      await h.drain(h.job());
      assert.equal(h.rx.requestsTo('/atomic-hook').length, 1);
      assert.equal(h.rx.requestsTo('/atomic-postback').length, 1);
    });
  });

  describe('retries', () => {
    test('500, 500, 200 with delays [1000, 2000]: third attempt delivers; same event id; not before each delay', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/retry', 500, 500, 200);
      const job = h.job({ retryDelaysMs: [1000, 2000], random: () => 0.5 });
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/retry') }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      const start = h.current.getTime();
      const at = (ms: number) => new Date(start + ms).toISOString();
      const got = () => h.rx.requestsTo('/retry');
      const mine = async () => (await h.notifications(seller))[0]!;

      await h.runOnce(job);
      assert.equal(got().length, 1);
      let n = await mine();
      assert.deepEqual(
        { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus, nextAttemptAt: n.nextAttemptAt },
        { status: 'PENDING', attempts: 1, lastResponseStatus: 500, nextAttemptAt: at(1000) },
      );

      h.tick(999);
      await h.runOnce(job);
      assert.equal(got().length, 1, 'not before the delay');
      h.tick(1);
      await h.runOnce(job);
      assert.equal(got().length, 2);
      n = await mine();
      assert.deepEqual(
        { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus, nextAttemptAt: n.nextAttemptAt },
        { status: 'PENDING', attempts: 2, lastResponseStatus: 500, nextAttemptAt: at(3000) },
      );

      h.tick(1999);
      await h.runOnce(job);
      assert.equal(got().length, 2, 'not before the second delay');
      h.tick(1);
      await h.runOnce(job);
      assert.equal(got().length, 3);
      await h.runOnce(job);
      assert.equal(got().length, 3, 'delivered: no more attempts');

      const reqs = got();
      assert.deepEqual(
        reqs.map((r) => header(r, 'x-delivery-attempt')),
        ['1', '2', '3'],
      );
      assert.equal(new Set(reqs.map((r) => header(r, 'x-event-id'))).size, 1, 'same X-Event-Id on every attempt');
      assert.ok(
        reqs.every((r) => r.body.equals(reqs[0]!.body)),
        'same bytes on every attempt',
      );
      assert.ok(
        reqs.every((r) => header(r, 'x-signature') === hmacHex(r.body)),
        'every attempt signed over its bytes',
      );
      n = await mine();
      assert.deepEqual(Object.keys(n), NOTIFICATION_KEYS);
      assert.deepEqual(
        { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus, nextAttemptAt: n.nextAttemptAt },
        { status: 'DELIVERED', attempts: 3, lastResponseStatus: 200, nextAttemptAt: null },
      );
    });

    test('jitter: random() moves the next attempt by up to ±10 %', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/jitter', 500, 200);
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/jitter') }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      const start = h.current.getTime();
      await h.runOnce(h.job({ retryDelaysMs: [10_000], random: () => 1 }));
      assert.equal((await h.notifications(seller))[0]!.nextAttemptAt, new Date(start + 11_000).toISOString());
      h.tick(11_000);
      await h.drain(h.job());
      assert.equal((await h.notifications(seller))[0]!.status, 'DELIVERED');
    });

    test('schedule exhausted → FAILED, nextAttemptAt null; no further attempts', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/exhaust', 503);
      const job = h.job({ retryDelaysMs: [1000], random: () => 0.5 });
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/exhaust') }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      await h.runOnce(job);
      h.tick(1000);
      await h.runOnce(job);
      h.tick(3_600_000);
      await h.runOnce(job);
      assert.equal(h.rx.requestsTo('/exhaust').length, 2);
      const n = (await h.notifications(seller))[0]!;
      assert.deepEqual(
        { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus, nextAttemptAt: n.nextAttemptAt },
        { status: 'FAILED', attempts: 2, lastResponseStatus: 503, nextAttemptAt: null },
      );
    });

    test('410 Gone → FAILED at once', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/gone', 410);
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/gone') }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      await h.runOnce(h.job({ retryDelaysMs: [1000, 1000, 1000] }));
      h.tick(10_000);
      await h.drain(h.job({ retryDelaysMs: [1000, 1000, 1000] }));
      assert.equal(h.rx.requestsTo('/gone').length, 1);
      const n = (await h.notifications(seller))[0]!;
      assert.deepEqual(
        { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus, nextAttemptAt: n.nextAttemptAt },
        { status: 'FAILED', attempts: 1, lastResponseStatus: 410, nextAttemptAt: null },
      );
    });

    test('any 2xx counts as delivered', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/accepted', 202);
      h.rx.script('/no-content', 204);
      await h.webhook(seller, '/no-content');
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/accepted') }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      await h.drain(h.job());
      const list = await h.notifications(seller);
      assert.deepEqual(list.map((n) => [n.status, n.lastResponseStatus]).sort(), [
        ['DELIVERED', 202],
        ['DELIVERED', 204],
      ]);
    });

    test('a 302 is not followed and counts as a failed attempt', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/redirect', { status: 302, headers: { location: h.rx.url('/redirect-target') } }, 200);
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/redirect') }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      const job = h.job({ retryDelaysMs: [1000] });
      await h.runOnce(job);
      assert.equal(h.rx.requestsTo('/redirect').length, 1);
      assert.equal(h.rx.requestsTo('/redirect-target').length, 0, 'the redirect is not followed');
      const n = (await h.notifications(seller))[0]!;
      assert.deepEqual(
        { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus },
        { status: 'PENDING', attempts: 1, lastResponseStatus: 302 },
      );
      h.tick(1000);
      await h.runOnce(job);
      assert.equal((await h.notifications(seller))[0]!.status, 'DELIVERED');
      assert.equal(h.rx.requestsTo('/redirect-target').length, 0);
    });

    test('a receiver slower than timeoutMs → failed attempt (no status)', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/slow', { status: 200, delayMs: 5000 }, 'hang', 200);
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/slow') }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      // What the receiver did with each request to /slow: answered it, or saw the gateway hang up first.
      const fates: ('answered' | 'abandoned')[] = [];
      const watch = (req: IncomingMessage, res: ServerResponse) => {
        if (req.url?.startsWith('/slow')) res.on('close', () => fates.push(res.writableFinished ? 'answered' : 'abandoned'));
      };
      h.rx.server.on('request', watch);
      try {
        const job = h.job({ timeoutMs: 200, retryDelaysMs: [1000, 1000] });
        await h.runOnce(job);
        // The attempt ended at the time-out, not when the receiver's answer (due 5 s later) came: the
        // gateway closed the connection without it (a job that waited would have been answered 200).
        await h.rx.waitFor(() => fates.length === 1, 5_000, 'the receiver to see the first request end');
        assert.deepEqual(fates, ['abandoned'], 'the gateway gave up on the slow receiver before it answered');
        let n = (await h.notifications(seller))[0]!;
        assert.deepEqual(
          { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus },
          { status: 'PENDING', attempts: 1, lastResponseStatus: null },
        );
        const lastError = (await h.gw.ctx.db.query<{ last_error: string | null }>('SELECT last_error FROM notifications WHERE id = $1', [n.id]))
          .rows[0]!.last_error;
        assert.ok(lastError && lastError.length > 0, 'the error is recorded');
        h.tick(1000);
        await h.runOnce(job); // a receiver that never answers: also a time-out
        await h.rx.waitFor(() => fates.length === 2, 5_000, 'the receiver to see the second request end');
        assert.deepEqual(fates, ['abandoned', 'abandoned'], 'the gateway gave up on the receiver that never answers');
        n = (await h.notifications(seller))[0]!;
        assert.deepEqual(
          { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus },
          { status: 'PENDING', attempts: 2, lastResponseStatus: null },
        );
        h.tick(1000);
        await h.runOnce(job);
        n = (await h.notifications(seller))[0]!;
        assert.deepEqual(
          { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus },
          { status: 'DELIVERED', attempts: 3, lastResponseStatus: 200 },
        );
      } finally {
        h.rx.server.off('request', watch);
      }
    });

    test('a connection refused is a failed attempt', async () => {
      const seller = await h.gw.createSeller();
      const id = await h.sale(seller, pixBody({ postbackUrl: 'http://127.0.0.1:1/nothing-listens' }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      await h.runOnce(h.job({ retryDelaysMs: [] }));
      const n = (await h.notifications(seller))[0]!;
      assert.deepEqual(
        { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus },
        { status: 'FAILED', attempts: 1, lastResponseStatus: null },
      );
    });
  });

  describe('ordering and resend', () => {
    test('a later status waits while the earlier one is pending; goes once it is delivered', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/order', 500, 200);
      const job = h.job({ retryDelaysMs: [1000] });
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/order') }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      h.tick(10);
      await h.move(id, 'REFUNDED');
      const statuses = () => h.rx.requestsTo('/order').map((r) => bodyOf(r).status);

      await h.runOnce(job);
      assert.deepEqual(statuses(), ['PAGO']);
      await h.runOnce(job);
      await h.runOnce(job);
      assert.deepEqual(statuses(), ['PAGO'], 'ESTORNADO is not delivered while PAGO is pending');
      const list = await h.notifications(seller);
      assert.deepEqual(
        list.map((n) => [n.eventStatus, n.status, n.attempts]),
        [
          ['ESTORNADO', 'PENDING', 0],
          ['PAGO', 'PENDING', 1],
        ],
      );

      h.tick(1000);
      await h.drain(job);
      assert.deepEqual(statuses(), ['PAGO', 'PAGO', 'ESTORNADO']);
      assert.deepEqual(
        (await h.notifications(seller)).map((n) => [n.eventStatus, n.status, n.attempts]),
        [
          ['ESTORNADO', 'DELIVERED', 1],
          ['PAGO', 'DELIVERED', 2],
        ],
      );
    });

    test('a later status goes once the earlier one has FAILED for good', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/order-failed', 410, 200);
      const job = h.job({ retryDelaysMs: [1000] });
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/order-failed') }));
      await h.move(id, 'PAYMENT_CONFIRMED', 'MED_OPENED');
      await h.drain(job);
      assert.deepEqual(
        h.rx.requestsTo('/order-failed').map((r) => [bodyOf(r).status, header(r, 'x-previous-status')]),
        [
          ['PAGO', 'PENDENTE'],
          ['MED', 'PAGO'],
        ],
      );
      assert.deepEqual(
        (await h.notifications(seller)).map((n) => [n.eventStatus, n.status]),
        [
          ['MED', 'DELIVERED'],
          ['PAGO', 'FAILED'],
        ],
      );
    });

    test('ordering is per target: another target of the same sale is not held back', async () => {
      const seller = await h.gw.createSeller();
      await h.webhook(seller, '/per-target-hook');
      h.rx.script('/per-target-postback', 500, 200);
      const job = h.job({ retryDelaysMs: [1000] });
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/per-target-postback') }));
      await h.move(id, 'PAYMENT_CONFIRMED', 'REFUNDED');
      await h.drain(job);
      assert.deepEqual(
        h.rx.requestsTo('/per-target-hook').map((r) => bodyOf(r).status),
        ['PAGO', 'ESTORNADO'],
      );
      assert.deepEqual(
        h.rx.requestsTo('/per-target-postback').map((r) => bodyOf(r).status),
        ['PAGO'],
      );
      h.tick(1000);
      await h.drain(job);
      assert.deepEqual(
        h.rx.requestsTo('/per-target-postback').map((r) => bodyOf(r).status),
        ['PAGO', 'PAGO', 'ESTORNADO'],
      );
    });

    test('resend of a DELIVERED notification: 202, one more delivery, same X-Event-Id, attempts + 1, exempt from ordering', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/resend', 200, 200, 200, 500, 200);
      const job = h.job({ retryDelaysMs: [1000] });
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/resend') }));
      await h.move(id, 'PAYMENT_CONFIRMED');
      await h.drain(job);
      const [paid] = await h.notifications(seller);
      assert.ok(paid, 'the PAGO notification is listed');
      assert.deepEqual([paid.status, paid.attempts], ['DELIVERED', 1]);

      const res = await h.gw.app.inject({ method: 'POST', url: `/api/notifications/${paid.id}/resend`, headers: seller.headers });
      assert.equal(res.statusCode, 202, res.body);
      const view = res.json() as Json;
      assert.deepEqual(Object.keys(view), NOTIFICATION_KEYS);
      assert.equal(view.id, paid.id);
      // A later status queued behind the resend is not held back by it (the resend is exempt).
      h.tick(10);
      await h.move(id, 'REFUNDED');
      await h.runOnce(job);
      const got = h.rx.requestsTo('/resend');
      assert.equal(got.length, 3, 'the resend and the refund go in the same run');
      const [first, resent] = [got[0]!, got.find((r, i) => i > 0 && bodyOf(r).status === 'PAGO')!];
      assert.equal(header(resent, 'x-event-id'), header(first, 'x-event-id'));
      assert.equal(header(resent, 'x-delivery-attempt'), '2');
      assert.ok(resent.body.equals(first.body), 'the same bytes');
      assert.equal(header(resent, 'x-signature'), hmacHex(resent.body));
      await h.drain(job);
      const after = await h.notifications(seller);
      const paidAfter = after.find((n) => n.id === paid.id)!;
      assert.deepEqual([paidAfter.status, paidAfter.attempts, paidAfter.lastResponseStatus], ['DELIVERED', 2, 200]);
      assert.equal(h.rx.requestsTo('/resend').length, 3, 'exactly one more delivery');

      // A failing resend of a delivered notification leaves it DELIVERED (attempts go on).
      const again = await h.gw.app.inject({ method: 'POST', url: `/api/notifications/${paid.id}/resend`, headers: seller.headers });
      assert.equal(again.statusCode, 202);
      await h.drain(job);
      const third = h.rx.requestsTo('/resend')[3]!;
      assert.equal(header(third, 'x-delivery-attempt'), '3');
      const afterFail = (await h.notifications(seller)).find((n) => n.id === paid.id)!;
      assert.deepEqual([afterFail.status, afterFail.attempts, afterFail.lastResponseStatus, afterFail.nextAttemptAt], ['DELIVERED', 3, 500, null]);
      h.tick(60_000);
      await h.drain(job);
      assert.equal(h.rx.requestsTo('/resend').length, 4, 'no automatic retry of a resend of a finished notification');
    });

    test('resend of a pending notification held back by an earlier one goes now; resend of a FAILED one', async () => {
      const seller = await h.gw.createSeller();
      h.rx.script('/resend-order', 500, 200);
      const job = h.job({ retryDelaysMs: [3_600_000] });
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/resend-order') }));
      await h.move(id, 'PAYMENT_CONFIRMED', 'REFUNDED');
      await h.drain(job);
      const [refunded, paid] = await h.notifications(seller);
      assert.deepEqual([refunded!.eventStatus, refunded!.attempts, paid!.eventStatus, paid!.status], ['ESTORNADO', 0, 'PAGO', 'PENDING']);
      const res = await h.gw.app.inject({ method: 'POST', url: `/api/notifications/${refunded!.id}/resend`, headers: seller.headers });
      assert.equal(res.statusCode, 202, res.body);
      await h.drain(job);
      // The resend succeeded, so the target's notification waiting for its retry (PAGO) went at once.
      assert.deepEqual(
        h.rx.requestsTo('/resend-order').map((r) => [bodyOf(r).status, header(r, 'x-delivery-attempt')]),
        [
          ['PAGO', '1'],
          ['ESTORNADO', '1'],
          ['PAGO', '2'],
        ],
      );

      const seller2 = await h.gw.createSeller();
      h.rx.script('/resend-failed', 410, 200);
      const id2 = await h.sale(seller2, pixBody({ postbackUrl: h.rx.url('/resend-failed') }));
      await h.move(id2, 'PAYMENT_CONFIRMED');
      await h.drain(job);
      const [failed] = await h.notifications(seller2);
      assert.equal(failed!.status, 'FAILED');
      assert.equal(
        (await h.gw.app.inject({ method: 'POST', url: `/api/notifications/${failed!.id}/resend`, headers: seller2.headers })).statusCode,
        202,
      );
      await h.drain(job);
      const [ok] = await h.notifications(seller2);
      assert.deepEqual([ok!.status, ok!.attempts, ok!.lastResponseStatus], ['DELIVERED', 2, 200]);
      const got = h.rx.requestsTo('/resend-failed');
      assert.equal(header(got[1]!, 'x-event-id'), header(got[0]!, 'x-event-id'));
    });
    // CONTRACT §9: "a later status is never delivered before an earlier one has been delivered or has
    // failed for good. A manual resend is exempt." The resend of the earlier notification is exempt;
    // the later notification is not: it must keep waiting until the earlier one is delivered or FAILED.
    test('resending a held-up earlier notification does not release the later one before it is delivered', async () => {
      const seller = await h.gw.createSeller();
      // The PAGO postback always fails; anything else is accepted.
      h.rx.script('/resend-release', (r) => (bodyOf(r).status === 'PAGO' ? 500 : 200));
      const job = h.job({ retryDelaysMs: [3_600_000, 3_600_000] });
      const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/resend-release') }));
      await h.move(id, 'PAYMENT_CONFIRMED', 'REFUNDED');
      await h.drain(job);
      const [, paid] = await h.notifications(seller);
      assert.deepEqual([paid!.eventStatus, paid!.status, paid!.attempts], ['PAGO', 'PENDING', 1]);
      const res = await h.gw.app.inject({ method: 'POST', url: `/api/notifications/${paid!.id}/resend`, headers: seller.headers });
      assert.equal(res.statusCode, 202, res.body);
      try {
        await h.drain(job);
        const statuses = h.rx.requestsTo('/resend-release').map((r) => bodyOf(r).status);
        assert.deepEqual(statuses, ['PAGO', 'PAGO'], 'ESTORNADO must wait: PAGO is still pending (its resend failed)');
        const list = await h.notifications(seller);
        assert.deepEqual(
          list.map((n) => [n.eventStatus, n.status]),
          [
            ['ESTORNADO', 'PENDING'],
            ['PAGO', 'PENDING'],
          ],
        );
      } finally {
        // Leave nothing pending for the tests that follow.
        h.rx.script('/resend-release', 200);
        await h.gw.ctx.db.query(`UPDATE notifications SET next_attempt_at = $2 WHERE seller_id = $1 AND status = 'PENDING'`, [seller.id, h.current]);
        await h.drain(job);
      }
    });
  });

  describe('GET /api/notifications', () => {
    test("shape, newest first, pagination, only the seller's own; resend 403/404/400", async () => {
      const seller = await h.gw.createSeller();
      const other = await h.gw.createSeller();
      await h.webhook(seller, '/list-hook');
      await h.webhook(other, '/list-other');
      const saleIds: number[] = [];
      for (let i = 0; i < 3; i++) {
        const id = await h.sale(seller, pixBody({ postbackUrl: h.rx.url('/list-postback') }));
        saleIds.push(id);
        h.tick(1000);
        await h.move(id, 'PAYMENT_CONFIRMED');
      }
      const otherSale = await h.sale(other, pixBody());
      await h.move(otherSale, 'PAYMENT_CONFIRMED');

      const all = await h.notifications(seller);
      assert.equal(all.length, 6);
      for (const n of all) {
        assert.deepEqual(Object.keys(n), NOTIFICATION_KEYS);
        assert.ok(Number.isSafeInteger(n.id), `notification id an integer, got ${JSON.stringify(n.id)}`);
        assert.ok(
          ['TRANSACTION_WEBHOOK', 'TRANSACTION_POSTBACK'].includes(n.kind as string),
          `kind TRANSACTION_WEBHOOK or TRANSACTION_POSTBACK, got ${JSON.stringify(n.kind)}`,
        );
        assert.ok(
          saleIds.includes(n.resourceId as number),
          `resourceId one of the seller's sales ${JSON.stringify(saleIds)}, got ${JSON.stringify(n.resourceId)}`,
        );
        assert.equal(n.eventStatus, 'PAGO');
        assert.equal(n.status, 'PENDING');
        assert.equal(n.attempts, 0);
        assert.equal(n.lastResponseStatus, null);
        assert.match(n.nextAttemptAt as string, ISO_MS);
        assert.match(n.createdAt as string, ISO_MS);
        assert.equal(n.test, false, 'a real notification is not a test');
        assert.equal(n.url, h.rx.url(n.kind === 'TRANSACTION_WEBHOOK' ? '/list-hook' : '/list-postback'));
      }
      const ids = all.map((n) => n.id as number);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => b - a),
        'newest first',
      );
      assert.deepEqual(
        all.map((n) => n.resourceId),
        [saleIds[2], saleIds[2], saleIds[1], saleIds[1], saleIds[0], saleIds[0]],
      );

      const pages: number[][] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/api/notifications?limit=4${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await h.gw.app.inject({ method: 'GET', url, headers: seller.headers });
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json() as { data: Json[]; nextCursor: string | null };
        assert.deepEqual(Object.keys(body), ['data', 'nextCursor']);
        pages.push(body.data.map((n) => n.id as number));
        cursor = body.nextCursor;
        assert.ok(cursor === null || typeof cursor === 'string', `nextCursor null or a string, got ${JSON.stringify(cursor)}`);
      } while (cursor !== null && pages.length < 10);
      assert.deepEqual(
        pages.map((p) => p.length),
        [4, 2],
      );
      assert.deepEqual(pages.flat(), ids);
      const exact = await h.gw.app.inject({ method: 'GET', url: '/api/notifications?limit=6', headers: seller.headers });
      assert.equal((exact.json() as { nextCursor: unknown }).nextCursor, null, 'no cursor past the last page');

      const theirs = await h.notifications(other);
      assert.equal(theirs.length, 1);
      assert.ok(
        !ids.includes(theirs[0]!.id as number),
        `the other seller's notification ${JSON.stringify(theirs[0]!.id)} not in this seller's list ${JSON.stringify(ids)}`,
      );

      for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=0', 'cursor=x']) {
        const res = await h.gw.app.inject({ method: 'GET', url: `/api/notifications?${q}`, headers: seller.headers });
        assert.equal(res.statusCode, 400, `${q}: ${res.body}`);
      }
      assert.equal((await h.gw.app.inject({ method: 'GET', url: '/api/notifications' })).statusCode, 401);

      const forbidden = await h.gw.app.inject({ method: 'POST', url: `/api/notifications/${theirs[0]!.id}/resend`, headers: seller.headers });
      assert.equal(forbidden.statusCode, 403, forbidden.body);
      const unknown = await h.gw.app.inject({ method: 'POST', url: '/api/notifications/999999999/resend', headers: seller.headers });
      assert.equal(unknown.statusCode, 404, unknown.body);
      const bad = await h.gw.app.inject({ method: 'POST', url: '/api/notifications/abc/resend', headers: seller.headers });
      assert.equal(bad.statusCode, 400, bad.body);
      // The refused resend changed nothing.
      assert.deepEqual((await h.notifications(other))[0], theirs[0]);
      await h.drain(h.job());
    });
  });
});

describe('notifications with WEBHOOK_ALLOW_PRIVATE=false', () => {
  const h = notificationHarness({ WEBHOOK_ALLOW_PRIVATE: 'false' });

  test('loopback and private targets are refused at creation (webhook url, sale postbackUrl)', async () => {
    assert.equal(h.gw.config.webhookAllowPrivate, false);
    const seller = await h.gw.createSeller();
    const refused = [
      'http://127.0.0.1:1/x',
      'http://10.0.0.1/x',
      'http://[::1]/x',
      'http://localhost/x',
      'http://192.168.1.10/x',
      'http://172.16.0.1/x',
      'http://169.254.169.254/latest',
      'http://0.0.0.0/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://2130706433/x',
      'http://0x7f000001/x',
      'http://api.localhost/x',
      'https://[fd00::1]/x',
    ];
    for (const url of refused) {
      const res = await h.gw.app.inject({ method: 'POST', url: '/api/webhooks', headers: seller.headers, payload: { url, types: ['TRANSACTION'] } });
      assert.equal(res.statusCode, 400, `${url} → ${res.body}`);
      const body = res.json() as { errorType: string; details: { field: string }[] };
      assert.equal(body.errorType, 'VALIDATION_ERROR');
      assert.deepEqual(
        body.details.map((d) => d.field),
        ['url'],
        url,
      );

      const sale = await h.gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixBody({ postbackUrl: url }) });
      assert.equal(sale.statusCode, 400, `postback ${url} → ${sale.body}`);
      const sb = sale.json() as { errorType: string; details: { field: string }[] };
      assert.equal(sb.errorType, 'VALIDATION_ERROR');
      assert.ok(
        sb.details.some((d) => d.field === 'postbackUrl'),
        sale.body,
      );
    }
    assert.deepEqual((await h.gw.app.inject({ method: 'GET', url: '/api/webhooks', headers: seller.headers })).json(), { data: [] });
    const count = (await h.gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE seller_id = $1', [seller.id])).rows[0]!
      .n;
    assert.equal(count, 0, 'no sale created');
    // A public literal address is accepted (not resolved, not contacted).
    const ok = await h.gw.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: seller.headers,
      payload: { url: 'https://93.184.215.14/hook', types: ['TRANSACTION'] },
    });
    assert.equal(ok.statusCode, 201, ok.body);
  });

  test('at delivery: rows that bypassed creation (SQL) with loopback targets are not delivered', async () => {
    const seller = await h.gw.createSeller();
    const targets = [h.rx.url('/private-ip'), `http://localhost:${h.rx.port}/private-name`, `http://[::ffff:127.0.0.1]:${h.rx.port}/private-mapped`];
    for (const url of targets) {
      await h.gw.ctx.db.query(`INSERT INTO webhooks (seller_id, url, types) VALUES ($1, $2, ARRAY['TRANSACTION'])`, [seller.id, url]);
    }
    const created = await h.gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixBody() });
    assert.equal(created.statusCode, 201, created.body);
    const id = (created.json() as { sale: { id: number } }).sale.id;
    await h.gw.ctx.db.query('UPDATE transactions SET postback_url = $2 WHERE id = $1', [id, h.rx.url('/private-postback')]);
    await h.move(id, 'PAYMENT_CONFIRMED');
    await h.runOnce(h.job({ retryDelaysMs: [1000] }));

    assert.equal(h.rx.requests.length, 0, 'the receiver got nothing');
    const list = await h.notifications(seller);
    assert.equal(list.length, targets.length + 1);
    for (const n of list) {
      assert.deepEqual(
        { status: n.status, attempts: n.attempts, lastResponseStatus: n.lastResponseStatus },
        { status: 'PENDING', attempts: 1, lastResponseStatus: null },
        n.url as string,
      );
    }
    const errors = (
      await h.gw.ctx.db.query<{ url: string; last_error: string | null }>('SELECT url, last_error FROM notifications WHERE seller_id = $1', [
        seller.id,
      ])
    ).rows;
    for (const e of errors) assert.match(e.last_error ?? '', /private/, `${e.url}: refused as a private target, not some other failure`);
  });

  test('at delivery: a name that resolves to a loopback address is refused when connecting', async (t) => {
    // Any name other than "localhost" that this machine resolves to a private address (often its own host name).
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (!name || name === 'localhost' || addresses.length === 0 || !addresses.some((a) => /^127\.|^::1$/.test(a.address))) {
      t.skip(`host name ${name} does not resolve to loopback here`);
      return;
    }
    const seller = await h.gw.createSeller();
    const res = await h.gw.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: seller.headers,
      payload: { url: `http://${name}:${h.rx.port}/by-name`, types: ['TRANSACTION'] },
    });
    assert.equal(res.statusCode, 400, `refused at creation too: ${res.body}`);
    await h.gw.ctx.db.query(`INSERT INTO webhooks (seller_id, url, types) VALUES ($1, $2, ARRAY['TRANSACTION'])`, [
      seller.id,
      `http://${name}:${h.rx.port}/by-name`,
    ]);
    const id = (await h.gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixBody() })).json().sale.id as number;
    await h.move(id, 'PAYMENT_CONFIRMED');
    await h.runOnce(h.job({ retryDelaysMs: [1000] }));
    assert.equal(h.rx.requestsTo('/by-name').length, 0);
    const [n] = await h.notifications(seller);
    assert.deepEqual([n!.status, n!.attempts, n!.lastResponseStatus], ['PENDING', 1, null]);
    const lastError = (await h.gw.ctx.db.query<{ last_error: string | null }>('SELECT last_error FROM notifications WHERE id = $1', [n!.id])).rows[0]!
      .last_error;
    assert.match(lastError ?? '', /private/);
  });
});
