import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { adminHeaders, startGateway, type Gateway } from '../helpers/gateway.ts';

describe('health, OpenAPI, docs and metrics', () => {
  let gw: Gateway;
  before(async () => { gw = await startGateway(); });
  after(async () => { await gw.close(); });

  test('GET /health pings the database', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/health' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'ok' });
  });

  test('GET /openapi.json is OpenAPI 3.1 with the public and operator paths', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    for (const path of ['/api/public/balance', '/admin/sellers', '/admin/sellers/{id}', '/admin/ledger/verify']) {
      assert.ok(doc.paths[path], `missing ${path}`);
    }
    const balance = doc.paths['/api/public/balance'].get.responses['200'].content['application/json'].schema;
    assert.deepEqual(Object.keys(balance.properties), ['available', 'blocked', 'total']);
  });

  test('GET /docs renders a page', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<html/i);
  });

  test('GET /metrics needs the operator token and shows request durations by route and status', async () => {
    const seller = await gw.createSeller();
    await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
    assert.equal((await gw.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
    const res = await gw.app.inject({ method: 'GET', url: '/metrics', headers: adminHeaders });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /text\/plain/);
    assert.match(res.body, /http_request_duration_seconds_bucket\{[^}]*route="\/api\/public\/balance"[^}]*status_code="200"/);
    assert.match(res.body, /process_cpu_user_seconds_total/);
  });
});
