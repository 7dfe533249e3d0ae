// Fair delivery under one seller's flood of hanging receivers (docs/notifications.md#delivery): the
// numbers of the issue that measured it. Seller A has 20 TRANSACTION webhooks and 1,698 paid sales,
// each with a postbackUrl of its own, every one of them hanging: 35,658 notifications to 1,718
// targets. Seller B's notifications must not wait for them; A's failing webhooks are backed off by
// their circuits; one that recovers gets its backlog at once. The tests run in order, on one scene.
//
// The clock is the gateway's injectable one, moved by hand: nothing falls due by itself, so what is
// attempted is what the claim chose, not what a retry brought back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { createDeliveryJob } from '../../src/notifications/delivery.ts';
import { WorkerRunner } from '../../src/workers/runner.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const hooks = 20;
const sales = 1_698;
// Attempts to A's receivers hang until this timeout; everything asserted of B happens before it.
const hang_timeout_ms = 8_000;
// The job's defaults, restated: A holds this many attempts in flight at most.
const per_seller_max = 128;
const threshold = 5;
const open_ms = 10_000;

const pixBody = (postbackUrl: string) => ({
  amount: 15000,
  paymentMethod: 'PIX',
  postbackUrl,
  customer: { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
});
const hookPath = (i: number) => `/a-hook-${i}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('fair delivery: one seller with 1,718 hanging targets delays no other (docs/notifications.md#delivery)', () => {
  const start = new Date('2026-11-21T12:00:00.000Z');
  let current = start;
  let gw: Gateway;
  let rxA: Receiver;
  let rxB: Receiver;
  let runner: WorkerRunner;
  let a: SellerKeys;
  let b: SellerKeys;
  const bSales: number[] = [];
  // Attempts to A's webhooks when their circuits had all opened.
  let attempted = 0;
  const hookRows = "seller_id = $1 AND kind = 'TRANSACTION_WEBHOOK'";
  const attempts = async () =>
    (await gw.ctx.db.query<{ n: number }>(`SELECT coalesce(sum(attempts), 0)::int AS n FROM notifications WHERE ${hookRows}`, [a.id])).rows[0]!.n;
  // What the runner told its log: a burst of receiver failures must never read as a database outage.
  const logged: string[] = [];
  const log = {
    warn: (obj: object, msg: string) => logged.push(`warn ${msg} ${JSON.stringify(obj)}`),
    error: (obj: object, msg: string) => logged.push(`error ${msg} ${String((obj as { err?: Error }).err?.message)}`),
  } as unknown as FastifyBaseLogger;

  const count = async (where: string, params: unknown[]) =>
    (await gw.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM notifications WHERE ${where}`, params)).rows[0]!.n;

  /**
   * Polls a database condition every 100 ms, for at most `ms`; a timeout says where A's notifications
   * and circuits stand. The conditions read indexes of pending rows only: the embedded database runs
   * on the test's own thread, and a poll that read A's 35,658 rows would take it from the worker.
   */
  async function until(what: string, ms: number, pred: () => Promise<boolean>) {
    const deadline = Date.now() + ms;
    while (!(await pred())) {
      if (Date.now() > deadline) {
        const rows = await gw.ctx.db.query(
          `SELECT kind, status, attempts, next_attempt_at <= $2 AS due, locked_until IS NOT NULL AS leased, count(*)::int AS n
           FROM notifications WHERE seller_id = $1 GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
          [a.id, current],
        );
        const circuits = await gw.ctx.db.query(
          'SELECT url, failures, opened, open_until FROM notification_circuits WHERE seller_id = $1 AND open_until IS NOT NULL ORDER BY url',
          [a.id],
        );
        throw new Error(`timed out after ${ms} ms waiting for ${what}; A: ${JSON.stringify(rows.rows)}; circuits: ${JSON.stringify(circuits.rows)}`);
      }
      await sleep(100);
    }
  }

  async function sale(seller: SellerKeys, postbackUrl: string): Promise<number> {
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixBody(postbackUrl) });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as { sale: { id: number } }).sale.id;
  }
  async function pay(id: number) {
    const res = await gw.app.inject({
      method: 'POST',
      url: `/admin/transactions/${id}/events`,
      headers: adminHeaders,
      payload: { event: 'PAYMENT_CONFIRMED' },
    });
    assert.equal(res.statusCode, 200, res.body);
  }
  async function webhook(seller: SellerKeys, url: string) {
    const res = await gw.app.inject({ method: 'POST', url: '/api/webhooks', headers: seller.headers, payload: { url, types: ['TRANSACTION'] } });
    assert.equal(res.statusCode, 201, res.body);
  }

  /**
   * A's other 1,697 paid sales, copied from the first in two statements instead of 3,394 requests: the
   * sale (its unique provider references left empty, its own postbackUrl) and the outbox rows its
   * payment wrote, one per target, as src/notifications/outbox.ts writes them (own event id, order key
   * and ids in the body), in the order the payments would have written them.
   */
  async function copyPaidSales(template: number) {
    const db = gw.ctx.db;
    const columns = (
      await db.query<{ name: string; unique: boolean }>(
        `SELECT a.attname AS name, EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisunique AND a.attnum = ANY (i.indkey)) AS unique
         FROM pg_attribute a WHERE a.attrelid = 'transactions'::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' AND a.attname <> 'id' ORDER BY a.attnum`,
      )
    ).rows;
    const value = (c: { name: string; unique: boolean }) => (c.name === 'postback_url' ? `$2 || k` : c.unique ? 'NULL' : `t.${c.name}`);
    // `"id":<template>,` becomes `"id":<copy>,` (and so for transactionId and the items' saleId)
    const swap = (field: string) => `'"${field}":${template},', '"${field}":' || c.id || ','`;
    await db.query(
      `WITH copies AS (
         INSERT INTO transactions (${columns.map((c) => c.name).join(', ')})
         SELECT ${columns.map(value).join(', ')} FROM transactions t CROSS JOIN generate_series(1, $3::int) AS k WHERE t.id = $1
         RETURNING id, postback_url
       )
       INSERT INTO notifications (seller_id, kind, event_id, url, webhook_id, transaction_id, event_status, previous_status,
         status_changed_at, payload, order_key, next_attempt_at, created_at)
       SELECT n.seller_id, n.kind, gen_random_uuid(), x.url, n.webhook_id, c.id, n.event_status, n.previous_status, n.status_changed_at,
         replace(replace(replace(n.payload, ${swap('id')}), ${swap('transactionId')}), ${swap('saleId')}),
         n.kind || ':t' || c.id || ':' || x.url, n.next_attempt_at, n.created_at
       FROM copies c CROSS JOIN notifications n
       CROSS JOIN LATERAL (SELECT CASE WHEN n.kind = 'TRANSACTION_POSTBACK' THEN c.postback_url ELSE n.url END AS url) x
       WHERE n.transaction_id = $1
       ORDER BY c.id, n.id`,
      [template, rxA.url('/a-pb?sale='), sales - 1],
    );
  }

  before(async () => {
    gw = await startGateway({ clock: { now: () => current } });
    rxA = await startReceiver();
    rxB = await startReceiver();
    a = await gw.createSeller({ name: 'Loja A' });
    b = await gw.createSeller({ name: 'Loja B' });
    for (let i = 0; i < hooks; i++) {
      rxA.script(hookPath(i), 'hang');
      await webhook(a, rxA.url(hookPath(i)));
    }
    rxA.script('/a-pb', 'hang');
    const template = await sale(a, rxA.url('/a-pb?sale=template'));
    await pay(template);
    await copyPaidSales(template);
    assert.equal(await count('seller_id = $1', [a.id]), sales * (hooks + 1));
    // B: a webhook and five sales with postbacks, paid once A's flood is under way.
    await webhook(b, rxB.url('/b-hook'));
    for (let i = 0; i < 5; i++) bSales.push(await sale(b, rxB.url(`/b-pb-${i}`)));

    const job = createDeliveryJob({
      timeoutMs: hang_timeout_ms,
      retryDelaysMs: Array(8).fill(3_600_000),
      random: () => 0.5,
      circuit: { openMs: open_ms },
    });
    runner = new WorkerRunner(gw.ctx, [job], log);
    await runner.start();
  });
  after(async () => {
    // The hanging attempts fail now instead of at their timeout, so the runner stops at once.
    await rxA?.close();
    await rxB?.close();
    await runner?.stop();
    await gw?.close();
  });

  test("B's notifications are all delivered while A's first attempts still hang, and A holds no more than its share", async (t) => {
    await rxA.waitFor(() => rxA.requests.length >= per_seller_max, 30_000, "A's share of attempts in flight");
    const paidAt = new Map<number, number>();
    for (const id of bSales) {
      await pay(id);
      paidAt.set(id, Date.now());
    }
    await rxB.waitFor(() => rxB.requests.length === 2 * bSales.length, 30_000, "B's webhooks and postbacks");
    assert.equal(
      await count('seller_id = $1 AND (attempts > 1 OR last_error IS NOT NULL OR status <> $2)', [a.id, 'PENDING']),
      0,
      'no attempt to A has ended yet',
    );
    assert.equal(rxA.requests.length, per_seller_max, 'A took no slot beyond its share');

    const delays = rxB.requests.map((r) => r.at - paidAt.get(JSON.parse(r.body.toString('utf8')).id as number)!).sort((x, y) => x - y);
    t.diagnostic(
      `figure: B's delay behind A's 35,658 hanging notifications (${gw.ctx.db.kind}): median ${delays[delays.length >> 1]} ms, max ${delays.at(-1)} ms over ${delays.length} notifications`,
    );
  });

  test("A's webhooks' circuits open at the threshold, and their notifications are not attempted while open", async () => {
    const open = async () =>
      (
        await gw.ctx.db.query<{ url: string; failures: number }>(
          `SELECT url, failures FROM notification_circuits WHERE seller_id = $1 AND open_until > $2 AND url LIKE '%/a-hook-%'`,
          [a.id, current],
        )
      ).rows;
    await until("A's 20 webhook circuits open", hang_timeout_ms + 15_000, async () => (await open()).length === hooks);
    for (const c of await open()) assert.ok(c.failures >= threshold, `${c.url} opened after ${c.failures} failures`);
    // A's next share of attempts, once its first ones have failed: claims started before the last
    // circuit opened may still take a webhook; none after (the next test checks it over many claims).
    await rxA.waitFor(() => rxA.requests.length >= 2 * per_seller_max, 20_000, "A's second share of attempts");
    attempted = await attempts();
    const hookRequests = () => rxA.requests.filter((r) => r.path.startsWith('/a-hook-')).length;
    await rxA.waitFor(() => hookRequests() === attempted, 5_000, 'every webhook attempt claimed to arrive');
    assert.ok(attempted < 2 * per_seller_max, `the second share went mostly to postbacks (${attempted} webhook attempts in all)`);
  });

  test('a recovered endpoint gets its backlog at once, after a single probe; the others probe once and stay open', async () => {
    // A's server comes back: its first webhook answers 200, its postbacks fail at once (503), the
    // other webhooks still hang. Its attempts in flight end now.
    rxA.script(hookPath(0), 200);
    rxA.script('/a-pb', 503);
    rxA.server.closeAllConnections();
    await until(
      "A's webhook attempts in flight recorded",
      10_000,
      async () => (await count(`${hookRows} AND locked_until IS NOT NULL`, [a.id])) === 0,
    );
    // A's untried postbacks go now, each failing at once; its webhooks, still open, wait.
    await until(
      "A's every postback attempted",
      90_000,
      async () =>
        (await count("seller_id = $1 AND status = 'PENDING' AND next_attempt_at <= $2 AND kind = 'TRANSACTION_POSTBACK' AND attempts = 0", [
          a.id,
          current,
        ])) === 0,
    );
    assert.equal(await attempts(), attempted, 'no webhook of A claimed while its circuit is open');
    const before = new Map(Array.from({ length: hooks }, (_, i) => [i, rxA.requestsTo(hookPath(i)).length]));
    // The circuits half-open. The clock then stands still: the backlog can only fall due by its release.
    current = new Date(start.getTime() + open_ms + 1_000);
    runner.wake('notification-delivery');

    const hook0 = [a.id, rxA.url(hookPath(0))];
    await until("the recovered webhook's backlog", 120_000, async () => (await count("url = $1 AND status = 'PENDING'", [hook0[1]])) === 0);
    assert.equal(await count("seller_id = $1 AND url = $2 AND status = 'DELIVERED'", hook0), sales);
    for (let i = 1; i < hooks; i++) assert.equal(rxA.requestsTo(hookPath(i)).length - before.get(i)!, 1, `${hookPath(i)}: one probe`);
    const closed = await gw.ctx.db.query('SELECT 1 FROM notification_circuits WHERE seller_id = $1 AND url = $2', hook0);
    assert.equal(closed.rows.length, 0, 'its circuit closed');
    assert.deepEqual(logged, [], 'the worker logged nothing: no database outage, no failed run');
  });
});
