// Retries, timeouts and the automatic Idempotency-Key, against the real gateway behind a proxy that
// drops, withholds or replaces its answers: a POST retried after a lost answer or a 5xx creates one
// sale; a 4xx other than 429 is never retried; a hung server ends in GatewayTimeoutError.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { retryAfterSeconds } from '../src/errors.ts';
import { backoffMs, DEFAULT_POLICY, neverSent, resolvePolicy } from '../src/http.ts';
import { GatewayError, GatewayNetworkError, GatewayTimeoutError, SellerClient } from '../src/index.ts';
import { type FaultProxy, startFaultProxy } from './fault-proxy.ts';
import { FAST, pixSale, type SdkBench, startBench } from './harness.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function rejection<E extends Error>(fn: () => Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof type, `expected a ${type.name}, got ${error}`);
    return error;
  }
  assert.fail(`expected a ${type.name}`);
}

describe('retries, timeouts and idempotency over a faulty network', () => {
  let bench: SdkBench;
  let proxy: FaultProxy;
  let viaProxy: SellerClient;
  let direct: SellerClient;

  before(async () => {
    bench = await startBench();
    proxy = await startFaultProxy(bench.baseUrl);
    const s = await bench.seller();
    direct = s.client;
    viaProxy = new SellerClient({ baseUrl: proxy.url, publicKey: s.keys.publicKey, privateKey: s.keys.privateKey, ...FAST, timeoutMs: 2_000 });
  });
  after(async () => {
    await proxy?.close();
    await bench?.close();
  });

  /** The seller's sales, through the gateway directly. */
  const sales = async () => (await direct.listTransactions({ limit: '100' })).data;
  const postsToSales = () => proxy.to('POST', '/api/sales');

  test('a POST whose answer is lost after the gateway committed: sent again with the same key, one sale', async () => {
    const before = (await sales()).length;
    proxy.seen.length = 0;
    proxy.plan('drop-after');
    const { sale } = await viaProxy.createSale(pixSale(1234));
    const posts = postsToSales();
    assert.equal(posts.length, 2, 'sent twice');
    assert.match(posts[0]!.idempotencyKey ?? '', UUID, 'a random UUID by default');
    assert.equal(posts[1]!.idempotencyKey, posts[0]!.idempotencyKey, 'the same key both times');
    const now = await sales();
    assert.equal(now.length, before + 1, 'one sale');
    assert.equal(now[0]!.id, sale.id, 'the answer is the first request’s sale, replayed');
  });

  test('a 503 in place of the gateway’s answer (it had committed): retried with the same key, one sale', async () => {
    const before = (await sales()).length;
    proxy.seen.length = 0;
    proxy.plan({ forwardThen: 503 });
    const { sale } = await viaProxy.createSale(pixSale(2345), { idempotencyKey: 'order-2345' });
    assert.deepEqual(
      postsToSales().map((p) => p.idempotencyKey),
      ['order-2345', 'order-2345'],
      'the caller’s key, on both attempts',
    );
    assert.equal((await sales()).length, before + 1);
    assert.equal((await direct.getTransaction(sale.id)).amount, 2345);
  });

  test('an attempt that times out after reaching the gateway: retried with the same key, one sale', async () => {
    const before = (await sales()).length;
    proxy.seen.length = 0;
    proxy.plan('forward-then-hang');
    const { sale } = await viaProxy.createSale(pixSale(3456), { timeoutMs: 500 });
    const posts = postsToSales();
    assert.equal(posts.length, 2);
    assert.equal(posts[1]!.idempotencyKey, posts[0]!.idempotencyKey);
    assert.equal((await sales()).length, before + 1);
    assert.equal((await sales())[0]!.id, sale.id);
  });

  test('5xx every time: the retries are bounded, then a GatewayError with the status, the key and the attempt count; no sale', async () => {
    const before = (await sales()).length;
    proxy.seen.length = 0;
    const unavailable = { status: 503, headers: { 'retry-after': '0' }, body: { message: 'down', errorType: 'SERVICE_UNAVAILABLE' } };
    proxy.plan(unavailable, unavailable, unavailable, unavailable, unavailable);
    const e = await rejection(() => viaProxy.createSale(pixSale(4567), { retries: 2 }), GatewayError);
    assert.deepEqual([e.status, e.errorType, e.attempts, e.retryAfterSeconds], [503, 'SERVICE_UNAVAILABLE', 3, 0]);
    const keys = postsToSales().map((p) => p.idempotencyKey);
    assert.equal(keys.length, 3, 'retries: 2 → three attempts');
    assert.equal(new Set(keys).size, 1);
    assert.equal(e.idempotencyKey, keys[0], 'the error names the key, to retry later with it');
    assert.equal((await sales()).length, before);
  });

  test('a POST the gateway does not deduplicate is not retried once it may have acted; it is on a 5xx', async () => {
    const webhooks = async () => (await direct.listWebhooks()).data;
    for (const w of await webhooks()) await direct.deleteWebhook(w.id);
    proxy.seen.length = 0;
    proxy.plan('drop-after');
    const e = await rejection(() => viaProxy.createWebhook({ url: 'http://127.0.0.1:9/a', types: ['TRANSACTION'] }), GatewayNetworkError);
    assert.equal(e.attempts, 1);
    assert.match(e.message, /retryAmbiguous/);
    assert.equal(proxy.to('POST', '/api/webhooks').length, 1, 'sent once');
    assert.equal((await webhooks()).length, 1, 'the gateway did create it: a retry would have made a second');

    proxy.seen.length = 0;
    proxy.plan({ status: 503 });
    const refused = await rejection(() => viaProxy.createWebhook({ url: 'http://127.0.0.1:9/b', types: ['TRANSACTION'] }), GatewayError);
    assert.equal(refused.status, 503);
    assert.equal(proxy.to('POST', '/api/webhooks').length, 1, 'a 5xx may follow a commit (a proxy answering): not retried');
    await viaProxy.createWebhook({ url: 'http://127.0.0.1:9/b', types: ['TRANSACTION'] }, { retries: 0 });
    assert.equal((await webhooks()).length, 2);

    proxy.seen.length = 0;
    proxy.plan('drop-after');
    await viaProxy.createWebhook({ url: 'http://127.0.0.1:9/c', types: ['TRANSACTION'] }, { retryAmbiguous: true });
    const posts = proxy.to('POST', '/api/webhooks');
    assert.equal(posts.length, 2, 'retryAmbiguous: true retries it anyway');
    assert.equal(posts[1]!.idempotencyKey, posts[0]!.idempotencyKey);
    assert.equal((await webhooks()).length, 4, 'and, the key not being kept for this endpoint, it was done twice');
  });

  test('a GET is retried on 500 and 502 too', async () => {
    proxy.seen.length = 0;
    proxy.plan({ status: 500 }, { status: 502 });
    const balance = await viaProxy.getBalance();
    assert.deepEqual(balance, { available: 0, blocked: 0, total: 0 });
    assert.equal(proxy.to('GET', '/api/public/balance').length, 3);
  });

  test('a DELETE is retried after a network failure; when the lost attempt had done it, the retry answers 404', async () => {
    const hook = await direct.createWebhook({ url: 'http://127.0.0.1:9/x', types: ['TRANSACTION'] });
    proxy.seen.length = 0;
    proxy.plan('drop-before');
    await viaProxy.deleteWebhook(hook.id);
    assert.equal(proxy.to('DELETE', `/api/webhooks/${hook.id}`).length, 2);
    assert.ok(!(await direct.listWebhooks()).data.some((w) => w.id === hook.id));

    const other = await direct.createWebhook({ url: 'http://127.0.0.1:9/y', types: ['TRANSACTION'] });
    proxy.plan('drop-after');
    const e = await rejection(() => viaProxy.deleteWebhook(other.id), GatewayError);
    assert.deepEqual([e.status, e.attempts], [404, 2]);
    assert.ok(!(await direct.listWebhooks()).data.some((w) => w.id === other.id));
  });

  test('a 4xx other than 429 is never retried', async () => {
    proxy.seen.length = 0;
    const bad = await rejection(() => viaProxy.createSale({ ...pixSale(100), amount: 99 }), GatewayError);
    assert.deepEqual([bad.status, bad.errorType, bad.attempts], [400, 'VALIDATION_ERROR', 1]);
    proxy.plan({ status: 409, body: { message: 'busy', errorType: 'IDEMPOTENCY_KEY_IN_USE' } });
    const busy = await rejection(() => viaProxy.getBalance(), GatewayError);
    assert.deepEqual([busy.status, busy.errorType], [409, 'IDEMPOTENCY_KEY_IN_USE']);
    const missing = await rejection(() => viaProxy.getTransaction(99_999_999), GatewayError);
    assert.equal(missing.status, 404);
    assert.equal(proxy.seen.length, 3, 'one request each');
  });

  test('a 429 waits for its Retry-After, then retries; a Retry-After beyond maxRetryAfterMs is returned at once', async () => {
    proxy.seen.length = 0;
    const limited = (seconds: string) => ({
      status: 429,
      headers: { 'retry-after': seconds },
      body: { message: 'slow down', errorType: 'RATE_LIMITED' },
    });
    proxy.plan(limited('1'));
    assert.equal((await viaProxy.getBalance()).total, 0);
    assert.equal(proxy.seen.length, 2);

    proxy.seen.length = 0;
    proxy.plan(limited('3600'));
    const e = await rejection(() => viaProxy.getBalance(), GatewayError);
    assert.deepEqual([e.status, e.errorType, e.retryAfterSeconds, e.attempts], [429, 'RATE_LIMITED', 3600, 1]);
    assert.equal(proxy.seen.length, 1);
  });

  test('connections dropped every time: a GatewayNetworkError after the bounded attempts, the same key on each', async () => {
    proxy.seen.length = 0;
    proxy.plan('drop-before', 'drop-before', 'drop-before');
    const e = await rejection(() => viaProxy.createSale(pixSale(5678), { retries: 2 }), GatewayNetworkError);
    assert.equal(e instanceof GatewayTimeoutError, false);
    assert.deepEqual([e.timedOut, e.attempts, e.method], [false, 3, 'POST']);
    const keys = postsToSales().map((p) => p.idempotencyKey);
    assert.deepEqual(keys, [e.idempotencyKey, e.idempotencyKey, e.idempotencyKey]);
  });

  test('nothing listening: retried (nothing was sent, even a POST), then a GatewayNetworkError', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const c = new SellerClient({ baseUrl: `http://127.0.0.1:${port}`, publicKey: 'pk_x', privateKey: 'sk_x', ...FAST, retries: 1 });
    const e = await rejection(() => c.getBalance(), GatewayNetworkError);
    assert.equal(e.attempts, 2);
    assert.match(e.message, /ECONNREFUSED/);
    const post = await rejection(() => c.createWebhook({ url: 'http://127.0.0.1:9/x', types: ['TRANSACTION'] }), GatewayNetworkError);
    assert.equal(post.attempts, 2);
  });

  test('a body that stalls midway is cut by the same time limit', async () => {
    proxy.seen.length = 0;
    proxy.plan('stall-body', 'stall-body');
    const e = await rejection(() => viaProxy.getBalance({ timeoutMs: 200, retries: 1 }), GatewayTimeoutError);
    assert.deepEqual([e.timedOut, e.attempts], [true, 2]);
  });

  test('the caller’s AbortSignal ends the call at once, without a retry', async () => {
    proxy.seen.length = 0;
    proxy.plan('hang', 'hang');
    const controller = new AbortController();
    const call = viaProxy.createSale(pixSale(6789), { signal: controller.signal, timeoutMs: 10_000 });
    for (let i = 0; i < 200 && proxy.seen.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await assert.rejects(call, (e: Error) => e.name === 'AbortError');
    assert.equal(proxy.seen.length, 1);
    proxy.plan();
  });

  test('a signal aborted before the call: nothing is sent', async () => {
    proxy.seen.length = 0;
    await assert.rejects(viaProxy.getBalance({ signal: AbortSignal.abort() }), (e: Error) => e.name === 'AbortError');
    assert.equal(proxy.seen.length, 0);
  });

  test('retries: 0 turns retrying off for one call', async () => {
    proxy.seen.length = 0;
    proxy.plan({ status: 500 });
    const e = await rejection(() => viaProxy.getBalance({ retries: 0 }), GatewayError);
    assert.deepEqual([e.status, e.attempts], [500, 1]);
  });
});

describe('a server that never answers', () => {
  let server: Server;
  let url: string;
  const received: (string | undefined)[] = [];
  before(async () => {
    server = createServer((req) => {
      received.push(req.headers['idempotency-key'] as string | undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('each attempt ends at timeoutMs; after the retries a GatewayTimeoutError naming the key', async () => {
    const c = new SellerClient({ baseUrl: url, publicKey: 'pk_x', privateKey: 'sk_x', ...FAST, timeoutMs: 150, retries: 2 });
    const e = await rejection(() => c.createSale(pixSale(100), { idempotencyKey: 'hung-1' }), GatewayTimeoutError);
    assert.deepEqual([e.timedOut, e.attempts, e.idempotencyKey, e.method], [true, 3, 'hung-1', 'POST']);
    assert.ok(e instanceof GatewayNetworkError, 'a timeout is a network failure too');
    assert.deepEqual(received, ['hung-1', 'hung-1', 'hung-1']);
  });
});

describe('the retry policy', () => {
  test('backoff doubles from retryBaseDelayMs up to retryMaxDelayMs, with jitter between half and all of it', () => {
    const p = resolvePolicy({ retryBaseDelayMs: 100, retryMaxDelayMs: 1_000 });
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => backoffMs(n, p, () => 0)),
      [50, 100, 200, 400, 500],
    );
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => backoffMs(n, p, () => 1)),
      [100, 200, 400, 800, 1_000],
    );
  });

  test('defaults, overrides and refused values', () => {
    assert.deepEqual(resolvePolicy({}), DEFAULT_POLICY);
    assert.equal(resolvePolicy({ retries: 5 }, { retries: 1 }).retries, 1);
    assert.equal(resolvePolicy({ retries: 5 }, { retries: undefined }).retries, 5);
    assert.throws(() => resolvePolicy({ retries: -1 }), RangeError);
    assert.throws(() => resolvePolicy({ retries: 1.5 }), RangeError);
    assert.throws(() => resolvePolicy({ timeoutMs: 0 }), RangeError);
    assert.throws(() => new SellerClient({ baseUrl: 'http://x', publicKey: 'a', privateKey: 'b', timeoutMs: Number.NaN }), RangeError);
    assert.throws(() => new SellerClient({ baseUrl: 'ftp://x', publicKey: 'a', privateKey: 'b' }), TypeError);
  });

  test('neverSent: connection refused or unresolved, not a reset or a timeout', () => {
    const failed = (cause: unknown) => new TypeError('fetch failed', { cause });
    const coded = (code: string) => Object.assign(new Error(code), { code });
    assert.equal(neverSent(failed(coded('ECONNREFUSED'))), true);
    assert.equal(neverSent(failed(coded('ENOTFOUND'))), true);
    assert.equal(neverSent(failed(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]))), true);
    assert.equal(neverSent(failed(new AggregateError([coded('ECONNREFUSED'), coded('ECONNRESET')]))), false);
    assert.equal(neverSent(failed(coded('ECONNRESET'))), false);
    assert.equal(neverSent(failed(coded('UND_ERR_SOCKET'))), false);
    assert.equal(neverSent(new Error('timeout')), false);
  });

  test('Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-20T14:00:00Z');
    assert.equal(retryAfterSeconds('7', now), 7);
    assert.equal(retryAfterSeconds('Fri, 20 Nov 2026 14:00:30 GMT', now), 30);
    assert.equal(retryAfterSeconds('Fri, 20 Nov 2026 13:00:00 GMT', now), 0);
    assert.equal(retryAfterSeconds('soon', now), undefined);
    assert.equal(retryAfterSeconds(null, now), undefined);
  });
});
