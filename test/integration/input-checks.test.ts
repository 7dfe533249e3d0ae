import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { type Json, pixExample } from '../helpers/fixtures.ts';
import { fund } from '../helpers/funding.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

type Res = { statusCode: number; headers: Record<string, unknown>; body: string };
const JSON_TYPE = 'application/json; charset=utf-8';

/** A 4xx in CONTRACT §10's shape: JSON with a string message, and (for a field) details naming it. */
function assertRefusal(
  res: Res,
  status: number,
  field?: string,
): { message: string; errorType?: string; details?: { field: string; message: string }[] } {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], JSON_TYPE, `Content-Type of a ${status}`);
  const body = JSON.parse(res.body);
  assert.equal(typeof body.message, 'string', res.body);
  assert.equal(body.code, undefined, 'no framework error code');
  assert.equal(body.statusCode, undefined, 'no framework status code');
  if (field)
    assert.ok(
      body.details?.some((d: { field: string }) => d.field === field),
      `details name ${field}: ${res.body}`,
    );
  return body;
}

describe('every input checked (CONTRACT §3, §10)', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  const inject = (o: InjectOptions) => gw.app.inject(o);

  before(async () => {
    gw = await startGateway();
    seller = await gw.createSeller();
  });
  after(async () => {
    await gw?.close();
  });

  async function paidSale(): Promise<number> {
    const created = await inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixExample() });
    const id = created.json().sale.id as number;
    const paid = await inject({
      method: 'POST',
      url: `/admin/transactions/${id}/events`,
      headers: adminHeaders,
      payload: { event: 'PAYMENT_CONFIRMED' },
    });
    assert.equal(paid.statusCode, 200, paid.body);
    return id;
  }

  test('an unknown field is a 400 naming it, and nothing changes: refund { reason }, seller and platform fee schedules', async () => {
    const id = await paidSale();
    const refund = await inject({
      method: 'POST',
      url: `/api/transactions/${id}/refund`,
      headers: seller.headers,
      payload: { amount: 500, reason: 'x' },
    });
    const unknown = assertRefusal(refund, 400, 'reason');
    assert.deepEqual(unknown.details, [{ field: 'reason', message: 'is not a known field (known: amount)' }]);
    const rotate = await inject({ method: 'POST', url: '/api/signing-secret/rotate', headers: seller.headers, payload: { now: true } });
    assert.deepEqual(assertRefusal(rotate, 400, 'now').details, [{ field: 'now', message: 'is not a known field: send no fields here' }]);
    const read = await inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers });
    assert.equal(read.json().status, 'PAGO', 'not refunded');

    const patch = await inject({ method: 'PATCH', url: `/admin/sellers/${seller.id}`, headers: adminHeaders, payload: { feeSchedule: { foo: 1 } } });
    assertRefusal(patch, 400, 'feeSchedule.foo');
    const sellerNow = await inject({ method: 'GET', url: `/admin/sellers/${seller.id}`, headers: adminHeaders });
    assert.equal(sellerNow.json().feeSchedule, null, 'still following the platform');

    const before = (await inject({ method: 'GET', url: '/admin/settings', headers: adminHeaders })).json();
    const settings = await inject({
      method: 'PATCH',
      url: '/admin/settings',
      headers: adminHeaders,
      payload: { feeSchedule: { PIX: { percent: -5 } } },
    });
    assertRefusal(settings, 400, 'feeSchedule.PIX');
    assert.deepEqual((await inject({ method: 'GET', url: '/admin/settings', headers: adminHeaders })).json(), before);

    const range = await inject({
      method: 'PATCH',
      url: '/admin/settings',
      headers: adminHeaders,
      payload: { feeSchedule: { pix: { percentBasisPoints: -5 } } },
    });
    const body = assertRefusal(range, 400, 'feeSchedule.pix.percentBasisPoints');
    assert.match(body.details![0]!.message, /from 0 to 10000/);
  });

  test('a POST that takes no body accepts none, an empty one or {} whatever its Content-Type; fields are refused', async () => {
    const cancel = async (headers: Record<string, string>, payload?: string) => {
      const created = await inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixExample() });
      return inject({
        method: 'POST',
        url: `/api/transactions/${created.json().sale.id}/cancel`,
        headers: { ...seller.headers, ...headers },
        payload,
      });
    };
    for (const [headers, payload] of [
      [{}, undefined],
      [{ 'content-type': 'application/json' }, ''],
      [{ 'content-type': 'text/plain' }, ''],
      [{ 'content-type': 'application/json' }, '{}'],
    ] as const) {
      const res = await cancel(headers, payload);
      assert.equal(res.statusCode, 200, `${JSON.stringify(headers)} ${JSON.stringify(payload)}: ${res.body}`);
      assert.equal(res.json().status, 'CANCELADO');
    }
    assertRefusal(await cancel({ 'content-type': 'application/json' }, '{"reason":"x"}'), 400, 'reason');
    assertRefusal(await cancel({ 'content-type': 'text/plain' }, 'cancel'), 415);
  });

  test('every error answer is JSON with its Content-Type: 400, 401, 403, 404, 413, 415, 422', async () => {
    const other = await gw.createSeller();
    const id = await paidSale();
    assertRefusal(await inject({ method: 'GET', url: '/api/transactions/abc', headers: seller.headers }), 400);
    assertRefusal(await inject({ method: 'GET', url: '/api/public/balance' }), 401);
    assertRefusal(await inject({ method: 'GET', url: `/api/transactions/${id}`, headers: other.headers }), 403);
    assertRefusal(await inject({ method: 'GET', url: '/api/transactions/999999999', headers: seller.headers }), 404);
    assertRefusal(await inject({ method: 'GET', url: '/nowhere' }), 404);
    const big = JSON.stringify({ ...pixExample(), customer: { name: 'x'.repeat(1024 * 1024), email: 'a@b.co' } });
    assertRefusal(
      await inject({ method: 'POST', url: '/api/sales', headers: { ...seller.headers, 'content-type': 'application/json' }, payload: big }),
      413,
    );
    assertRefusal(
      await inject({ method: 'POST', url: '/api/sales', headers: { ...seller.headers, 'content-type': 'text/xml' }, payload: '<a/>' }),
      415,
    );
    await fund(gw, seller.id, 50_000);
    const cashout = await inject({
      method: 'POST',
      url: '/api/public/cashout',
      headers: seller.headers,
      payload: { amount: 100000, pixKey: '52998224725' },
    });
    assertRefusal(cashout, 422);
  });

  test('a malformed URL is our 400, the URL not echoed; a NUL in a path parameter is a 400, not a 500', async () => {
    const bad = await inject({ method: 'GET', url: '/api/transactions/%FF', headers: seller.headers });
    const body = assertRefusal(bad, 400);
    assert.ok(!bad.body.includes('%FF'), bad.body);
    assert.equal(body.errorType, undefined);
    const nul = await inject({ method: 'DELETE', url: `/admin/sellers/${seller.id}/keys/%00`, headers: adminHeaders });
    assertRefusal(nul, 400);
    const odd = await inject({ method: 'DELETE', url: `/admin/sellers/${seller.id}/keys/pk_${'x'.repeat(500)}`, headers: adminHeaders });
    assertRefusal(odd, 400);
  });

  test('messages are written for people: bounds named, allowed values listed, one shape per endpoint', async () => {
    const limit = assertRefusal(await inject({ method: 'GET', url: '/api/transactions?limit=1000', headers: seller.headers }), 400, 'limit');
    assert.equal(limit.details![0]!.message, 'must be an integer from 1 to 100 (default 20)');
    const status = assertRefusal(await inject({ method: 'GET', url: '/api/transactions?status=PAID', headers: seller.headers }), 400, 'status');
    assert.match(status.details![0]!.message, /^must be one of PENDENTE, EM_PROCESSAMENTO, PAGO, /);
    const event = assertRefusal(
      await inject({ method: 'POST', url: '/admin/transactions/1/events', headers: adminHeaders, payload: { event: 'PAID' } }),
      400,
      'event',
    );
    assert.match(event.details![0]!.message, /^must be one of PAYMENT_CONFIRMED, /);

    const huge = pixExample();
    (huge.items as Json[])[0]!.unitPrice = 1e20;
    const price = assertRefusal(
      await inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: huge }),
      400,
      'items.0.unitPrice',
    );
    assert.equal(price.details!.find((d) => d.field === 'items.0.unitPrice')!.message, 'must be an integer of cents from 1 to 9999999999');

    const proto = await inject({
      method: 'POST',
      url: '/api/sales',
      headers: { ...seller.headers, 'content-type': 'application/json' },
      payload: '{"__proto__":{"x":1},"amount":1}',
    });
    const protoBody = assertRefusal(proto, 400, '__proto__');
    assert.match(protoBody.details![0]!.message, /__proto__/);
    const nested = await inject({
      method: 'POST',
      url: '/api/sales',
      headers: { ...seller.headers, 'content-type': 'application/json' },
      payload: '{"amount":1,"items":[{"title":"x","constructor":{"prototype":{"x":1}}}]}',
    });
    assertRefusal(nested, 400, 'items.0.constructor.prototype');

    const cpf = await inject({
      method: 'POST',
      url: '/api/public/cashout',
      headers: seller.headers,
      payload: { amount: 150, pixKey: '52998224724' },
    });
    const cpfBody = assertRefusal(cpf, 400, 'pixKey');
    assert.equal(cpfBody.errorType, 'INVALID_PIX_KEY');
    assert.equal((cpfBody.message.match(/pixKey/g) ?? []).length, 1, `named once: ${cpfBody.message}`);

    const digits = await inject({
      method: 'POST',
      url: '/api/public/cashout',
      headers: seller.headers,
      payload: { amount: '9'.repeat(1024 * 1024 - 100), pixKey: '52998224725' },
    });
    const digitsBody = assertRefusal(digits, 400, 'amount');
    assert.match(digitsBody.details![0]!.message, /at most 16 characters/);
  });
});
