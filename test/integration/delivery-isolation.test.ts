import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDeliveryJob, type DeliveryOptions } from '../../src/notifications/delivery.ts';
import { WorkerRunner } from '../../src/workers/runner.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from '../helpers/receiver.ts';

// A receiver that hangs is cut at this timeout; everything asserted below happens well before it.
const hang_timeout_ms = 8_000;
const per_target_max = 4;

const pixBody = (postbackUrl: string) => ({
  amount: 15000,
  paymentMethod: 'PIX',
  postbackUrl,
  customer: { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
});

const statusOf = (r: ReceivedRequest) => (JSON.parse(r.body.toString('utf8')) as { status: string }).status;

describe('delivery isolation and recovery (CONTRACT §9)', () => {
  let gw: Gateway;
  let rx: Receiver;
  const runners: WorkerRunner[] = [];

  before(async () => {
    gw = await startGateway();
    rx = await startReceiver();
  });
  after(async () => {
    await rx?.close(); // lets hanging attempts end before the runners wait for them
    for (const r of runners) await r.stop();
    await gw?.close();
  });

  async function startWorker(options: DeliveryOptions) {
    const runner = new WorkerRunner(
      gw.ctx,
      [createDeliveryJob({ timeoutMs: hang_timeout_ms, perTargetMax: per_target_max, ...options })],
      gw.app.log,
    );
    await runner.start();
    runners.push(runner);
    return runner;
  }

  async function paidSale(seller: SellerKeys, postbackUrl: string): Promise<number> {
    const created = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixBody(postbackUrl) });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().sale.id as number;
    const paid = await gw.app.inject({
      method: 'POST',
      url: `/admin/transactions/${id}/events`,
      headers: adminHeaders,
      payload: { event: 'PAYMENT_CONFIRMED' },
    });
    assert.equal(paid.statusCode, 200, paid.body);
    return id;
  }

  test('a receiver that hangs holds at most its own share of attempts and delays no other target', async () => {
    const hanging = await gw.createSeller();
    const other = await gw.createSeller();
    rx.script('/hang', 'hang');
    const runner = await startWorker({});
    try {
      for (let i = 0; i < 10; i++) await paidSale(hanging, rx.url('/hang'));
      await rx.waitFor(() => rx.requestsTo('/hang').length === per_target_max, 5_000, "the hanging target's share");

      // Committed while those attempts hang: before, it waited for the whole claimed batch to time out.
      const started = Date.now();
      await paidSale(other, rx.url('/other'));
      await rx.waitFor(() => rx.requestsTo('/other').length === 1, hang_timeout_ms / 2, "the other seller's postback");
      assert.ok(Date.now() - started < hang_timeout_ms / 2);
      assert.equal(rx.requestsTo('/hang').length, per_target_max, 'no more than its share went to the hanging target');
    } finally {
      rx.script('/hang', 200);
      rx.server.closeAllConnections(); // the hanging requests fail now instead of at their timeout
      await runner.stop();
    }
  });

  test('a receiver that answers 200 and then drips its body is delivered once, its slot freed long before the deadline', async () => {
    const seller = await gw.createSeller();
    rx.script('/drip', 'drip');
    // Short retries, so that a dripping body counted as a failure would be retried here; the default
    // timeout (10 s), which a body read to its end would hold the attempt's slot for.
    const runner = await startWorker({ timeoutMs: 10_000, retryDelaysMs: [50, 50] });
    try {
      await paidSale(seller, rx.url('/drip'));
      const started = Date.now();
      const row = async () =>
        (
          await gw.ctx.db.query<{ status: string; attempts: number; code: number | null; error: string | null; leased: boolean }>(
            `SELECT status, attempts, last_response_status AS code, last_error AS error, locked_until IS NOT NULL AS leased
             FROM notifications WHERE seller_id = $1`,
            [seller.id],
          )
        ).rows[0];
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline) {
        const r = await row();
        if (r && r.status !== 'PENDING' && !r.leased) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(await row(), { status: 'DELIVERED', attempts: 1, code: 200, error: null, leased: false });
      assert.ok(Date.now() - started < 5_000, `recorded after ${Date.now() - started} ms`);
      assert.equal(rx.requestsTo('/drip').length, 1);
      await rx.waitFor(() => rx.requestsTo('/drip')[0]!.closedAt !== null, 2_000, 'the dripping response cut by the gateway');
      const drip = rx.requestsTo('/drip')[0]!;
      assert.ok(drip.closedAt! - drip.at < 3_000, `the response was cut ${drip.closedAt! - drip.at} ms after the request`);
    } finally {
      rx.script('/drip', 200);
      await runner.stop();
    }
  });

  test('a receiver back from an outage catches up at once, in per-resource order, not at its next scheduled retry', async () => {
    const seller = await gw.createSeller();
    rx.script('/outage', 503);
    const runner = await startWorker({ retryDelaysMs: [3_600_000, 3_600_000] });
    try {
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push(await paidSale(seller, rx.url('/outage')));
      // A refund too: its ESTORNADO must not overtake the PAGO of the same sale.
      const refund = await gw.app.inject({ method: 'POST', url: `/api/transactions/${ids[0]}/refund`, headers: seller.headers });
      assert.equal(refund.statusCode, 201, refund.body);
      await rx.waitFor(() => rx.requestsTo('/outage').length === 3, 5_000, 'three failed first attempts');
      const waiting = async () =>
        (
          await gw.ctx.db.query<{ attempts: number; later: boolean }>(
            `
        SELECT attempts, next_attempt_at > now() + interval '30 minutes' AS later FROM notifications
        WHERE seller_id = $1 AND status = 'PENDING' ORDER BY id`,
            [seller.id],
          )
        ).rows.map((r) => [r.attempts, r.later]);
      const deadline = Date.now() + 5_000;
      while ((await waiting()).filter(([, later]) => later).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      // Three wait an hour for their retry; the refund's is held behind its sale's PAGO, not yet tried.
      assert.deepEqual(await waiting(), [
        [1, true],
        [1, true],
        [1, true],
        [0, false],
      ]);

      rx.script('/outage', 200);
      const started = Date.now();
      await paidSale(seller, rx.url('/outage')); // its first attempt succeeds and releases the rest
      await rx.waitFor(() => rx.requestsTo('/outage').length === 3 + 5, 5_000, 'the backlog');
      assert.ok(Date.now() - started < 5_000);
      const sale0 = rx
        .requestsTo('/outage')
        .filter((r) => (JSON.parse(r.body.toString()) as { id: number }).id === ids[0])
        .map(statusOf);
      assert.deepEqual(sale0, ['PAGO', 'PAGO', 'ESTORNADO']);
      await runner.stop();
      const left = await gw.ctx.db.query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM notifications WHERE seller_id = $1 GROUP BY status',
        [seller.id],
      );
      assert.deepEqual(left.rows, [{ status: 'DELIVERED', n: 5 }]);
    } finally {
      await runner.stop();
    }
  });
});
