// Refunds as objects (CONTRACT §5a) through the seller API: partial and full, the amounts refused,
// a refund PENDING at its provider (as a PIX devolução is) settled SUCCEEDED or FAILED, a provider
// that cannot be reached, and what a partial refund leaves for a dispute.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SalePort } from '../../src/providers/ports.ts';
import { createRefundDispatchJob } from '../../src/refunds/dispatch-refund.ts';
import { settleRefund } from '../../src/transactions/refund-moves.ts';
import { WorkerRunner } from '../../src/workers/runner.ts';
import { cardExample, pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

describe('refunds (CONTRACT §5a)', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let now = Date.parse('2026-05-04T12:00:00.000Z');
  const inject = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
    gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  type Refund = SalePort['refund'];
  // Every refund the test makes (PIX and cards) goes to this stand-in provider while it is set.
  const setRefunds = (refund: Refund | null) => {
    for (const name of ['PIX', 'CREDIT_CARD'] as const) {
      const port = gw.ctx.providers.rail(name);
      port.refund = refund ?? originals.get(name)!;
    }
  };
  const originals = new Map<string, Refund | undefined>();
  const sandboxRefunds = { refund: (input: Parameters<Refund>[0]) => originals.get('CREDIT_CARD')!(input) };

  before(async () => {
    gw = await startGateway({ clock: { now: () => new Date(now) } });
    seller = await gw.createSeller();
    for (const name of ['PIX', 'CREDIT_CARD'] as const) originals.set(name, gw.ctx.providers.rail(name).refund);
  });
  after(async () => {
    await gw?.close();
  });

  /** A PAGO sale: PIX 15000 (fee 298, net 14702) or a credit card sale of 16000 (fee 847, net 15153). */
  async function paidSale(method: 'PIX' | 'CREDIT_CARD', who = seller): Promise<number> {
    const created = await inject('POST', '/api/sales', who.headers, method === 'PIX' ? pixExample() : cardExample());
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().sale.id as number;
    for (const event of method === 'PIX' ? ['PAYMENT_CONFIRMED'] : ['SENT_TO_PROCESSOR', 'APPROVED']) {
      const moved = await inject('POST', `/admin/transactions/${id}/events`, adminHeaders, { event });
      assert.equal(moved.statusCode, 200, moved.body);
    }
    return id;
  }
  const read = async (id: number, who = seller) => (await inject('GET', `/api/transactions/${id}`, who.headers)).json();
  const balance = async (who = seller) => (await inject('GET', '/api/public/balance', who.headers)).json();
  const refunds = async (id: number) => (await inject('GET', `/api/transactions/${id}/refunds`, seller.headers)).json().data;
  const notificationsFor = async (id: number) =>
    (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM notifications WHERE transaction_id = $1', [id])).rows[0]!.n;
  const verify = async () => {
    const res = await inject('GET', '/admin/ledger/verify', adminHeaders);
    assert.equal(res.json().ok, true, res.body);
  };

  test('a partial refund, then the rest: PAGO until the refunds reach the amount, then ESTORNADO, notified once', async () => {
    const who = await gw.createSeller();
    await inject('POST', '/api/webhooks', who.headers, { url: 'https://example.com/hook', types: ['TRANSACTION'] });
    const id = await paidSale('CREDIT_CARD', who);
    const seen = async () => notificationsFor(id);
    const afterPaid = await seen();
    assert.deepEqual(await balance(who), { available: 15153, blocked: 0, total: 15153 });

    const part = await inject('POST', `/api/transactions/${id}/refund`, who.headers, { amount: 5000 });
    assert.equal(part.statusCode, 201, part.body);
    assert.equal(part.json().status, 'SUCCEEDED');
    assert.equal(part.json().amount, 5000);
    assert.equal(part.json().failureReason, null);
    assert.ok(part.json().completedAt, 'a SUCCEEDED refund has completedAt');
    const halfway = (await inject('GET', `/api/transactions/${id}`, who.headers)).json();
    assert.deepEqual([halfway.status, halfway.refundedAmount], ['PAGO', 5000]);
    assert.equal(await seen(), afterPaid, 'a partial refund changes no status and sends no notification');
    assert.deepEqual(await balance(who), { available: 10153, blocked: 0, total: 10153 });

    const statement = (await inject('GET', '/api/public/statement?limit=10', who.headers)).json().data as { kind: string; amount: number }[];
    assert.deepEqual(
      statement
        .filter((l) => l.kind.startsWith('REFUND'))
        .map((l) => `${l.kind} ${l.amount}`)
        .sort(),
      ['REFUND_REQUESTED -5000', 'REFUND_REQUESTED 5000', 'REFUND_SUCCEEDED -5000'],
      'the statement shows the refund: requested (available → blocked), then SUCCEEDED (blocked → payer)',
    );

    const rest = await inject('POST', `/api/transactions/${id}/refund`, who.headers, {});
    assert.equal(rest.statusCode, 201, rest.body);
    assert.equal(rest.json().amount, 11000, 'no amount: all that is left');
    const done = (await inject('GET', `/api/transactions/${id}`, who.headers)).json();
    assert.deepEqual([done.status, done.refundedAmount], ['ESTORNADO', 16000]);
    assert.equal(await seen(), afterPaid + 1, 'ESTORNADO is notified');
    // The old single rule: the seller gives back the whole amount, the fee is not returned.
    assert.deepEqual(await balance(who), { available: -847, blocked: 0, total: -847 });
    const list = (await inject('GET', `/api/transactions/${id}/refunds`, who.headers)).json().data as { amount: number }[];
    assert.deepEqual(
      list.map((r) => r.amount),
      [5000, 11000],
      'oldest first',
    );
    await verify();
  });

  test('Idempotency-Key: the same key replays the first refund and refunds nothing more; with another amount 422', async () => {
    const id = await paidSale('CREDIT_CARD');
    const send = (amount: number, key = 'refund-key-1') =>
      gw.app.inject({
        method: 'POST',
        url: `/api/transactions/${id}/refund`,
        headers: { ...seller.headers, 'idempotency-key': key },
        payload: { amount },
      });
    const first = await send(3000);
    assert.equal(first.statusCode, 201, first.body);
    const again = await send(3000);
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().id, first.json().id, 'the same refund');
    assert.deepEqual(again.json(), first.json(), 'the first answer again (SUCCEEDED), not the row as the transaction first wrote it');
    assert.deepEqual(
      (await refunds(id)).map((r: { amount: number }) => r.amount),
      [3000],
      'one refund',
    );
    const other = await send(4000);
    assert.equal(other.statusCode, 422, other.body);
    assert.equal(other.json().errorType, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal((await send(4000, 'refund-key-2')).statusCode, 201, 'a new key is a new refund');
    assert.equal((await read(id)).refundedAmount, 7000);
    await verify();
  });

  test('amounts refused: above what is left 422 naming amount; 0, a fraction or a string 400; another seller 403; unpaid 409', async () => {
    const id = await paidSale('PIX');
    const over = await inject('POST', `/api/transactions/${id}/refund`, seller.headers, { amount: 15001 });
    assert.equal(over.statusCode, 422, over.body);
    assert.equal(over.json().errorType, 'REFUND_EXCEEDS_AMOUNT');
    assert.equal(over.json().details[0].field, 'amount');
    for (const amount of [0, 1.5, '100', -1]) {
      const bad = await inject('POST', `/api/transactions/${id}/refund`, seller.headers, { amount });
      assert.equal(bad.statusCode, 400, `${JSON.stringify(amount)}: ${bad.body}`);
      assert.equal(bad.json().details[0].field, 'amount');
    }
    const other = await gw.createSeller();
    assert.equal((await inject('POST', `/api/transactions/${id}/refund`, other.headers, {})).statusCode, 403);
    assert.equal((await inject('GET', `/api/transactions/${id}/refunds`, other.headers)).statusCode, 403);
    assert.equal((await inject('GET', '/api/transactions/999999999/refunds', seller.headers)).statusCode, 404);
    const pending = (await inject('POST', '/api/sales', seller.headers, pixExample())).json().sale.id as number;
    const unpaid = await inject('POST', `/api/transactions/${pending}/refund`, seller.headers, {});
    assert.equal(unpaid.statusCode, 409, unpaid.body);
    assert.equal(unpaid.json().errorType, 'INVALID_TRANSITION');
    assert.deepEqual(await refunds(id), [], 'nothing was written');
    assert.equal((await read(id)).refundedAmount, 0);
    await verify();
  });

  test('a refund PENDING at its provider blocks its cents, refuses another refund and a dispute, and settles either way', async () => {
    const who = await gw.createSeller();
    const refs: number[] = [];
    setRefunds(async (input) => {
      refs.push(input.refundId);
      return { status: 'PENDING', providerRef: `dev-${input.refundId}` };
    });
    try {
      const id = await paidSale('PIX', who);
      const first = await inject('POST', `/api/transactions/${id}/refund`, who.headers, { amount: 4000 });
      assert.equal(first.statusCode, 201, first.body);
      assert.deepEqual([first.json().status, first.json().completedAt], ['PENDING', null]);
      assert.deepEqual(await balance(who), { available: 10702, blocked: 4000, total: 14702 });

      const again = await inject('POST', `/api/transactions/${id}/refund`, who.headers, { amount: 1 });
      assert.equal(again.statusCode, 409, again.body);
      assert.match(again.json().message, /pending/);
      const med = await inject('POST', `/admin/transactions/${id}/events`, adminHeaders, { event: 'MED_OPENED' });
      assert.equal(med.statusCode, 409, med.body);

      const failed = await settleRefund(gw.ctx.db, first.json().id, { status: 'FAILED', reason: 'NAO_REALIZADO: conta encerrada' }, new Date(now));
      assert.deepEqual([failed.status, failed.failure_reason], ['FAILED', 'NAO_REALIZADO: conta encerrada']);
      assert.deepEqual(await balance(who), { available: 14702, blocked: 0, total: 14702 }, 'a failed refund restores the balance');
      const repeat = await settleRefund(gw.ctx.db, first.json().id, { status: 'SUCCEEDED' }, new Date(now));
      assert.equal(repeat.status, 'FAILED', 'a settled refund is not settled again');

      const second = await inject('POST', `/api/transactions/${id}/refund`, who.headers, { amount: 4000 });
      assert.equal(second.json().status, 'PENDING');
      await settleRefund(gw.ctx.db, second.json().id, { status: 'SUCCEEDED' }, new Date(now));
      assert.deepEqual(await balance(who), { available: 10702, blocked: 0, total: 10702 });
      const partly = await read(id, who);
      assert.deepEqual([partly.status, partly.refundedAmount], ['PAGO', 4000]);
      assert.deepEqual(refs, [first.json().id, second.json().id], 'each refund went to the provider once');

      // A MED now concerns what is left: min(netAmount 14702, 15000 − 4000) = 11000 blocked.
      assert.equal((await inject('POST', `/admin/transactions/${id}/events`, adminHeaders, { event: 'MED_OPENED' })).statusCode, 200);
      assert.deepEqual(await balance(who), { available: -298, blocked: 11000, total: 10702 });
      // Lost: the 11000 left go back from the MED block; nothing more from the seller, nothing for the platform to absorb.
      assert.equal((await inject('POST', `/admin/transactions/${id}/events`, adminHeaders, { event: 'MED_LOST' })).statusCode, 200);
      assert.deepEqual(await balance(who), { available: -298, blocked: 0, total: -298 });
      await verify();
    } finally {
      setRefunds(null);
    }
  });

  test('a provider that cannot be reached: 201 PENDING, the cents blocked, and the refund job sends it again', async () => {
    const who = await gw.createSeller();
    let reachable = false;
    setRefunds(async (input) => {
      if (!reachable) throw new Error('connect ECONNREFUSED');
      return sandboxRefunds.refund(input);
    });
    try {
      const id = await paidSale('CREDIT_CARD', who);
      const res = await inject('POST', `/api/transactions/${id}/refund`, who.headers, {});
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().status, 'PENDING');
      assert.deepEqual(await balance(who), { available: -847, blocked: 16000, total: 15153 });
      const job = createRefundDispatchJob();
      assert.equal(await job.run(gw.ctx), 0, 'too young: the request may still be sending it');
      now += 11_000;
      await assert.rejects(job.run(gw.ctx), /refunds not sent, will retry: refund \d+: connect ECONNREFUSED/);
      reachable = true;
      assert.equal(await job.run(gw.ctx), 0, 'after a failure the provider is asked again only 30 s later');
      now += 30_000;
      assert.equal(await job.run(gw.ctx), 1);
      assert.equal(await job.run(gw.ctx), 0, 'nothing left to send');
      assert.equal((await read(id, who)).status, 'ESTORNADO');
      assert.deepEqual(await balance(who), { available: -847, blocked: 0, total: -847 });
      await verify();
    } finally {
      setRefunds(null);
    }
  });

  test('refunds that keep failing go behind the others: a full batch of them never holds back the refund after it', async () => {
    const who = await gw.createSeller();
    const failing = new Set<number>();
    const tries = new Map<number, number>();
    let reachable = false;
    setRefunds(async (input) => {
      tries.set(input.refundId, (tries.get(input.refundId) ?? 0) + 1);
      if (!reachable || failing.has(input.refundId)) throw new Error('the provider answered 503');
      return sandboxRefunds.refund(input);
    });
    try {
      // The job's batch is 50: 50 refunds its provider keeps refusing, made first, then one it would take.
      for (let i = 0; i < 51; i++) {
        const res = await inject('POST', `/api/transactions/${await paidSale('CREDIT_CARD', who)}/refund`, who.headers, {});
        assert.equal(res.json().status, 'PENDING', res.body);
        if (i < 50) failing.add(res.json().id as number);
      }
      const last = (await inject('GET', '/api/transactions?limit=1', who.headers)).json().data[0];
      tries.clear(); // the requests' own tries
      reachable = true;
      now += 11_000;
      const job = createRefundDispatchJob();
      let rounds = 0;
      while ((await read(last.id, who)).status !== 'ESTORNADO' && rounds < 3) {
        await job.run(gw.ctx).catch(() => {});
        now += 30_000;
        rounds++;
      }
      assert.equal((await read(last.id, who)).status, 'ESTORNADO', `refunded after ${rounds} rounds of the job`);
      assert.equal(rounds, 2, 'the first round takes the 50 oldest; the next, the one never tried first');
      const tried = [...failing].map((id) => tries.get(id) ?? 0);
      assert.ok(
        tried.every((n) => n >= 1),
        'each failing refund was tried by the job',
      );
      assert.equal(
        tried.reduce((a, b) => a + b, 0),
        50 + 49,
        'all 50 in the first round, 49 again beside the last in the second',
      );
      await verify();
    } finally {
      setRefunds(null);
    }
  });

  test('a process stopping mid-round: the refund job ends before its next refund, the rest wait PENDING, the failure said', async () => {
    const who = await gw.createSeller();
    const ids: number[] = [];
    let calls = 0;
    let called!: () => void;
    const first = new Promise<void>((resolve) => {
      called = resolve;
    });
    const logged: string[] = [];
    const log = Object.assign(Object.create(gw.app.log), {
      error: (_o: object, msg: string) => logged.push(`error: ${msg}`),
      warn: (_o: object, msg: string) => logged.push(`warn: ${msg}`),
    });
    try {
      setRefunds(async () => {
        throw new Error('the provider answered 503');
      });
      for (let i = 0; i < 5; i++) {
        const res = await inject('POST', `/api/transactions/${await paidSale('CREDIT_CARD', who)}/refund`, who.headers, {});
        assert.equal(res.json().status, 'PENDING', res.body);
        ids.push(res.json().id as number);
      }
      // A provider in an outage: each refund waits out its 600 ms timeout, then fails.
      setRefunds(async () => {
        calls++;
        called();
        await new Promise((r) => setTimeout(r, 600));
        throw new Error('no answer within 600 ms');
      });
      now += 11_000;
      const runner = new WorkerRunner(gw.ctx, [createRefundDispatchJob()], log);
      await runner.start();
      await first;
      const asked = Date.now();
      await runner.stop();
      const tookMs = Date.now() - asked;
      // Before, the round ran its whole batch to the end (every PENDING refund here, each 600 ms).
      assert.equal(calls, 1, 'no refund after the one under way');
      assert.ok(tookMs < 2_000, `stopped in ${tookMs} ms`);
      assert.deepEqual(
        logged,
        ['warn: refunds not sent before the stop; sent by the next process'],
        'the refund that failed is said; the round cut short by the stop is no failure',
      );
      const left = await gw.ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM refunds WHERE id = ANY($1) AND status = 'PENDING'", [ids]);
      assert.equal(left.rows[0]!.n, 5, 'all still PENDING, sent by the next process');
    } finally {
      setRefunds(null);
    }
    await verify();
  });
});
