import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type App, buildApp } from '../../src/app.ts';
import type { AppContext } from '../../src/context.ts';
import { createDeliveryJob } from '../../src/notifications/delivery.ts';
import { closeContext, createContext, loadSettings } from '../../src/runtime.ts';
import { WorkerRunner } from '../../src/workers/runner.ts';
import { onPostgres, testDatabaseUrl } from '../helpers/databases.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway, testEnv } from '../helpers/gateway.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

// The gateway's pool (runtime default) plus its one listening connection.
const pool_size = 10;
const connections_max = pool_size + 1;
const outage_ms = 3_000;
// Generous bounds: they tell "answered" from "hung for the whole outage", nothing finer.
const answer_bound_ms = 2_500;
const recovery_bound_ms = 10_000;

const pixBody = (postbackUrl: string) => ({
  amount: 15000,
  paymentMethod: 'PIX',
  postbackUrl,
  customer: { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
});

async function until(what: string, boundMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > boundMs) throw new Error(`${what}: not within ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

describe('database outages (through a TCP proxy the test owns)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  let gw: Gateway; // talks to PostgreSQL directly: set-up and the "other process"
  let proxy: TcpProxy;
  let ctx: AppContext; // the gateway under test, whose every connection goes through the proxy
  let app: App;
  let runner: WorkerRunner;
  let rx: Receiver;
  let seller: SellerKeys;

  before(async () => {
    gw = await startGateway();
    const target = new URL(testDatabaseUrl!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    ctx = await createContext(loadSettings(testEnv(proxy.urlFor(gw.database.url))));
    app = await buildApp(ctx);
    await app.ready();
    rx = await startReceiver();
    // Idle for a minute: only a wake-up through the listener delivers within the bounds below.
    runner = new WorkerRunner(ctx, [{ ...createDeliveryJob(), idle_interval_ms: 60_000 }], app.log);
    await runner.start();
    seller = await gw.createSeller();
  });
  after(async () => {
    await runner?.stop();
    await app?.close();
    if (ctx) await closeContext(ctx);
    await proxy?.close();
    await rx?.close();
    await gw?.close();
  });

  const balance = () => app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
  const health = () => app.inject({ method: 'GET', url: '/health' });

  async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; res: T }> {
    const started = Date.now();
    const res = await call();
    return { ms: Date.now() - started, res };
  }

  /** Recovers by itself, and its listener is subscribed again: a revocation and a commit elsewhere reach it. */
  async function assertRecovered(path: string) {
    await until('health 200 after the outage', recovery_bound_ms, async () => (await health()).statusCode === 200);
    await until('balance 200 after the outage', recovery_bound_ms, async () => (await balance()).statusCode === 200);

    const id = (await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixBody(rx.url(path)) })).json().sale.id;
    const paid = await gw.app.inject({
      method: 'POST',
      url: `/admin/transactions/${id}/events`,
      headers: adminHeaders,
      payload: { event: 'PAYMENT_CONFIRMED' },
    });
    assert.equal(paid.statusCode, 200, paid.body);
    await rx.waitFor(() => rx.requestsTo(path).length === 1, 5_000, 'the postback, woken through the re-subscribed channel');
  }

  test('the database goes away for 3 s: fast 503s, a bounded number of connection attempts, recovery by itself', async () => {
    assert.equal((await balance()).statusCode, 200);
    proxy.resetCounts();
    proxy.down();
    const started = Date.now();
    const answers: { status: number; ms: number; retryAfter: unknown; errorType: unknown; type: unknown }[] = [];
    while (Date.now() - started < outage_ms) {
      for (const call of [health, balance]) {
        const { ms, res } = await timed(call);
        answers.push({
          status: res.statusCode,
          ms,
          retryAfter: res.headers['retry-after'],
          errorType: res.json().errorType,
          type: res.headers['content-type'],
        });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const attemptsDuring = proxy.accepted;
    proxy.up();

    assert.ok(answers.length >= 10, `${answers.length} answers`);
    for (const a of answers) {
      assert.deepEqual([a.status, a.retryAfter, a.errorType, a.type], [503, '1', 'SERVICE_UNAVAILABLE', 'application/json; charset=utf-8']);
      assert.ok(a.ms < answer_bound_ms, `an answer took ${a.ms} ms`);
    }
    // Backoff bounds the attempts (a listener and a probe, each at most about once a second), and
    // they do not grow with the outage: before, they doubled every second.
    assert.ok(attemptsDuring <= 20, `${attemptsDuring} connection attempts in ${outage_ms} ms`);

    await assertRecovered('/after-down');
    assert.ok(proxy.maxOpen <= connections_max, `${proxy.maxOpen} connections open at once`);
  });

  test('a silent network (partition) for 3 s: requests in flight and new ones answer 503 within the bound, then recovery', async () => {
    assert.equal((await balance()).statusCode, 200);
    proxy.resetCounts();
    proxy.partition();
    const started = Date.now();
    // In flight on a pooled connection that now leads nowhere: answered when the heartbeat trips.
    const inFlight = await timed(balance);
    assert.equal(inFlight.res.statusCode, 503, inFlight.res.body);
    assert.ok(inFlight.ms < answer_bound_ms, `the request in flight took ${inFlight.ms} ms`);
    while (Date.now() - started < outage_ms) {
      const { ms, res } = await timed(health);
      assert.equal(res.statusCode, 503);
      assert.ok(ms < answer_bound_ms, `health took ${ms} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
    proxy.up();
    await assertRecovered('/after-partition');
    assert.ok(proxy.maxOpen <= connections_max, `${proxy.maxOpen} connections open at once`);
  });

  test('a listening connection that falls silent between its connect and its LISTEN is given up and replaced', async () => {
    assert.equal((await balance()).statusCode, 200);
    proxy.down();
    await until('503 while down', recovery_bound_ms, async () => (await balance()).statusCode === 503);
    // The listener's next connection gets through its start-up; its LISTEN then leads nowhere, for good.
    proxy.stallOn((chunk) => chunk[0] === 0x51 && chunk.includes('LISTEN'));
    try {
      proxy.up();
      await until('listening again, on another connection', recovery_bound_ms, async () => ctx.db.listening);
      assert.equal(proxy.stalled, 1, 'a LISTEN was stalled');
      await assertRecovered('/after-stalled-listen');
    } finally {
      proxy.stallOn(null); // not left armed for the next test, should this one fail early
    }
  });

  test('a revocation made in another process reaches this one after an outage (the key channel is subscribed again)', async () => {
    proxy.down();
    await until('503 while down', recovery_bound_ms, async () => (await balance()).statusCode === 503);
    proxy.up();
    await until('recovered', recovery_bound_ms, async () => (await balance()).statusCode === 200);
    assert.equal((await balance()).statusCode, 200, 'the key is cached again');
    const revoked = await gw.app.inject({ method: 'DELETE', url: `/admin/sellers/${seller.id}/keys/${seller.publicKey}`, headers: adminHeaders });
    assert.equal(revoked.statusCode, 204, revoked.body);
    await until('401 through the proxied gateway', 5_000, async () => (await balance()).statusCode === 401);
  });

  test('connections stay within the pool plus the listener under load through repeated outages', async () => {
    const other = await gw.createSeller();
    const load = (n: number) =>
      Promise.all(Array.from({ length: n }, () => app.inject({ method: 'GET', url: '/api/public/balance', headers: other.headers })));
    proxy.resetCounts();
    for (let round = 0; round < 3; round++) {
      await load(40);
      proxy.down();
      const during = await load(40);
      assert.ok(
        during.every((r) => r.statusCode === 503),
        during.map((r) => r.statusCode).join(','),
      );
      await new Promise((r) => setTimeout(r, 1_000));
      proxy.up();
      await until('recovered', recovery_bound_ms, async () => (await health()).statusCode === 200);
    }
    await load(40);
    assert.ok(proxy.maxOpen <= connections_max, `${proxy.maxOpen} connections open at once`);
  });
});
