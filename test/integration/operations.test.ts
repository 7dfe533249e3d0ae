import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminHeaders, type Gateway, startGateway } from '../helpers/gateway.ts';

describe('health, OpenAPI, docs and metrics', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway();
  });
  after(async () => {
    await gw.close();
  });

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
    assert.equal(balance.$ref, '#/components/schemas/Balance');
    assert.deepEqual(Object.keys(doc.components.schemas.Balance.properties), ['available', 'blocked', 'total']);
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

    // Three more balance reads and one refusal: counts, cumulative buckets, a series per status.
    for (let i = 0; i < 3; i++) await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
    await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: { ...seller.headers, 'x-api-private-key': 'sk_wrong' } });
    const text = (await gw.app.inject({ method: 'GET', url: '/metrics', headers: adminHeaders })).body;
    const series = (suffix: string, status: number) =>
      text
        .split('\n')
        .filter(
          (l) =>
            l.startsWith(`http_request_duration_seconds_${suffix}{`) &&
            l.includes('route="/api/public/balance"') &&
            l.includes(`status_code="${status}"`),
        )
        .map((l) => Number(l.split(' ').pop()));
    assert.deepEqual(series('count', 200), [4]);
    assert.deepEqual(series('count', 401), [1]);
    const cumulative = series('bucket', 200);
    assert.equal(cumulative.length, 12, '11 bounds and +Inf');
    assert.ok(
      cumulative.every((v, i) => i === 0 || v >= cumulative[i - 1]!),
      'buckets are cumulative',
    );
    assert.equal(cumulative.at(-1), 4);
    assert.ok(series('sum', 200)[0]! > 0, `a positive duration sum for the 200s, got ${series('sum', 200)}`);
    assert.match(text, /# TYPE http_request_duration_seconds histogram/);
  });
});
