import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Gateway, startGateway } from '../helpers/gateway.ts';

// The shared authentication test: every seller route and every operator route, found from the
// app's own route list, refuses missing and wrong credentials with 401 before anything else.
describe('every protected route answers 401 without valid credentials', () => {
  let gw: Gateway;
  let sellerHeaders: Record<string, string>;
  before(async () => {
    gw = await startGateway();
    sellerHeaders = (await gw.createSeller()).headers;
  });
  after(async () => {
    await gw.close();
  });

  const withIds = (url: string, id: string) => url.replace(/:[a-zA-Z]+/g, id);

  // biome-ignore lint/suspicious/noExplicitAny: light-my-request's json() is untyped
  function assert401(res: { statusCode: number; body: string; json(): any }, label: string) {
    assert.equal(res.statusCode, 401, `${label}: ${res.body}`);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['error', 'message'], label);
    assert.equal(body.error, 'Unauthorized');
  }

  test('seller routes (/api/...)', async () => {
    const routes = gw.app.routeList.filter((r) => r.url.startsWith('/api/'));
    assert.ok(routes.length >= 1, 'the app lists its seller routes');
    const wrongPairs: Record<string, string>[] = [
      {},
      { 'x-api-public-key': sellerHeaders['x-api-public-key']! },
      { 'x-api-private-key': sellerHeaders['x-api-private-key']! },
      { 'x-api-public-key': sellerHeaders['x-api-public-key']!, 'x-api-private-key': 'sk_wrong' },
      { 'x-api-public-key': 'pk_unknown', 'x-api-private-key': sellerHeaders['x-api-private-key']! },
      { 'x-api-public-key': '', 'x-api-private-key': '' },
      { 'x-api-public-key': `pk_${'x'.repeat(5000)}`, 'x-api-private-key': `sk_${'y'.repeat(5000)}` },
    ];
    for (const route of routes) {
      for (const headers of wrongPairs) {
        // A bad id with bad keys is 401, not 400 (CONTRACT §2); so is a bad body.
        for (const id of ['1', 'abc']) {
          const res = await gw.app.inject({
            method: route.method as 'GET',
            url: withIds(route.url, id),
            headers: { ...headers, 'content-type': 'application/json' },
            payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : '{not json',
          });
          assert401(res, `${route.method} ${route.url} ${JSON.stringify(Object.keys(headers))}`);
        }
      }
    }
  });

  test('operator routes (/admin/..., /metrics)', async () => {
    const routes = gw.app.routeList.filter((r) => r.url.startsWith('/admin/') || r.url === '/metrics');
    assert.ok(routes.length >= 6, `the app lists its operator routes: ${routes.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    const wrong: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: 'test-admin-token-0123456789abcdef' },
      { authorization: 'Basic dGVzdDp0ZXN0' },
      { authorization: 'Bearer ' },
      sellerHeaders,
    ];
    for (const route of routes) {
      for (const headers of wrong) {
        const res = await gw.app.inject({ method: route.method as 'GET', url: withIds(route.url, 'abc'), headers });
        assert401(res, `${route.method} ${route.url}`);
      }
    }
  });
});
