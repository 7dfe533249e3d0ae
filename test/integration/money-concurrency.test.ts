/**
 * Concurrent events on one seller's sales through three gateway processes sharing one PostgreSQL
 * database (each with its own pool): row locks must serialize the moves of one sale, a sale must be
 * paid once, conflicting moves must have exactly one winner, and the seller's balance must equal
 * the independent model built from the final statuses.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { App } from '../../src/app.ts';
import { onPostgres } from '../helpers/databases.ts';
import { adminHeaders, startGateway } from '../helpers/gateway.ts';
import { MoneyModel, type Status, saleBody, type TxEvent } from '../helpers/money-model.ts';

const skip = onPostgres
  ? false
  : 'PostgreSQL only: PGlite is one connection in one process, so nothing would run concurrently (set TEST_DATABASE_URL)';

test('50 concurrent events from 3 processes: one winner per conflict, paid once, balance equals the model', { skip }, async () => {
  const gw = await startGateway();
  try {
    const peers = [await gw.peer(), await gw.peer()];
    const apps: App[] = [gw.app, peers[0]!.app, peers[1]!.app];
    const seller = await gw.createSeller();
    const schedule = await gw.app.inject({
      method: 'PATCH',
      url: `/admin/sellers/${seller.id}`,
      headers: adminHeaders,
      payload: { feeSchedule: { reserveBasisPoints: 1000, reserveDays: 30 } },
    });
    assert.equal(schedule.statusCode, 200, schedule.body);

    const model = new MoneyModel();
    model.addSeller(seller.id);
    model.patchSellerSchedule(seller.id, { reserveBasisPoints: 1000, reserveDays: 30 });
    const at = Date.now(); // no clock moves and no reserve job here: nothing falls due

    // 50 PIX sales (amounts in steps of 50 cents, so half-cent ties occur); the last 20 paid.
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) {
      const amount = 10_000 + 1_250 * i;
      const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: saleBody('PIX', amount) });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().sale.id);
      model.createSale(res.json().sale.id, seller.id, 'PIX', amount);
    }
    const pending = ids.slice(0, 30);
    const paid = ids.slice(30);
    for (const id of paid) {
      const res = await gw.app.inject({
        method: 'POST',
        url: `/admin/transactions/${id}/events`,
        headers: adminHeaders,
        payload: { event: 'PAYMENT_CONFIRMED' },
      });
      assert.equal(res.statusCode, 200, res.body);
      model.applyEvent(id, 'PAYMENT_CONFIRMED', at);
    }
    assert.deepEqual(await balance(), model.balance(seller.id));

    type Shot = { id: number; event: TxEvent };
    const fire = async (shots: Shot[]) => {
      // All requests start in the same tick; consecutive shots go to different processes.
      const answers = await Promise.all(
        shots.map((s, i) =>
          apps[i % apps.length]!.inject({
            method: 'POST',
            url: `/admin/transactions/${s.id}/events`,
            headers: adminHeaders,
            payload: { event: s.event },
          }),
        ),
      );
      return answers.map((res, i) => {
        assert.ok(res.statusCode === 200 || res.statusCode === 409, `${shots[i]!.event} on ${shots[i]!.id}: ${res.statusCode} ${res.body}`);
        if (res.statusCode === 409) assert.equal(res.json().errorType, 'INVALID_TRANSITION');
        return { ...shots[i]!, status: res.statusCode };
      });
    };
    async function balance() {
      const res = await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }
    async function statusOf(id: number): Promise<Status> {
      const res = await apps[id % apps.length]!.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().status;
    }
    async function verifyOk() {
      const res = await gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders });
      assert.deepEqual(res.json().mismatches, []);
      assert.equal(res.json().ok, true);
    }
    const pair = (id: number, a: TxEvent, b: TxEvent): Shot[] => [
      { id, event: a },
      { id, event: b },
    ];

    // ---- wave 1: 50 events at once ----
    const confirmOnce = pending.slice(0, 15);
    const confirmTwice = pending.slice(0, 5);
    const confirmOrCancel = pending.slice(15, 20);
    const medOrRefund = paid.slice(0, 5);
    const medOnly = paid.slice(5, 10);
    const refundOnly = paid.slice(10, 15);
    const wave1: Shot[] = [
      ...confirmOnce.map((id) => ({ id, event: 'PAYMENT_CONFIRMED' as const })),
      ...confirmOrCancel.flatMap((id) => pair(id, 'PAYMENT_CONFIRMED', 'CANCELLED')),
      ...medOrRefund.flatMap((id) => pair(id, 'MED_OPENED', 'REFUNDED')),
      ...confirmTwice.map((id) => ({ id, event: 'PAYMENT_CONFIRMED' as const })),
      ...medOnly.map((id) => ({ id, event: 'MED_OPENED' as const })),
      ...refundOnly.map((id) => ({ id, event: 'REFUNDED' as const })),
    ];
    assert.equal(wave1.length, 50);
    const answers1 = await fire(wave1);
    const answersFor = (answers: (Shot & { status: number })[], id: number) => answers.filter((a) => a.id === id);

    const status1 = new Map<number, Status>();
    for (const id of ids) status1.set(id, await statusOf(id));
    // single and duplicated confirmations: all 200, the sale is PAGO
    for (const id of confirmOnce) {
      for (const a of answersFor(answers1, id)) assert.equal(a.status, 200, `PAYMENT_CONFIRMED on ${id}`);
      assert.equal(status1.get(id), 'PAGO');
    }
    // conflicting pairs: exactly one winner, and the status is the winner's
    const target: Partial<Record<TxEvent, Status>> = { PAYMENT_CONFIRMED: 'PAGO', CANCELLED: 'CANCELADO', MED_OPENED: 'MED', REFUNDED: 'ESTORNADO' };
    for (const id of [...confirmOrCancel, ...medOrRefund]) {
      const mine = answersFor(answers1, id);
      const winners = mine.filter((a) => a.status === 200);
      assert.equal(winners.length, 1, `one winner on sale ${id}: ${JSON.stringify(mine)}`);
      assert.equal(status1.get(id), target[winners[0]!.event], `sale ${id} ends where its winner took it`);
    }
    for (const id of medOnly) assert.equal(status1.get(id), 'MED');
    for (const id of refundOnly) assert.equal(status1.get(id), 'ESTORNADO');
    for (const id of [...pending.slice(20), ...paid.slice(15)])
      assert.equal(status1.get(id), id < paid[0]! ? 'PENDENTE' : 'PAGO', `untouched sale ${id}`);

    // the model, from the final statuses
    const pathTo: Record<string, TxEvent[]> = {
      'PENDENTE→PAGO': ['PAYMENT_CONFIRMED'],
      'PENDENTE→CANCELADO': ['CANCELLED'],
      'PENDENTE→PENDENTE': [],
      'PAGO→PAGO': [],
      'PAGO→MED': ['MED_OPENED'],
      'PAGO→ESTORNADO': ['REFUNDED'],
    };
    const settle = (statuses: Map<number, Status>) => {
      for (const [id, status] of statuses) {
        const path = pathTo[`${model.sale(id).status}→${status}`];
        assert.ok(path, `sale ${id}: unexpected ${model.sale(id).status} → ${status}`);
        for (const e of path) assert.equal(model.applyEvent(id, e, at), 'moved');
      }
    };
    settle(status1);
    assert.deepEqual(await balance(), model.balance(seller.id), 'balance after wave 1');
    await verifyOk();

    // ---- wave 2: MED resolved both ways at once, repeated confirmations, refunds racing MEDs ----
    const inMed = ids.filter((id) => status1.get(id) === 'MED');
    const stillPending = pending.slice(20, 25);
    const stillPaid = paid.slice(15, 20);
    const wave2: Shot[] = [
      ...inMed.flatMap((id) => pair(id, 'MED_WON', 'MED_LOST')),
      ...stillPending.flatMap((id) => [
        { id, event: 'PAYMENT_CONFIRMED' as const },
        { id, event: 'PAYMENT_CONFIRMED' as const },
        { id, event: 'PAYMENT_CONFIRMED' as const },
      ]),
      ...stillPaid.flatMap((id) => pair(id, 'REFUNDED', 'MED_OPENED')),
    ];
    const answers2 = await fire(wave2);
    const status2 = new Map<number, Status>();
    for (const id of ids) status2.set(id, await statusOf(id));
    for (const id of [...inMed, ...stillPaid]) {
      const winners = answersFor(answers2, id).filter((a) => a.status === 200);
      assert.equal(winners.length, 1, `one winner on sale ${id}`);
    }
    for (const id of stillPending) {
      for (const a of answersFor(answers2, id)) assert.equal(a.status, 200);
      assert.equal(status2.get(id), 'PAGO');
    }
    pathTo['MED→PAGO'] = ['MED_WON'];
    pathTo['MED→ESTORNADO'] = ['MED_LOST'];
    pathTo['ESTORNADO→ESTORNADO'] = [];
    pathTo['CANCELADO→CANCELADO'] = [];
    pathTo['MED→MED'] = [];
    settle(status2);
    assert.deepEqual(await balance(), model.balance(seller.id), 'balance after wave 2');
    for (const app of apps) {
      const res = await app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
      assert.deepEqual(res.json(), model.balance(seller.id), 'every process reads the same balance');
    }
    await verifyOk();

    // paid exactly once; refunded or lost money returned exactly once
    const postings = await gw.ctx.db.query<{ transaction_id: unknown; kind: string; n: unknown }>(
      `
      SELECT transaction_id, kind, count(*)::int AS n FROM postings WHERE seller_id = $1 GROUP BY transaction_id, kind`,
      [seller.id],
    );
    const counts = new Map(postings.rows.map((r) => [`${Number(r.transaction_id)}:${r.kind}`, Number(r.n)]));
    for (const id of ids) {
      const sale = model.sale(id);
      assert.equal(counts.get(`${id}:FIRST_PAYMENT`) ?? 0, sale.split ? 1 : 0, `first payments of sale ${id}`);
    }
    const funds = await gw.ctx.db.query<{ transaction_id: unknown; total: unknown }>(
      `
      SELECT p.transaction_id, sum(l.amount)::bigint AS total FROM journal_lines l JOIN postings p ON p.id = l.posting_id
      WHERE p.seller_id = $1 AND split_part(l.account, ':', 1) = 'customer_funds' GROUP BY p.transaction_id`,
      [seller.id],
    );
    const byId = new Map(funds.rows.map((r) => [Number(r.transaction_id), Number(r.total)]));
    for (const id of ids) assert.equal(byId.get(id) ?? 0, model.expectedCustomerFunds(id), `customer_funds of sale ${id} (${model.sale(id).status})`);
    const platform = await gw.ctx.db.query<{ account: string; total: unknown }>(
      `
      SELECT l.account, sum(l.amount)::bigint AS total FROM journal_lines l JOIN postings p ON p.id = l.posting_id
      WHERE p.seller_id = $1 AND l.account IN ('fee_revenue', 'dispute_losses') GROUP BY l.account`,
      [seller.id],
    );
    const got = new Map(platform.rows.map((r) => [r.account, Number(r.total)]));
    const t = model.tally(seller.id);
    assert.deepEqual([got.get('fee_revenue') ?? 0, got.get('dispute_losses') ?? 0], [t.feeRevenue, t.disputeLosses]);
  } finally {
    await gw.close();
  }
});
