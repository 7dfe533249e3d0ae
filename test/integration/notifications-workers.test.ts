import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/app.ts';
import { createDeliveryJob } from '../../src/notifications/delivery.ts';
import type { Job } from '../../src/workers/job.ts';
import { WorkerRunner } from '../../src/workers/runner.ts';
import { onPostgres } from '../helpers/databases.ts';
import { pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from '../helpers/receiver.ts';

type Json = Record<string, unknown>;

// CONTRACT §4's PIX example (test/helpers/fixtures.ts) without its postbackUrl and pix options, plus `extra`.
const pixBody = (extra: Json = {}): Json => pixExample({ postbackUrl: null, pix: null }, extra);

const bodyOf = (r: ReceivedRequest) => JSON.parse(r.body.toString('utf8')) as Json;
const eventIdOf = (r: ReceivedRequest) => String(r.headers['x-event-id']);

describe('notification delivery workers', () => {
  let gw: Gateway;
  let rx: Receiver;
  let current = new Date('2026-11-21T12:00:00.000Z');
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    gw = await startGateway({ clock: { now: () => current } });
    rx = await startReceiver();
  });
  after(async () => {
    for (const close of closers.reverse()) await close().catch(() => {});
    await rx?.close();
    await gw?.close();
  });

  async function sale(app: App, seller: SellerKeys, body: Json): Promise<number> {
    const res = await app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: body });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as { sale: { id: number } }).sale.id;
  }
  async function move(app: App, id: number, event: string) {
    const res = await app.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, headers: adminHeaders, payload: { event } });
    assert.equal(res.statusCode, 200, `${event}: ${res.body}`);
  }
  async function webhook(seller: SellerKeys, path: string) {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: seller.headers,
      payload: { url: rx.url(path), types: ['TRANSACTION'] },
    });
    assert.equal(res.statusCode, 201, res.body);
  }
  async function rowsOf(sellerId: number) {
    return (
      await gw.ctx.db.query<{ id: number; event_id: string; status: string; attempts: number; last_response_status: number | null }>(
        'SELECT id, event_id::text AS event_id, status, attempts, last_response_status FROM notifications WHERE seller_id = $1 ORDER BY id',
        [sellerId],
      )
    ).rows;
  }

  /** The outcome is recorded just after the receiver answers: poll the rows (bounded). */
  async function waitForRows(sellerId: number, pred: (rows: Awaited<ReturnType<typeof rowsOf>>) => boolean) {
    const deadline = Date.now() + 5_000;
    while (!pred(await rowsOf(sellerId))) {
      if (Date.now() > deadline) throw new Error(`rows never matched: ${JSON.stringify(await rowsOf(sellerId))}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  test('a running WorkerRunner is woken by the commit (LISTEN/NOTIFY), not by its idle interval', async () => {
    const seller = await gw.createSeller();
    const inner = createDeliveryJob();
    let runs = 0;
    // Idle for a minute: only a wake-up can make it deliver within the few seconds waited below.
    const job: Job = {
      ...inner,
      idle_interval_ms: 60_000,
      async run(ctx) {
        const n = await inner.run(ctx);
        runs++;
        return n;
      },
    };
    const runner = new WorkerRunner(gw.ctx, [job], gw.app.log);
    await runner.start();
    try {
      // Its first run found nothing and it is now idle.
      await rx.waitFor(() => runs >= 1, 5_000, 'the first (empty) run');

      const id = await sale(gw.app, seller, pixBody({ postbackUrl: rx.url('/wake') }));
      await move(gw.app, id, 'PAYMENT_CONFIRMED');
      await rx.waitFor(() => rx.requestsTo('/wake').length === 1, 5_000, 'the postback');
      assert.equal(bodyOf(rx.requestsTo('/wake')[0]!).status, 'PAGO');

      // And again for a second commit, once it has gone back to sleep. The first outcome must be
      // recorded first: ESTORNADO waits while PAGO is pending (per-target order), and the wrapper
      // above drops the job's own wake-up on an outcome, so a commit landing before it would find
      // nothing to claim and leave the runner asleep for its idle minute (seen under load).
      await waitForRows(seller.id, (rows) => rows.length === 1 && rows[0]!.status === 'DELIVERED');
      await move(gw.app, id, 'REFUNDED');
      await rx.waitFor(() => rx.requestsTo('/wake').length === 2, 5_000, 'the second postback');
      assert.equal(bodyOf(rx.requestsTo('/wake')[1]!).status, 'ESTORNADO');

      // A resend commits and wakes it too.
      const [latest] = (
        await gw.ctx.db.query<{ id: number }>('SELECT id FROM notifications WHERE transaction_id = $1 ORDER BY id DESC LIMIT 1', [id])
      ).rows;
      await waitForRows(seller.id, (rows) => rows.every((r) => r.status === 'DELIVERED'));
      const resend = await gw.app.inject({ method: 'POST', url: `/api/notifications/${latest!.id}/resend`, headers: seller.headers });
      assert.equal(resend.statusCode, 202, resend.body);
      await rx.waitFor(() => rx.requestsTo('/wake').length === 3, 5_000, 'the resend');
      assert.equal(rx.requestsTo('/wake')[2]!.headers['x-delivery-attempt'], '2');
      await waitForRows(seller.id, (rows) => rows.length === 2 && rows.every((r) => r.status === 'DELIVERED'));
    } finally {
      await runner.stop();
    }
    const rows = await rowsOf(seller.id);
    assert.deepEqual(
      rows.map((r) => [r.status, r.attempts]),
      [
        ['DELIVERED', 1],
        ['DELIVERED', 2],
      ],
    );
  });

  test("a commit in another process wakes this process's runner (PostgreSQL)", { skip: !onPostgres && 'PGlite has no second process' }, async () => {
    const seller = await gw.createSeller();
    const other = await gw.peer();
    const inner = createDeliveryJob();
    let runs = 0;
    const runner = new WorkerRunner(
      gw.ctx,
      [
        {
          ...inner,
          idle_interval_ms: 60_000,
          async run(ctx) {
            const n = await inner.run(ctx);
            runs++;
            return n;
          },
        },
      ],
      gw.app.log,
    );
    await runner.start();
    try {
      await rx.waitFor(() => runs >= 1, 5_000, 'the first (empty) run');
      const id = await sale(other.app, seller, pixBody({ postbackUrl: rx.url('/wake-peer') }));
      await move(other.app, id, 'PAYMENT_CONFIRMED');
      await rx.waitFor(() => rx.requestsTo('/wake-peer').length === 1, 5_000, 'the postback');
      await waitForRows(seller.id, (rows) => rows.length === 1 && rows[0]!.status === 'DELIVERED');
    } finally {
      await runner.stop();
      await other.close();
    }
  });

  test('two worker processes: every notification delivered exactly once, per-target order kept', {
    skip: !onPostgres && 'needs PostgreSQL (two connections)',
  }, async () => {
    const seller = await gw.createSeller();
    await webhook(seller, '/multi-a');
    await webhook(seller, '/multi-b');
    const peers = [await gw.peer(), await gw.peer()];
    const runners = peers.map((p) => new WorkerRunner(p.ctx, [createDeliveryJob()], p.app.log));
    await Promise.all(runners.map((r) => r.start()));
    const expected = 2 * 100 + 2 * 25;
    const ids: number[] = [];
    try {
      // 100 sales paid (2 webhooks each = 200), every fourth also refunded (+50): commits spread over both processes.
      const work = Array.from({ length: 100 }, (_, i) => i);
      for (let from = 0; from < work.length; from += 10) {
        await Promise.all(
          work.slice(from, from + 10).map(async (i) => {
            const app = peers[i % 2]!.app;
            const id = await sale(app, seller, pixBody());
            ids.push(id);
            await move(app, id, 'PAYMENT_CONFIRMED');
            if (i % 4 === 0) await move(peers[(i + 1) % 2]!.app, id, 'REFUNDED');
          }),
        );
      }
      const delivered = () => rx.requestsTo('/multi-a').length + rx.requestsTo('/multi-b').length;
      await rx.waitFor(() => delivered() >= expected, 20_000, `${expected} deliveries`);
      // Let any duplicate show up, and the last outcomes be recorded, before counting.
      await waitForRows(seller.id, (rows) => rows.length === expected && rows.every((r) => r.status !== 'PENDING'));
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
      for (const p of peers) await p.close();
    }

    const got = [...rx.requestsTo('/multi-a'), ...rx.requestsTo('/multi-b')];
    const perEvent = new Map<string, number>();
    for (const r of got) perEvent.set(eventIdOf(r), (perEvent.get(eventIdOf(r)) ?? 0) + 1);
    const twice = [...perEvent].filter(([, n]) => n > 1);
    assert.deepEqual(twice, [], 'no event delivered twice');
    assert.equal(got.length, expected);
    assert.deepEqual(
      got.filter((r) => r.headers['x-delivery-attempt'] !== '1').map((r) => [eventIdOf(r), r.headers['x-delivery-attempt']]),
      [],
      'every delivery is a first attempt',
    );

    const rows = await rowsOf(seller.id);
    assert.equal(rows.length, expected);
    assert.deepEqual(new Set(rows.map((r) => r.event_id)), new Set(perEvent.keys()), 'every event id delivered');
    assert.deepEqual(
      rows.filter((r) => !(r.status === 'DELIVERED' && r.attempts === 1 && r.last_response_status === 200)),
      [],
      'every row DELIVERED at the first attempt with 200',
    );

    // Per sale and per webhook: PAGO arrived before ESTORNADO.
    for (const path of ['/multi-a', '/multi-b']) {
      const bySale = new Map<number, string[]>();
      for (const r of rx.requestsTo(path)) {
        const b = bodyOf(r);
        bySale.set(b.id as number, [...(bySale.get(b.id as number) ?? []), b.status as string]);
      }
      assert.deepEqual(new Set(bySale.keys()), new Set(ids));
      for (const [id, statuses] of bySale) {
        assert.ok(statuses.length === 1 ? statuses[0] === 'PAGO' : statuses.join() === 'PAGO,ESTORNADO', `${path} sale ${id}: ${statuses}`);
      }
    }
  });

  test('crash safety: a claim left by a dead worker is retried after its lease, as attempt 2', async () => {
    const seller = await gw.createSeller();
    const id = await sale(gw.app, seller, pixBody({ postbackUrl: rx.url('/crash') }));
    await move(gw.app, id, 'PAYMENT_CONFIRMED');
    const [row] = await rowsOf(seller.id);
    assert.ok(row, 'the payment queued a notification');
    const claimedAt = current.getTime();
    // What a worker killed mid-delivery leaves behind: the attempt counted and a 30 s lease.
    await gw.ctx.db.query('UPDATE notifications SET attempts = attempts + 1, locked_until = $2 WHERE id = $1', [
      row.id,
      new Date(claimedAt + 30_000),
    ]);

    const job = createDeliveryJob({ retryDelaysMs: [1000], random: () => 0.5 });
    closers.push(() => job.close());
    current = new Date(claimedAt + 29_999);
    await job.run(gw.ctx);
    await job.settled();
    assert.equal(rx.requestsTo('/crash').length, 0, 'still leased: not claimed');
    assert.deepEqual(
      (await rowsOf(seller.id)).map((r) => [r.status, r.attempts]),
      [['PENDING', 1]],
    );

    current = new Date(claimedAt + 31_000);
    const fresh = createDeliveryJob({ retryDelaysMs: [1000], random: () => 0.5 });
    closers.push(() => fresh.close());
    await fresh.run(gw.ctx);
    await fresh.settled();
    const got = rx.requestsTo('/crash');
    assert.equal(got.length, 1);
    assert.equal(got[0]!.headers['x-delivery-attempt'], '2');
    assert.equal(got[0]!.headers['x-event-id'], row.event_id);
    const [after] = await rowsOf(seller.id);
    assert.deepEqual([after!.status, after!.attempts, after!.last_response_status], ['DELIVERED', 2, 200]);
  });

  test('a delivery in flight is not claimed by a second worker', async () => {
    const seller = await gw.createSeller();
    rx.script('/in-flight', { status: 200, delayMs: 300 });
    const id = await sale(gw.app, seller, pixBody({ postbackUrl: rx.url('/in-flight') }));
    await move(gw.app, id, 'PAYMENT_CONFIRMED');
    const first = createDeliveryJob({ retryDelaysMs: [1000], timeoutMs: 5_000 });
    const second = createDeliveryJob({ retryDelaysMs: [1000] });
    closers.push(
      () => first.close(),
      () => second.close(),
    );
    const running = first.run(gw.ctx);
    await rx.waitFor(() => rx.requestsTo('/in-flight').length === 1, 5_000, "the first worker's request");
    await second.run(gw.ctx);
    assert.equal(rx.requestsTo('/in-flight').length, 1, 'leased by the first worker: not claimed again');
    await running;
    await first.settled();
    await second.run(gw.ctx);
    await second.settled();
    assert.equal(rx.requestsTo('/in-flight').length, 1);
    const [row] = await rowsOf(seller.id);
    assert.deepEqual([row!.status, row!.attempts], ['DELIVERED', 1]);
  });
});
