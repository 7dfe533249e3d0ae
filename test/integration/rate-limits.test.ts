import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

// Rate limits of CONTRACT §2, on a gateway whose limiters run on a clock the test moves.

function manualClock() {
  let now = 1_000_000;
  return {
    clock: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: light-my-request's json() is untyped
type Res = { statusCode: number; headers: Record<string, unknown>; json(): any; body: string };

function assert429(res: Res, label: string): void {
  assert.equal(res.statusCode, 429, `${label}: ${res.body}`);
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^[1-9]\d*$/, `${label}: Retry-After is whole seconds ≥ 1`);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', label);
  const body = res.json();
  assert.deepEqual(Object.keys(body), ['message', 'errorType'], label);
  assert.equal(body.errorType, 'RATE_LIMITED');
  assert.equal(typeof body.message, 'string');
}

const badSellerKeys = { 'x-api-public-key': 'pk_nobody', 'x-api-private-key': 'sk_wrong' };

describe('failed authentications per client address', () => {
  const t = manualClock();
  let gw: Gateway;
  let seller: SellerKeys;
  before(async () => {
    gw = await startGateway({ env: { AUTH_FAILURES_PER_MINUTE: '20' }, rateLimitClock: t.clock });
    seller = await gw.createSeller();
  });
  after(async () => {
    await gw.close();
  });

  const balance = (remoteAddress: string, headers: Record<string, string>) =>
    gw.app.inject({ method: 'GET', url: '/api/public/balance', remoteAddress, headers });

  test('20 failures are 401; the 21st attempt is 429 even with correct keys; other addresses are unaffected', async () => {
    const attacker = '203.0.113.7';
    for (let i = 0; i < 20; i++) {
      const res = await balance(attacker, badSellerKeys);
      assert.equal(res.statusCode, 401, `failure ${i + 1} is still checked and refused: ${res.body}`);
    }
    const blocked = await balance(attacker, badSellerKeys);
    assert429(blocked, '21st failure');
    assert.equal(blocked.headers['retry-after'], '3', '20 a minute: one attempt back every 3 s');
    assert429(await balance(attacker, seller.headers), 'correct seller keys from a blocked address');
    assert429(
      await gw.app.inject({ method: 'GET', url: '/admin/settings', remoteAddress: attacker, headers: adminHeaders }),
      'correct operator token',
    );
    assert429(await gw.app.inject({ method: 'GET', url: '/metrics', remoteAddress: attacker, headers: adminHeaders }), '/metrics');

    const other = '198.51.100.9';
    assert.equal((await balance(other, seller.headers)).statusCode, 200);
    assert.equal((await balance(other, badSellerKeys)).statusCode, 401);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/health', remoteAddress: attacker })).statusCode, 200, 'open routes are not limited');
  });

  test('time gives attempts back at 20 a minute', async () => {
    const address = '203.0.113.8';
    for (let i = 0; i < 20; i++) assert.equal((await balance(address, badSellerKeys)).statusCode, 401);
    assert429(await balance(address, seller.headers), 'blocked');
    t.advance(2_999);
    assert429(await balance(address, seller.headers), 'still blocked just before the token');
    t.advance(1);
    assert.equal((await balance(address, seller.headers)).statusCode, 200);
    assert.equal((await balance(address, badSellerKeys)).statusCode, 401, 'the returned token pays for one more failure');
    assert429(await balance(address, badSellerKeys), 'and then none');
  });

  test('operator token failures count towards the same budget', async () => {
    const address = '203.0.113.9';
    for (let i = 0; i < 10; i++) assert.equal((await balance(address, badSellerKeys)).statusCode, 401);
    for (let i = 0; i < 10; i++) {
      const res = await gw.app.inject({ method: 'GET', url: '/admin/settings', remoteAddress: address, headers: { authorization: 'Bearer wrong' } });
      assert.equal(res.statusCode, 401);
    }
    assert429(await gw.app.inject({ method: 'GET', url: '/admin/settings', remoteAddress: address, headers: adminHeaders }), 'operator, 21st');
  });

  test('successful authentications consume nothing from the failure budget', async () => {
    const address = '203.0.113.10';
    for (let i = 0; i < 40; i++) assert.equal((await balance(address, seller.headers)).statusCode, 200);
    assert.equal((await balance(address, badSellerKeys)).statusCode, 401);
  });
});

describe('requests per seller key', () => {
  const t = manualClock();
  let gw: Gateway;
  let busy: SellerKeys;
  let quiet: SellerKeys;
  before(async () => {
    gw = await startGateway({ env: { RATE_LIMIT_PER_SECOND: '5', AUTH_FAILURES_PER_MINUTE: '20' }, rateLimitClock: t.clock });
    busy = await gw.createSeller({ email: 'busy@example.com' });
    quiet = await gw.createSeller({ email: 'quiet@example.com' });
  });
  after(async () => {
    await gw.close();
  });

  const balance = (keys: SellerKeys) => gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: keys.headers });

  test('a burst of twice the rate passes, the next request is 429, another seller is served', async () => {
    for (let i = 0; i < 10; i++) assert.equal((await balance(busy)).statusCode, 200, `request ${i + 1} of the burst`);
    const limited = await balance(busy);
    assert429(limited, 'over the burst');
    assert.equal(limited.headers['retry-after'], '1');
    assert.equal((await balance(quiet)).statusCode, 200);
    const list = await gw.app.inject({ method: 'GET', url: '/api/transactions', headers: busy.headers });
    assert429(list, 'every seller route shares the key budget');
  });

  test('the budget refills at the rate', async () => {
    t.advance(199);
    assert429(await balance(busy), 'under one token');
    t.advance(1);
    assert.equal((await balance(busy)).statusCode, 200, 'one token after 200 ms at 5 a second');
    assert429(await balance(busy), 'and only one');
    t.advance(60_000);
    for (let i = 0; i < 10; i++) assert.equal((await balance(busy)).statusCode, 200, 'a full burst again, never more');
    assert429(await balance(busy), 'capacity is twice the rate');
  });

  test('429s of a seller are not failed authentications of its address', async () => {
    for (let i = 0; i < 30; i++) assert.equal((await balance(busy)).statusCode, 429);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/admin/settings', headers: adminHeaders })).statusCode, 200);
  });
});

describe('rate limits on the real clock', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  before(async () => {
    gw = await startGateway({ env: { RATE_LIMIT_PER_SECOND: '10' } });
    seller = await gw.createSeller();
  });
  after(async () => {
    await gw.close();
  });

  test('a limited seller is served again after a short wait', async () => {
    const balance = () => gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
    let limited = false;
    // Bounded: the burst is 20, so 100 tries without a 429 means the limit is missing.
    for (let i = 0; i < 100 && !limited; i++) limited = (await balance()).statusCode === 429;
    assert.ok(limited, 'a 429 within 100 requests');
    await new Promise((r) => setTimeout(r, 250));
    assert.equal((await balance()).statusCode, 200);
  });
});
