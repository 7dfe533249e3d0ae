// Nobody in (CONTRACT §1 and §12), attacked through real HTTP: logins racing past the account's
// lock, one address guessing across accounts, a login flood against the hashing, an old invite
// used after a newer one, sessions outliving a password reset, cookies behind an HTTPS proxy, and a
// seller's webhook aimed inside the network once a rail is real.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { adminHeaders, type Gateway, startGateway } from '../helpers/gateway.ts';

const PASSWORD = 'senha-de-teste-longa';
const WRONG = 'errada-errada-errada';

interface Panel {
  gw: Gateway;
  base: string;
}

/** A listening gateway; its rate limiters' clock stands still (a bucket refills only when a test says). */
async function startPanel(env: Record<string, string> = {}): Promise<Panel> {
  const gw = await startGateway({ env, rateLimitClock: () => 0 });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  return { gw, base: `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}` };
}

/** A seller with a panel account of this e-mail and PASSWORD. */
async function account(p: Panel, email: string): Promise<number> {
  const seller = await p.gw.createSeller({ name: `Loja ${email}`, email });
  const token = await invite(p, seller.id);
  const accepted = await post(p, `/painel/convite/${token}`, { senha: PASSWORD, confirmacao: PASSWORD });
  assert.equal(accepted.status, 303);
  return seller.id;
}

async function invite(p: Panel, sellerId: number): Promise<string> {
  const res = await p.gw.app.inject({ method: 'POST', url: `/admin/sellers/${sellerId}/panel-invites`, headers: adminHeaders });
  assert.equal(res.statusCode, 201, res.body);
  return new URL(res.json().url).pathname.split('/').pop()!;
}

function post(p: Panel, path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${p.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
}

/** The login form's CSRF token (its cookie holds the same value). */
async function loginCsrf(p: Panel): Promise<string> {
  const res = await fetch(`${p.base}/painel/entrar`, { signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('painel_csrf='));
  assert.ok(cookie, 'the login page sets its CSRF cookie');
  return cookie.split(';')[0]!.slice('painel_csrf='.length);
}

async function login(p: Panel, csrf: string, email: string, password: string, headers: Record<string, string> = {}) {
  const res = await post(p, '/painel/entrar', { csrf, email, senha: password }, { cookie: `painel_csrf=${csrf}`, ...headers });
  const body = await res.text();
  return { status: res.status, body, retryAfter: res.headers.get('retry-after'), cookies: res.headers.getSetCookie() };
}

const failuresOf = async (p: Panel, sellerId: number) =>
  (await p.gw.ctx.db.query<{ failures: number }>('SELECT failures FROM panel_accounts WHERE seller_id = $1', [sellerId])).rows[0]!.failures;

describe('the account lock under concurrency', () => {
  let p: Panel;
  before(async () => {
    p = await startPanel();
  });
  after(async () => {
    await p?.gw.close();
  });

  test('30 wrong passwords at once: at most 5 are checked, the rest wait; then 29 wrong and the right one all wait', async () => {
    const id = await account(p, 'corrida@example.com');
    const csrf = await loginCsrf(p);
    const first = await Promise.all(Array.from({ length: 30 }, () => login(p, csrf, 'corrida@example.com', WRONG)));
    const statuses = first.map((r) => r.status);
    const checked = statuses.filter((s) => s === 401).length;
    assert.ok(checked <= 5, statuses.join(' '));
    assert.deepEqual(
      statuses.filter((s) => s !== 401 && s !== 429),
      [],
      'every other answer is a wait',
    );
    assert.equal(await failuresOf(p, id), checked, 'each check counted, none more');
    // Those turned away by the hashing pool (a loaded machine) were not counted: the rest of the five, one by one.
    for (let i = checked; i < 5; i++) assert.equal((await login(p, csrf, 'corrida@example.com', WRONG)).status, 401);
    assert.equal(await failuresOf(p, id), 5);

    const second = await Promise.all(Array.from({ length: 30 }, (_, i) => login(p, csrf, 'corrida@example.com', i === 17 ? PASSWORD : WRONG)));
    assert.deepEqual(new Set(second.map((r) => r.status)), new Set([429]), 'locked: even the right password waits');
    assert.ok(
      second.every((r) => Number(r.retryAfter) > 60),
      'told to come back when the window ends',
    );
    assert.ok(
      second.every((r) => !r.cookies.some((c) => c.includes('painel_sessao'))),
      'no session given',
    );
  });
});

describe('failed logins per client address', () => {
  test('one address: 20 failures a minute across accounts, then 429; a success gives its try back', async () => {
    const p = await startPanel({ AUTH_FAILURES_PER_MINUTE: '20' });
    try {
      await account(p, 'certa@example.com');
      const csrf = await loginCsrf(p);
      const ok = await login(p, csrf, 'certa@example.com', PASSWORD);
      assert.equal(ok.status, 303, 'a right login');
      // One password tried against many e-mails, each a different account (or none).
      for (let i = 0; i < 20; i++) assert.equal((await login(p, csrf, `alvo${i}@example.com`, WRONG)).status, 401, `try ${i + 1}`);
      const blocked = await login(p, csrf, 'alvo20@example.com', WRONG);
      assert.equal(blocked.status, 429);
      assert.ok(Number(blocked.retryAfter) >= 1);
      assert.match(blocked.body, /Muitas tentativas erradas deste endereço/);
      // Without TRUST_PROXY a forwarded address is the client's word, not believed.
      const forged = await login(p, csrf, 'alvo21@example.com', WRONG, { 'x-forwarded-for': '198.51.100.9' });
      assert.equal(forged.status, 429);
      // The API's failed authentications count in the same bucket.
      const api = await fetch(`${p.base}/api/public/balance`, { headers: { 'x-api-public-key': 'pk', 'x-api-private-key': 'sk' } });
      assert.equal(api.status, 429);
    } finally {
      await p.gw.close();
    }
  });

  test('behind a trusted proxy the limit counts each real client', async () => {
    const p = await startPanel({ AUTH_FAILURES_PER_MINUTE: '20', TRUST_PROXY: '127.0.0.1' });
    try {
      const csrf = await loginCsrf(p);
      const from = (ip: string) => ({ 'x-forwarded-for': ip });
      for (let i = 0; i < 20; i++) assert.equal((await login(p, csrf, `x${i}@example.com`, WRONG, from('203.0.113.7'))).status, 401);
      assert.equal((await login(p, csrf, 'x@example.com', WRONG, from('203.0.113.7'))).status, 429, 'this client is over');
      assert.equal((await login(p, csrf, 'x@example.com', WRONG, from('203.0.113.8'))).status, 401, 'another client is not');
    } finally {
      await p.gw.close();
    }
  });
});

describe('a login flood', () => {
  test('logins beyond what the hashing pool takes are told to come back (429), never piling up', async () => {
    const p = await startPanel({ TRUST_PROXY: 'true' });
    try {
      await account(p, 'alvo@example.com');
      const csrf = await loginCsrf(p);
      // Each from its own address, as a botnet would: only the pool stands in the way.
      const flood = await Promise.all(
        Array.from({ length: 200 }, (_, i) => login(p, csrf, `flood${i}@example.com`, WRONG, { 'x-forwarded-for': `198.18.${i >> 8}.${i & 255}` })),
      );
      const busy = flood.filter((r) => r.status === 429);
      assert.ok(busy.length > 0, 'some were turned away');
      assert.ok(
        busy.every((r) => r.retryAfter === '1' && /Muitos acessos ao mesmo tempo/.test(r.body)),
        'told to come back in a second',
      );
      assert.deepEqual(
        flood.filter((r) => r.status !== 429 && r.status !== 401).map((r) => r.status),
        [],
      );
      // Once the flood is over, the owner logs in.
      assert.equal((await login(p, csrf, 'alvo@example.com', PASSWORD)).status, 303);
    } finally {
      await p.gw.close();
    }
  });
});

describe('invites and sessions', () => {
  let p: Panel;
  before(async () => {
    p = await startPanel();
  });
  after(async () => {
    await p?.gw.close();
  });

  test('a new invite retires the older unused ones', async () => {
    const seller = await p.gw.createSeller({ name: 'Loja Convite', email: 'convite@example.com' });
    const older = await invite(p, seller.id);
    const newer = await invite(p, seller.id);
    const page = await fetch(`${p.base}/painel/convite/${older}`);
    assert.equal(page.status, 404, 'the older link is gone');
    const used = await post(p, `/painel/convite/${older}`, { senha: PASSWORD, confirmacao: PASSWORD });
    assert.equal(used.status, 404);
    assert.equal((await post(p, `/painel/convite/${newer}`, { senha: PASSWORD, confirmacao: PASSWORD })).status, 303);
  });

  test('accepting an invite (a password reset) ends every session of the account', async () => {
    const id = await account(p, 'reset@example.com');
    const csrf = await loginCsrf(p);
    const logged = await login(p, csrf, 'reset@example.com', PASSWORD);
    const session = logged.cookies.find((c) => c.startsWith('painel_sessao='))!.split(';')[0]!;
    const home = () => fetch(`${p.base}/painel`, { headers: { cookie: session }, redirect: 'manual' });
    assert.equal((await home()).status, 200, 'the session works');

    const token = await invite(p, id);
    const reset = await post(p, `/painel/convite/${token}`, { senha: `${PASSWORD}-nova`, confirmacao: `${PASSWORD}-nova` });
    assert.equal(reset.status, 303);
    const after = await home();
    assert.equal(after.status, 303, 'the old session is over');
    assert.equal(after.headers.get('location'), '/painel/entrar');
    assert.equal((await login(p, csrf, 'reset@example.com', PASSWORD)).status, 401, 'the old password is gone');
  });
});

describe('the session cookie behind a proxy', () => {
  const sessionCookie = async (env: Record<string, string>) => {
    const p = await startPanel(env);
    try {
      await account(p, 'cookie@example.com');
      const csrf = await loginCsrf(p);
      const res = await login(p, csrf, 'cookie@example.com', PASSWORD, { 'x-forwarded-proto': 'https' });
      assert.equal(res.status, 303);
      return res.cookies.find((c) => /painel_sessao=/.test(c))!;
    } finally {
      await p.gw.close();
    }
  };

  test('TRUST_PROXY and X-Forwarded-Proto: https → __Host- and Secure', async () => {
    const cookie = await sessionCookie({ TRUST_PROXY: '127.0.0.1' });
    assert.match(cookie, /^__Host-painel_sessao=/);
    assert.match(cookie, /; Secure/);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; Path=\//);
    assert.doesNotMatch(cookie, /Domain=/);
  });

  test('without TRUST_PROXY the header is not believed: a plain cookie', async () => {
    const cookie = await sessionCookie({});
    assert.match(cookie, /^painel_sessao=/);
    assert.doesNotMatch(cookie, /Secure/);
  });
});

describe('webhooks with a real rail', () => {
  let internal: Server;
  let hits = 0;
  before(async () => {
    internal = createServer((_req, res) => {
      hits++;
      res.end('internal');
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => internal.close(resolve));
  });

  test('CARD_PROVIDER=adyen: a webhook to a loopback address is refused, nothing is sent to it', async () => {
    const gw = await startGateway({
      env: {
        CARD_PROVIDER: 'adyen',
        ADYEN_API_KEY: 'test-key',
        ADYEN_MERCHANT_ACCOUNT: 'TestMerchant',
        ADYEN_CHECKOUT_URL: 'http://127.0.0.1:9/v71',
        ADYEN_HMAC_KEY: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
        ADYEN_NOTIFICATION_USERNAME: 'adyen',
        ADYEN_NOTIFICATION_PASSWORD: 'notification-password',
      },
    });
    try {
      const seller = await gw.createSeller();
      const url = `http://127.0.0.1:${(internal.address() as AddressInfo).port}/internal`;
      const res = await gw.app.inject({ method: 'POST', url: '/api/webhooks', headers: seller.headers, payload: { url, types: ['TRANSACTION'] } });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().errorType, 'VALIDATION_ERROR');
      assert.match(res.body, /url/i);
      assert.equal(hits, 0);
    } finally {
      await gw.close();
    }
  });
});
