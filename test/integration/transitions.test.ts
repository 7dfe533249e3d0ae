import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/db/db.ts';
import { openDb } from '../../src/db/open.ts';
import { cardAutopilotJob } from '../../src/providers/sandbox/autopilot.ts';
import { expiryJob } from '../../src/transactions/jobs.ts';
import { moveTransaction } from '../../src/transactions/transitions.ts';
import { onPostgres } from '../helpers/databases.ts';
import {
  CARDS,
  EVENT_TABLE,
  EVENTS,
  type EventRule,
  type Json,
  type Method,
  type SaleOptions,
  type Status,
  saleOf,
  TRANSACTION_KEYS,
} from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { authenticateInSandbox } from '../helpers/three-d-secure.ts';

/** CONTRACT §6 (test/helpers/fixtures.ts), indexed by the plain strings the paths below are written in. */
const TABLE: Readonly<Record<string, EventRule>> = EVENT_TABLE;

async function newSale(
  gw: Gateway,
  seller: SellerKeys,
  method: Method,
  options?: Pick<SaleOptions, 'cardNumber' | 'pix' | 'dueDate'>,
): Promise<number> {
  const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: saleOf(method, options) });
  assert.equal(res.statusCode, 201, res.body);
  // A debit sale's shopper authenticates at once (3-D Secure): it is then the processor's to move, as a credit sale is.
  if (method === 'DEBIT_CARD') await authenticateInSandbox(gw.app, res.json().sale);
  return res.json().sale.id;
}

const postEvent = (gw: Gateway, id: number | string, event: unknown) =>
  gw.app.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, headers: adminHeaders, payload: { event } });

interface RowState {
  status: string;
  last_event: string | null;
  updated_at: string;
  completed_at: string | null;
  events: number;
}

async function rowState(gw: Gateway, id: number): Promise<RowState> {
  const r = await gw.ctx.db.query<RowState>(
    `
    SELECT status, last_event, updated_at::text AS updated_at, completed_at::text AS completed_at,
      (SELECT count(*)::int FROM transaction_events e WHERE e.transaction_id = t.id) AS events
    FROM transactions t WHERE id = $1`,
    [id],
  );
  return r.rows[0]!;
}

async function statusOf(gw: Gateway, id: number): Promise<string> {
  return (await rowState(gw, id)).status;
}

// ---------- one gateway for the describes whose options differ only in their clock ----------

// A gateway costs about 2 s to start on PGlite, so the describes below, which would each start one
// with nothing but a clock of their own, share this one: each points the clock at its own source in
// before(). They use sellers of their own and assert on their own sales only, but two run a job over
// the whole table, hence their places: the card autopilot comes first, because its job's answers
// count every card sale due in the database (there are none of the others' yet); the expiry job finds
// nothing of the others' due at its early clock (their sales are newer), as it asserts.
let shared: Gateway | undefined;
let sharedClock: () => Date = () => new Date();
async function sharedGateway(now: () => Date): Promise<Gateway> {
  sharedClock = now;
  shared ??= await startGateway({ clock: { now: () => sharedClock() } });
  return shared;
}
after(async () => {
  await shared?.close();
});

// ---------- sandbox card autopilot ----------

describe('sandbox card autopilot with an injected clock', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  const t0 = new Date('2026-11-20T12:00:00.000Z');
  let current = t0;
  before(async () => {
    gw = await sharedGateway(() => current);
    seller = await gw.createSeller();
  });

  test('cards go PENDENTE → EM_PROCESSAMENTO → outcome by number, one step per 300 ms; PIX and boleto untouched', async () => {
    current = t0;
    const sales: [number, string, string][] = [
      [await newSale(gw, seller, 'CREDIT_CARD', { cardNumber: '4111111111111111' }), 'PAGO', 'APPROVED'],
      [await newSale(gw, seller, 'CREDIT_CARD', { cardNumber: '4000000000000002' }), 'RECUSADO', 'DECLINED'],
      [await newSale(gw, seller, 'CREDIT_CARD', { cardNumber: '4000000000000119' }), 'FALHA', 'PROCESSING_ERROR'],
      [await newSale(gw, seller, 'DEBIT_CARD', { cardNumber: '5555555555554444' }), 'PAGO', 'APPROVED'],
      [await newSale(gw, seller, 'CREDIT_CARD', { cardNumber: '6362970000457013' }), 'PAGO', 'APPROVED'],
    ];
    const others = [await newSale(gw, seller, 'PIX'), await newSale(gw, seller, 'BOLETO')];
    const statuses = async () => Promise.all(sales.map(([id]) => statusOf(gw, id)));
    const untouched = async () => {
      for (const id of others) {
        const state = await rowState(gw, id);
        assert.deepEqual([state.status, state.events, state.last_event], ['PENDENTE', 0, null]);
      }
    };

    assert.equal(await cardAutopilotJob.run(gw.ctx), 0);
    assert.deepEqual(await statuses(), Array(sales.length).fill('PENDENTE'));
    await untouched();
    current = new Date(t0.getTime() + 400);
    assert.equal(await cardAutopilotJob.run(gw.ctx), sales.length);
    assert.deepEqual(await statuses(), Array(sales.length).fill('EM_PROCESSAMENTO'));
    current = new Date(t0.getTime() + 600); // only 200 ms after the last step
    assert.equal(await cardAutopilotJob.run(gw.ctx), 0);
    assert.deepEqual(await statuses(), Array(sales.length).fill('EM_PROCESSAMENTO'));
    current = new Date(t0.getTime() + 800);
    await cardAutopilotJob.run(gw.ctx);
    assert.deepEqual(
      await statuses(),
      sales.map(([, outcome]) => outcome),
    );
    current = new Date(t0.getTime() + 5000);
    assert.equal(await cardAutopilotJob.run(gw.ctx), 0, 'FALHA, PAGO and RECUSADO are left alone');
    assert.deepEqual(
      await statuses(),
      sales.map(([, outcome]) => outcome),
    );
    for (const [id, , event] of sales) {
      const history = (
        await gw.ctx.db.query<{ event: string }>('SELECT event FROM transaction_events WHERE transaction_id = $1 ORDER BY id', [id])
      ).rows.map((r) => r.event);
      assert.deepEqual(history, ['SENT_TO_PROCESSOR', event]);
    }
    const paid = (await gw.app.inject({ method: 'GET', url: `/api/transactions/${sales[0]![0]}`, headers: seller.headers })).json();
    assert.equal(paid.completedAt, new Date(t0.getTime() + 800).toISOString());
    await untouched();
  });

  test('a card sale an operator already moved is carried on from where it is', async () => {
    current = new Date(t0.getTime() + 10_000);
    const id = await newSale(gw, seller, 'CREDIT_CARD', { cardNumber: '4000000000000002' });
    assert.equal((await postEvent(gw, id, 'SENT_TO_PROCESSOR')).statusCode, 200);
    current = new Date(t0.getTime() + 10_400);
    await cardAutopilotJob.run(gw.ctx);
    assert.equal(await statusOf(gw, id), 'RECUSADO');
    const cancelled = await newSale(gw, seller, 'CREDIT_CARD');
    assert.equal((await postEvent(gw, cancelled, 'CANCELLED')).statusCode, 200);
    current = new Date(t0.getTime() + 20_000);
    await cardAutopilotJob.run(gw.ctx);
    assert.equal(await statusOf(gw, cancelled), 'CANCELADO');
  });
});

// ---------- operator events ----------

describe('transaction state machine via POST /admin/transactions/{id}/events', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let current = new Date('2026-11-21T12:00:00.000Z');
  const tick = () => {
    current = new Date(current.getTime() + 1000);
    return current;
  };
  before(async () => {
    gw = await sharedGateway(() => current);
    seller = await gw.createSeller();
  });

  /** Drives a fresh sale through `events`, checking each answer; returns the sale id. */
  async function drive(method: Method, events: string[]): Promise<number> {
    const id = await newSale(gw, seller, method);
    let firstPaidAt: string | null = null;
    for (const [i, event] of events.entries()) {
      const at = tick().toISOString();
      const before = await rowState(gw, id);
      const res = await postEvent(gw, id, event);
      const rule = TABLE[event]!;
      assert.equal(res.statusCode, 200, `${method} ${events.slice(0, i + 1).join(' → ')}: ${res.body}`);
      const t = res.json();
      assert.deepEqual(Object.keys(t).sort(), TRANSACTION_KEYS);
      assert.equal(t.id, id);
      assert.equal(t.status, rule.to, `${method} ${event}`);
      assert.equal(t.paymentMethod, method);
      assert.equal(t.amount, 15000);
      if (rule.to === 'PAGO' && firstPaidAt === null) firstPaidAt = at;
      assert.equal(t.completedAt, firstPaidAt, `completedAt after ${event}`);
      // the answer is the read
      const read = await gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers });
      assert.deepEqual(read.json(), t);
      // one history row per move, with from and to
      const after = await rowState(gw, id);
      assert.equal(after.events, before.events + 1);
      assert.equal(after.last_event, event);
      const logged = (
        await gw.ctx.db.query<{ event: string; from_status: string; to_status: string }>(
          'SELECT event, from_status, to_status FROM transaction_events WHERE transaction_id = $1 ORDER BY id DESC LIMIT 1',
          [id],
        )
      ).rows[0]!;
      assert.deepEqual(logged, { event, from_status: before.status, to_status: rule.to });
    }
    return id;
  }

  const legalPaths: [Method, string[]][] = [
    ['PIX', ['PAYMENT_CONFIRMED', 'MED_OPENED', 'MED_WON', 'MED_OPENED', 'MED_LOST']],
    ['PIX', ['PAYMENT_CONFIRMED', 'REFUNDED']],
    ['PIX', ['CANCELLED']],
    ['PIX', ['EXPIRED']],
    ['PIX', ['PROCESSING_ERROR', 'RETRY_PROCESSED', 'MED_OPENED', 'MED_WON', 'REFUNDED']],
    ['PIX', ['PROCESSING_ERROR', 'CANCELLED']],
    ...CARDS.flatMap((m): [Method, string[]][] => [
      [m, ['SENT_TO_PROCESSOR', 'APPROVED', 'CHARGEBACK_OPENED', 'CHARGEBACK_REVERTED', 'CHARGEBACK_OPENED', 'CHARGEBACK_CONFIRMED']],
      [m, ['SENT_TO_PROCESSOR', 'DECLINED']],
      [m, ['SENT_TO_PROCESSOR', 'PROCESSING_ERROR', 'RETRY_PROCESSED', 'REFUNDED']],
      [m, ['SENT_TO_PROCESSOR', 'PROCESSING_ERROR', 'CANCELLED']],
      [m, ['PROCESSING_ERROR', 'CANCELLED']],
      [m, ['CANCELLED']],
      [m, ['PAYMENT_CONFIRMED', 'REFUNDED']],
    ]),
    ['BOLETO', ['PAYMENT_CONFIRMED', 'REFUNDED']],
    ['BOLETO', ['EXPIRED']],
    ['BOLETO', ['CANCELLED']],
    ['BOLETO', ['PROCESSING_ERROR', 'RETRY_PROCESSED']],
  ];

  for (const [method, events] of legalPaths) {
    test(`legal: ${method} ${events.join(' → ')}`, async () => {
      await drive(method, events);
    });
  }

  test('completedAt is set at the first PAGO and kept through MED, MED_WON and the refund', async () => {
    const id = await newSale(gw, seller, 'PIX');
    const paidAt = tick();
    assert.equal((await postEvent(gw, id, 'PAYMENT_CONFIRMED')).json().completedAt, paidAt.toISOString());
    for (const event of ['MED_OPENED', 'MED_WON', 'REFUNDED']) {
      tick();
      const t = (await postEvent(gw, id, event)).json();
      assert.equal(t.completedAt, paidAt.toISOString(), event);
    }
    // never paid: null to the end
    const never = await newSale(gw, seller, 'CREDIT_CARD');
    for (const event of ['SENT_TO_PROCESSOR', 'DECLINED']) {
      tick();
      assert.equal((await postEvent(gw, never, event)).json().completedAt, null);
    }
  });

  // States reached by legal paths; every other event from each must be refused and change nothing.
  const states: [Method, string[], Status][] = [
    ['PIX', [], 'PENDENTE'],
    ['PIX', ['PAYMENT_CONFIRMED'], 'PAGO'],
    ['PIX', ['PAYMENT_CONFIRMED', 'MED_OPENED'], 'MED'],
    ['PIX', ['PAYMENT_CONFIRMED', 'MED_OPENED', 'MED_WON'], 'PAGO'],
    ['PIX', ['PROCESSING_ERROR'], 'FALHA'],
    ['PIX', ['EXPIRED'], 'CANCELADO'],
    ['PIX', ['PAYMENT_CONFIRMED', 'REFUNDED'], 'ESTORNADO'],
    ['CREDIT_CARD', [], 'PENDENTE'],
    ['CREDIT_CARD', ['SENT_TO_PROCESSOR'], 'EM_PROCESSAMENTO'],
    ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'APPROVED'], 'PAGO'],
    ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'APPROVED', 'CHARGEBACK_OPENED'], 'CHARGEBACK'],
    ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'APPROVED', 'CHARGEBACK_OPENED', 'CHARGEBACK_CONFIRMED'], 'ESTORNADO'],
    ['DEBIT_CARD', ['SENT_TO_PROCESSOR', 'DECLINED'], 'RECUSADO'],
    ['DEBIT_CARD', ['SENT_TO_PROCESSOR', 'PROCESSING_ERROR'], 'FALHA'],
    ['BOLETO', [], 'PENDENTE'],
    ['BOLETO', ['PAYMENT_CONFIRMED'], 'PAGO'],
    ['BOLETO', ['CANCELLED'], 'CANCELADO'],
  ];

  for (const [method, path, status] of states) {
    test(`illegal: every refused event from ${method} ${status}${path.length ? ` (via ${path.join(' → ')})` : ''} is 409 and changes nothing`, async () => {
      const id = await newSale(gw, seller, method);
      for (const event of path) {
        tick();
        assert.equal((await postEvent(gw, id, event)).statusCode, 200, event);
      }
      const last = path[path.length - 1];
      const refused = EVENTS.filter((e) => {
        const rule = TABLE[e]!;
        const legal = rule.from.includes(status) && (!rule.methods || rule.methods.includes(method));
        const repeat = e === last && rule.to === status;
        return !legal && !repeat;
      });
      assert.ok(refused.length >= 9, `${refused.length} events to try`);
      const before = await rowState(gw, id);
      assert.equal(before.status, status);
      for (const event of refused) {
        tick(); // a write would now change updated_at
        const res = await postEvent(gw, id, event);
        assert.equal(res.statusCode, 409, `${event} from ${method} ${status}: ${res.body}`);
        const body = res.json();
        assert.deepEqual(Object.keys(body), ['message', 'errorType']);
        assert.equal(body.errorType, 'INVALID_TRANSITION');
        assert.equal(typeof body.message, 'string');
        assert.deepEqual(await rowState(gw, id), before, `${event} changed the row`);
      }
    });
  }

  test('method-restricted events are refused on the other methods', async () => {
    const cases: [Method, string[], string][] = [
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'APPROVED'], 'MED_OPENED'],
      ['DEBIT_CARD', ['PAYMENT_CONFIRMED'], 'MED_OPENED'],
      ['BOLETO', ['PAYMENT_CONFIRMED'], 'MED_OPENED'],
      ['PIX', ['PAYMENT_CONFIRMED'], 'CHARGEBACK_OPENED'],
      ['BOLETO', ['PAYMENT_CONFIRMED'], 'CHARGEBACK_OPENED'],
      ['PIX', [], 'SENT_TO_PROCESSOR'],
      ['BOLETO', [], 'SENT_TO_PROCESSOR'],
      ['CREDIT_CARD', [], 'EXPIRED'],
      ['DEBIT_CARD', [], 'EXPIRED'],
    ];
    for (const [method, path, event] of cases) {
      const id = await newSale(gw, seller, method);
      for (const e of path) assert.equal((await postEvent(gw, id, e)).statusCode, 200);
      const before = await rowState(gw, id);
      tick();
      const res = await postEvent(gw, id, event);
      assert.equal(res.statusCode, 409, `${event} on ${method}`);
      assert.equal(res.json().errorType, 'INVALID_TRANSITION');
      assert.deepEqual(await rowState(gw, id), before);
    }
  });

  test('repeating the last event answers 200 with the transaction and changes nothing', async () => {
    const cases: [Method, string[]][] = [
      ['PIX', ['PAYMENT_CONFIRMED']],
      ['PIX', ['PAYMENT_CONFIRMED', 'MED_OPENED']],
      ['PIX', ['EXPIRED']],
      ['PIX', ['PAYMENT_CONFIRMED', 'REFUNDED']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'APPROVED']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'DECLINED']],
      ['DEBIT_CARD', ['SENT_TO_PROCESSOR', 'APPROVED', 'CHARGEBACK_OPENED']],
      ['BOLETO', ['CANCELLED']],
    ];
    for (const [method, path] of cases) {
      const id = await newSale(gw, seller, method);
      let answer: Json = {};
      for (const e of path) {
        tick();
        answer = (await postEvent(gw, id, e)).json();
      }
      const before = await rowState(gw, id);
      for (let i = 0; i < 3; i++) {
        tick();
        const res = await postEvent(gw, id, path[path.length - 1]);
        assert.equal(res.statusCode, 200, `${method} ${path.join(' → ')} again: ${res.body}`);
        assert.deepEqual(res.json(), answer);
      }
      assert.deepEqual(await rowState(gw, id), before);
    }
  });

  test('an unknown or missing event is 400; an unknown id 404; a bad id 400; no token 401', async () => {
    const id = await newSale(gw, seller, 'PIX');
    const before = await rowState(gw, id);
    for (const event of ['PAID', 'payment_confirmed', '', 42, null]) {
      const res = await postEvent(gw, id, event);
      assert.equal(res.statusCode, 400, String(event));
      assert.equal(res.json().errorType, 'VALIDATION_ERROR');
    }
    const missing = await gw.app.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, headers: adminHeaders, payload: {} });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(await rowState(gw, id), before);
    const unknown = await postEvent(gw, 987654321, 'PAYMENT_CONFIRMED');
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(Object.keys(unknown.json()), ['error', 'message']);
    for (const bad of ['abc', '0', '-1', '1.5']) assert.equal((await postEvent(gw, bad, 'PAYMENT_CONFIRMED')).statusCode, 400, bad);
    const noToken = await gw.app.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, payload: { event: 'PAYMENT_CONFIRMED' } });
    assert.equal(noToken.statusCode, 401);
    const sellerKeys = await gw.app.inject({
      method: 'POST',
      url: `/admin/transactions/${id}/events`,
      headers: seller.headers,
      payload: { event: 'PAYMENT_CONFIRMED' },
    });
    assert.equal(sellerKeys.statusCode, 401);
    assert.deepEqual(await rowState(gw, id), before);
  });
});

// ---------- seller refund and cancel ----------

describe('seller refund and cancel', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let other: SellerKeys;
  before(async () => {
    gw = await sharedGateway(() => new Date()); // the real clock
    seller = await gw.createSeller();
    other = await gw.createSeller({ name: 'Outra', email: 'outra@example.com' });
  });

  const refund = (who: SellerKeys, id: number | string) =>
    gw.app.inject({ method: 'POST', url: `/api/transactions/${id}/refund`, headers: who.headers });
  const cancel = (who: SellerKeys, id: number | string) =>
    gw.app.inject({ method: 'POST', url: `/api/transactions/${id}/cancel`, headers: who.headers });

  async function saleIn(method: Method, events: string[]): Promise<number> {
    const id = await newSale(gw, seller, method);
    for (const e of events) assert.equal((await postEvent(gw, id, e)).statusCode, 200, e);
    return id;
  }

  test('refund: PAGO → ESTORNADO (201 with a SUCCEEDED Refund, CONTRACT §5a); any other status 409 and unchanged', async () => {
    for (const [method, path] of [
      ['PIX', ['PAYMENT_CONFIRMED']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'APPROVED']],
      ['BOLETO', ['PAYMENT_CONFIRMED']],
    ] as [Method, string[]][]) {
      const id = await saleIn(method, path);
      const res = await refund(seller, id);
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(Object.keys(res.json()).sort(), ['amount', 'completedAt', 'createdAt', 'failureReason', 'id', 'status', 'transactionId']);
      assert.equal(res.json().status, 'SUCCEEDED');
      assert.equal(res.json().transactionId, id);
      const read = await gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers });
      assert.deepEqual(Object.keys(read.json()).sort(), TRANSACTION_KEYS);
      assert.equal(read.json().status, 'ESTORNADO');
      assert.equal(read.json().refundedAmount, read.json().amount);
      assert.equal((await rowState(gw, id)).last_event, 'REFUNDED');
    }
    const notPaid: [Method, string[]][] = [
      ['PIX', []],
      ['PIX', ['PAYMENT_CONFIRMED', 'MED_OPENED']],
      ['PIX', ['CANCELLED']],
      ['PIX', ['PROCESSING_ERROR']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'DECLINED']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'APPROVED', 'CHARGEBACK_OPENED']],
    ];
    for (const [method, path] of notPaid) {
      const id = await saleIn(method, path);
      const before = await rowState(gw, id);
      const res = await refund(seller, id);
      assert.equal(res.statusCode, 409, `${method} ${path.join(' → ')}`);
      assert.equal(res.json().errorType, 'INVALID_TRANSITION');
      assert.deepEqual(await rowState(gw, id), before);
    }
  });

  test('cancel: PENDENTE or FALHA → CANCELADO; other statuses 409 and unchanged', async () => {
    for (const [method, path] of [
      ['PIX', []],
      ['BOLETO', []],
      ['DEBIT_CARD', []],
      ['PIX', ['PROCESSING_ERROR']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'PROCESSING_ERROR']],
    ] as [Method, string[]][]) {
      const id = await saleIn(method, path);
      const res = await cancel(seller, id);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'CANCELADO');
      assert.equal(res.json().completedAt, null);
    }
    const notCancellable: [Method, string[]][] = [
      ['PIX', ['PAYMENT_CONFIRMED']],
      ['PIX', ['EXPIRED']],
      ['PIX', ['PAYMENT_CONFIRMED', 'REFUNDED']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR']],
      ['CREDIT_CARD', ['SENT_TO_PROCESSOR', 'DECLINED']],
      ['BOLETO', ['PAYMENT_CONFIRMED']],
    ];
    for (const [method, path] of notCancellable) {
      const id = await saleIn(method, path);
      const before = await rowState(gw, id);
      const res = await cancel(seller, id);
      assert.equal(res.statusCode, 409, `${method} ${path.join(' → ')}`);
      assert.equal(res.json().errorType, 'INVALID_TRANSITION');
      assert.deepEqual(await rowState(gw, id), before);
    }
  });

  test("another seller's sale is 403 and untouched; unknown 404; bad id 400; no keys 401", async () => {
    const paid = await saleIn('PIX', ['PAYMENT_CONFIRMED']);
    const pending = await saleIn('PIX', []);
    const [paidBefore, pendingBefore] = [await rowState(gw, paid), await rowState(gw, pending)];
    for (const res of [await refund(other, paid), await cancel(other, pending)]) {
      assert.equal(res.statusCode, 403);
      assert.deepEqual(Object.keys(res.json()), ['error', 'message']);
    }
    assert.deepEqual(await rowState(gw, paid), paidBefore);
    assert.deepEqual(await rowState(gw, pending), pendingBefore);
    for (const res of [await refund(seller, 987654321), await cancel(seller, 987654321)]) {
      assert.equal(res.statusCode, 404);
      assert.deepEqual(Object.keys(res.json()), ['error', 'message']);
    }
    for (const res of [await refund(seller, 'abc'), await cancel(seller, '0')]) assert.equal(res.statusCode, 400);
    const anonymous = await gw.app.inject({ method: 'POST', url: `/api/transactions/${pending}/cancel` });
    assert.equal(anonymous.statusCode, 401);
    assert.deepEqual(await rowState(gw, pending), pendingBefore);
  });
});

// ---------- concurrency ----------

describe('concurrent events on one transaction', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  before(async () => {
    gw = await sharedGateway(() => new Date()); // the real clock
    seller = await gw.createSeller();
  });

  test(`20 concurrent PAYMENT_CONFIRMED through ${onPostgres ? 'a pool of 20 connections' : 'PGlite'}: exactly one move and one history row`, async () => {
    const id = await newSale(gw, seller, 'PIX');
    const db: Db = onPostgres ? await openDb(gw.database.url, mkdtempSync(join(tmpdir(), 'gw-pool-')), { poolSize: 20 }) : gw.ctx.db;
    try {
      const now = new Date();
      const results = await Promise.all(Array.from({ length: 20 }, () => db.tx((q) => moveTransaction(q, id, 'PAYMENT_CONFIRMED', now))));
      const kinds = results.map((r) => r.kind);
      assert.equal(kinds.filter((k) => k === 'moved').length, 1, kinds.join(','));
      assert.equal(kinds.filter((k) => k === 'noop').length, 19, kinds.join(','));
    } finally {
      if (db !== gw.ctx.db) await db.close();
    }
    const state = await rowState(gw, id);
    assert.equal(state.status, 'PAGO');
    assert.equal(state.events, 1);
  });

  test('20 concurrent HTTP PAYMENT_CONFIRMED (several processes on PostgreSQL): all 200, one move', async () => {
    const id = await newSale(gw, seller, 'PIX');
    const apps = [gw.app];
    if (onPostgres) for (let i = 0; i < 3; i++) apps.push((await gw.peer()).app);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        apps[i % apps.length]!.inject({
          method: 'POST',
          url: `/admin/transactions/${id}/events`,
          headers: adminHeaders,
          payload: { event: 'PAYMENT_CONFIRMED' },
        }),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      Array(20).fill(200),
    );
    assert.deepEqual(
      answers.map((a) => a.json().status),
      Array(20).fill('PAGO'),
      'every answer shows the sale PAGO',
    );
    const completed = new Set(answers.map((a) => a.json().completedAt));
    assert.equal(completed.size, 1, 'every answer shows the one payment');
    assert.equal((await rowState(gw, id)).events, 1);
  });

  test('racing PAYMENT_CONFIRMED against CANCELLED: one side wins, the other is refused, one history row', async () => {
    const apps = [gw.app];
    if (onPostgres) apps.push((await gw.peer()).app);
    for (let round = 0; round < 5; round++) {
      const id = await newSale(gw, seller, 'PIX');
      const events = Array.from({ length: 10 }, (_, i) => (i % 2 ? 'CANCELLED' : 'PAYMENT_CONFIRMED'));
      const answers = await Promise.all(
        events.map((event, i) =>
          apps[i % apps.length]!.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, headers: adminHeaders, payload: { event } }),
        ),
      );
      const state = await rowState(gw, id);
      assert.equal(state.events, 1);
      const winner = state.last_event!;
      assert.equal(state.status, winner === 'CANCELLED' ? 'CANCELADO' : 'PAGO');
      events.forEach((event, i) => {
        assert.equal(answers[i]!.statusCode, event === winner ? 200 : 409, `${event} (winner ${winner})`);
      });
    }
  });
});

// ---------- expiry ----------

describe('expiry job with an injected clock', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let current = new Date('2026-11-20T12:00:00.000Z');
  before(async () => {
    gw = await sharedGateway(() => current);
    seller = await gw.createSeller();
  });

  test('a PIX with expiresInSeconds 60 is untouched up to its expiresAt (+60 s) and CANCELADO (EXPIRED) past it', async () => {
    const t0 = new Date('2026-11-20T12:00:00.000Z');
    current = t0;
    const id = await newSale(gw, seller, 'PIX', { pix: { expiresInSeconds: 60 } });
    const longer = await newSale(gw, seller, 'PIX'); // default 3600 s
    for (const ms of [59_999, 60_000]) {
      current = new Date(t0.getTime() + ms);
      await expiryJob.run(gw.ctx);
      assert.equal(await statusOf(gw, id), 'PENDENTE', `at +${ms} ms`);
    }
    current = new Date(t0.getTime() + 60_001);
    const expired = await expiryJob.run(gw.ctx);
    assert.ok(expired >= 1, `the job expires at least this sale past its expiresAt, got ${expired} expired`);
    const state = await rowState(gw, id);
    assert.equal(state.status, 'CANCELADO');
    assert.equal(state.last_event, 'EXPIRED');
    assert.equal(state.events, 1);
    assert.equal(await statusOf(gw, longer), 'PENDENTE');
    assert.equal(await expiryJob.run(gw.ctx), 0, 'nothing left to expire');
    const read = await gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers });
    assert.equal(read.json().status, 'CANCELADO');
    assert.equal(read.json().completedAt, null);
    current = new Date(t0.getTime() + 3_600_001);
    await expiryJob.run(gw.ctx);
    assert.equal(await statusOf(gw, longer), 'CANCELADO');
  });

  test('a boleto due D is PENDENTE through D+3 (São Paulo) and CANCELADO on D+4', async () => {
    current = new Date('2026-11-20T12:00:00.000Z'); // São Paulo 2026-11-20
    const id = await newSale(gw, seller, 'BOLETO', { dueDate: '2026-11-20' });
    const byDefault = await newSale(gw, seller, 'BOLETO'); // due 2026-11-23
    current = new Date('2026-11-24T02:59:59.999Z'); // São Paulo 2026-11-23 23:59:59.999 = D+3
    await expiryJob.run(gw.ctx);
    assert.equal(await statusOf(gw, id), 'PENDENTE');
    current = new Date('2026-11-24T03:00:00.000Z'); // São Paulo 2026-11-24 00:00 = D+4
    await expiryJob.run(gw.ctx);
    assert.equal(await statusOf(gw, id), 'CANCELADO');
    assert.equal((await rowState(gw, id)).last_event, 'EXPIRED');
    assert.equal(await statusOf(gw, byDefault), 'PENDENTE');
    current = new Date('2026-11-27T02:59:59.999Z'); // São Paulo 2026-11-26 = default due + 3
    await expiryJob.run(gw.ctx);
    assert.equal(await statusOf(gw, byDefault), 'PENDENTE');
    current = new Date('2026-11-27T03:00:00.000Z');
    await expiryJob.run(gw.ctx);
    assert.equal(await statusOf(gw, byDefault), 'CANCELADO');
  });

  test('paid sales, never-expiring PIX and card sales are never expired', async () => {
    const t0 = new Date('2026-11-20T12:00:00.000Z');
    current = t0;
    const paid = await newSale(gw, seller, 'PIX', { pix: { expiresInSeconds: 60 } });
    const paidBoleto = await newSale(gw, seller, 'BOLETO', { dueDate: '2026-11-20' });
    const forever = await newSale(gw, seller, 'PIX', { pix: { expiresInSeconds: null } });
    const cardSale = await newSale(gw, seller, 'CREDIT_CARD');
    current = new Date(t0.getTime() + 10_000);
    for (const id of [paid, paidBoleto]) assert.equal((await postEvent(gw, id, 'PAYMENT_CONFIRMED')).statusCode, 200);
    current = new Date('2036-11-20T12:00:00.000Z');
    await expiryJob.run(gw.ctx);
    assert.equal(await statusOf(gw, paid), 'PAGO');
    assert.equal(await statusOf(gw, paidBoleto), 'PAGO');
    assert.equal(await statusOf(gw, forever), 'PENDENTE');
    assert.equal(await statusOf(gw, cardSale), 'PENDENTE');
    assert.equal((await rowState(gw, paid)).events, 1);
  });
});
