/**
 * The embedded PSP over HTTP, as the api-pix connector sees it: every answer and every callback is
 * checked against the BCB's API Pix file (test/helpers/api-pix-spec.ts), and so is every request
 * the test means to be valid. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { createPublicKey, type JsonWebKey, verify } from 'node:crypto';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { after, before, describe, test } from 'node:test';
import type { Pix, SandboxPsp, SandboxPspOptions } from '@pagar/sandbox-psp';
import { hasError, isDynamicPix, parsePix } from 'pix-utils';
import { request } from 'undici';
import type { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openDb } from '../../src/db/open.ts';
import { verifyBrCodeCrc } from '../../src/domain/pix-brcode.ts';
import { createApiPixClient } from '../../src/providers/api-pix/client/api-pix-client.ts';
// The location payload is served outside the API root, where the harness does not look: its schema is checked here directly.
import { apiPixDocument, describe as describeErrors, forDirection, validatorFor } from '../helpers/api-pix-document.ts';
import { checkApiPixCallback, checkApiPixRequest, checkApiPixResponse, startValidatingProxy } from '../helpers/api-pix-spec.ts';
import { freshDatabase, type TestDatabase } from '../helpers/databases.ts';

// The embedded PSP is a package loaded on demand, as the gateway loads it (providers/sandbox/embedded-psp.ts).
const { dynamicBrCode, startSandboxPsp } = await import('@pagar/sandbox-psp');

import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const RECEIVER_KEY = '123e4567-e12b-12d1-a456-426655440000';
const CLIENT_ID = 'gateway-client';
const CLIENT_SECRET = 'sandbox secret+with/odd=chars';
const E2E_RE = /^E12345678\d{12}[a-zA-Z0-9]{11}$/;
const RTR_RE = /^D12345678\d{12}[a-zA-Z0-9]{11}$/;
const WAIT_MS = 5_000;

// The PSP's clock: moved by hand, so every Pix has its own horario and pages are deterministic.
let nowMs = Date.parse('2026-03-02T15:00:00.000Z');
const clock = { now: () => new Date(nowMs) };
const tick = (ms = 1_000) => {
  nowMs += ms;
};

let database: TestDatabase;
let db: Db;
let psp: SandboxPsp;
let receiver: Receiver;
let token: string;
let txidSeq = 0;

const newTxid = () => `sandboxPspTest${String(++txidSeq).padStart(4, '0')}${'x'.repeat(12)}`;
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id).replaceAll('%20', '+')}:${encodeURIComponent(secret).replaceAll('%20', '+')}`).toString('base64')}`;

function start(extra: Partial<SandboxPspOptions> = {}): Promise<SandboxPsp> {
  return startSandboxPsp({
    db,
    receiverKey: RECEIVER_KEY,
    merchantName: 'Loja Sandbox',
    merchantCity: 'São Paulo',
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    clock,
    // Settled by settleDevolucoes() unless a test says otherwise.
    devolucaoDelayMs: 60_000,
    callbackRetryDelaysMs: [20, 40],
    ...extra,
  });
}

async function tokenRequest(form: string, authorization?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (authorization) headers.authorization = authorization;
  const res = await request(psp.tokenUrl, { method: 'POST', headers, body: form });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as Record<string, unknown> };
}

async function fetchToken(scope?: string): Promise<string> {
  const form = `grant_type=client_credentials${scope ? `&scope=${encodeURIComponent(scope)}` : ''}`;
  const res = await tokenRequest(form, basic(CLIENT_ID, CLIENT_SECRET));
  assert.equal(res.status, 200, `token request failed: ${JSON.stringify(res.body)}`);
  return res.body.access_token as string;
}

interface CallOptions {
  body?: unknown;
  rawBody?: string;
  bearer?: string | null;
  /** false for requests made invalid on purpose: only the answer is checked then. */
  validRequest?: boolean;
  /** false for answers the file does not document (401; a 400 the file lists among its errors but not in the operation). */
  checkAnswer?: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field in the assertions
type Json = any;

/** One API Pix call; the request (unless made invalid on purpose) and the answer are checked against the file. */
async function api(method: string, path: string, o: CallOptions = {}): Promise<{ status: number; body: Json; contentType: string }> {
  const headers: Record<string, string> = {};
  const bearer = o.bearer === undefined ? token : o.bearer;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  const payload = o.rawBody ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  if (o.validRequest !== false) {
    const violations = checkApiPixRequest({ method, path, headers, body: o.body });
    assert.deepEqual(violations, [], `${method} ${path}: the request breaks the file: ${violations.join('; ')}`);
  }
  const res = await request(`${psp.apiUrl}${path}`, { method: method as 'GET', headers, body: payload });
  const text = await res.body.text();
  const contentType = String(res.headers['content-type'] ?? '');
  const body = text ? JSON.parse(text) : undefined;
  if (o.checkAnswer !== false) {
    const violations = checkApiPixResponse({ method, path, status: res.statusCode, body, contentType: contentType || undefined });
    assert.deepEqual(violations, [], `${method} ${path} → ${res.statusCode}: the answer breaks the file: ${violations.join('; ')}`);
  }
  return { status: res.statusCode, body, contentType };
}

function assertProblem(res: { status: number; body: Json; contentType: string }, status: number, tipo: string, propriedade?: string): void {
  assert.equal(res.status, status, `expected ${status} ${tipo}, got ${res.status} ${JSON.stringify(res.body)}`);
  assert.match(res.contentType, /^application\/problem\+json/, `a problem is application/problem+json, got ${res.contentType}`);
  assert.equal(res.body.type, `https://pix.bcb.gov.br/api/v2/error/${tipo}`);
  assert.equal(res.body.status, status);
  if (propriedade) {
    const named = (res.body.violacoes ?? []).map((v: { propriedade: string }) => v.propriedade);
    assert.ok(named.includes(propriedade), `violacoes should name ${propriedade}: ${JSON.stringify(res.body.violacoes)}`);
  }
}

const cobBody = (original: string, extra: Record<string, unknown> = {}) => ({
  calendario: { expiracao: 3600 },
  valor: { original },
  chave: RECEIVER_KEY,
  ...extra,
});

async function createCob(original: string, extra: Record<string, unknown> = {}): Promise<Json> {
  const txid = newTxid();
  const res = await api('PUT', `/cob/${txid}`, { body: cobBody(original, extra) });
  assert.equal(res.status, 201, `PUT /cob failed: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Callbacks received so far for one Pix, each body checked against the file. */
function callbacksFor(e2eid: string, path = '/hooks/pix'): Pix[] {
  return receiver
    .requestsTo(path)
    .flatMap((r) => {
      assert.match(String(r.headers['content-type']), /^application\/json/, 'callbacks are application/json');
      const body = JSON.parse(r.body.toString('utf8'));
      const violations = checkApiPixCallback(body);
      assert.deepEqual(violations, [], `the callback breaks the file: ${violations.join('; ')}`);
      return body.pix as Pix[];
    })
    .filter((p) => p.endToEndId === e2eid);
}

async function registerWebhook(path: string): Promise<void> {
  const res = await api('PUT', `/webhook/${RECEIVER_KEY}`, { body: { webhookUrl: receiver.url(path) } });
  assert.equal(res.status, 200, `PUT /webhook failed: ${JSON.stringify(res.body)}`);
}

async function getText(url: string): Promise<{ status: number; contentType: string; text: string; cacheControl: string }> {
  const res = await request(url);
  return {
    status: res.statusCode,
    contentType: String(res.headers['content-type'] ?? ''),
    cacheControl: String(res.headers['cache-control'] ?? ''),
    text: await res.body.text(),
  };
}

before(async () => {
  database = await freshDatabase();
  db = await openDb(database.url, tmpdir());
  await migrate(db);
  receiver = await startReceiver();
  psp = await start();
  token = await fetchToken();
  await registerWebhook('/hooks');
});

after(async () => {
  await psp?.close();
  await receiver?.close();
  await db?.close();
  await database?.drop();
});

test('the dynamic BR Code builder reproduces the BRAZIL.md vector', () => {
  const code = dynamicBrCode('pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25', { name: 'FULANO DE TAL', city: 'BRASILIA' });
  assert.equal(
    code,
    '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca255204000053039865802BR5913FULANO DE TAL6008BRASILIA62070503***630493EF',
  );
});

describe('slow clients', () => {
  test('a body sent a byte every 300 ms is cut within the request timeout', async () => {
    const slow = await start({ requestTimeoutMs: 1_500 });
    const { hostname, port } = new URL(slow.tokenUrl);
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.on('error', () => {});
    const startedMs = performance.now();
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - startedMs)));
    socket.write('POST /oauth/token HTTP/1.1\r\nHost: psp\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n');
    // Bounded: at most 30 bytes, and stopped by the close.
    let sent = 0;
    const trickle = setInterval(() => {
      if (socket.destroyed || sent++ >= 30) return clearInterval(trickle);
      socket.write('g');
    }, 300);
    try {
      const ms = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 8_000))]);
      assert.ok(ms !== null, 'still open after 8 s');
      assert.ok(ms >= 1_400 && ms <= 1_500 + 3_000, `cut after ${Math.round(ms)} ms`);
    } finally {
      clearInterval(trickle);
      socket.destroy();
      await slow.close();
    }
  });
});

describe('OAuth2 client credentials', () => {
  test('the token endpoint checks the client and the grant', async () => {
    const none = await tokenRequest('grant_type=client_credentials');
    assert.equal(none.status, 401, 'no client authentication → 401');
    assert.equal(none.body.error, 'invalid_client');
    assert.match(String(none.headers['www-authenticate']), /^Basic/, 'a 401 names the Basic scheme');
    const wrong = await tokenRequest('grant_type=client_credentials', basic(CLIENT_ID, 'not the secret'));
    assert.equal(wrong.status, 401, 'a wrong secret → 401');
    const grant = await tokenRequest('grant_type=password', basic(CLIENT_ID, CLIENT_SECRET));
    assert.equal(grant.status, 400, 'another grant → 400');
    assert.equal(grant.body.error, 'unsupported_grant_type');
    const scope = await tokenRequest('grant_type=client_credentials&scope=cob.write%20everything', basic(CLIENT_ID, CLIENT_SECRET));
    assert.equal(scope.body.error, 'invalid_scope');
    const good = await tokenRequest('grant_type=client_credentials', basic(CLIENT_ID, CLIENT_SECRET));
    assert.equal(good.status, 200, 'the right client gets a token');
    assert.equal(good.body.token_type, 'Bearer');
    assert.ok((good.body.expires_in as number) > 0, `expires_in should be positive: ${good.body.expires_in}`);
    assert.match(String(good.body.scope), /\bcob\.write\b/, 'every scope by default');
  });

  test('every API path wants a valid bearer token with the scope of the operation', async () => {
    const path = `/cob/${newTxid()}`;
    for (const bearer of [null, 'garbage', `${token.slice(0, -4)}AAAA`]) {
      const res = await api('GET', path, { bearer, validRequest: false, checkAnswer: false });
      assert.equal(res.status, 401, `bearer ${bearer} → 401, got ${res.status}`);
      assert.match(res.contentType, /^application\/problem\+json/, 'a 401 is a problem too');
      assert.equal(res.body.status, 401);
    }
    const readOnly = await fetchToken('pix.read');
    assertProblem(await api('PUT', path, { body: cobBody('1.00'), bearer: readOnly }), 403, 'AcessoNegado');
    const list = await api(
      'GET',
      `/pix?inicio=${encodeURIComponent(clock.now().toISOString())}&fim=${encodeURIComponent(clock.now().toISOString())}`,
      {
        bearer: readOnly,
      },
    );
    assert.equal(list.status, 200, 'pix.read is enough to list Pix');
  });
});

describe('charges', () => {
  let cob: Json;

  test('PUT /cob answers a dynamic BR Code that pix-utils reads, carrying the location', async () => {
    cob = await createCob('123.45', { devedor: { cpf: '52998224725', nome: 'Fulano de Tal' }, solicitacaoPagador: 'Pedido 1' });
    assert.equal(cob.status, 'ATIVA');
    assert.equal(cob.revisao, 0);
    assert.equal(cob.valor.original, '123.45');
    assert.equal(cob.loc.tipoCob, 'cob');
    assert.equal(cob.loc.location, cob.location);
    assert.match(cob.location, /^localhost:\d+\/qr\/v2\/[0-9a-f]{32}$/, `location is host:port/path without scheme: ${cob.location}`);
    const code: string = cob.pixCopiaECola;
    assert.ok(verifyBrCodeCrc(code), `our CRC check accepts ${code}`);
    assert.ok(code.startsWith('000201010212'), `a dynamic code is single-use (01 = 12): ${code}`);
    assert.ok(code.includes('62070503***'), `a dynamic code's txid is *** : ${code}`);
    const parsed = parsePix(code);
    if (hasError(parsed)) assert.fail(`pix-utils rejects ${code}: ${parsed.message}`);
    assert.ok(isDynamicPix(parsed), `pix-utils reads ${code} as dynamic`);
    if (isDynamicPix(parsed)) assert.equal(parsed.url, cob.location);
    assert.equal(parsed.merchantName, 'LOJA SANDBOX');
    assert.equal(parsed.merchantCity, 'SAO PAULO');
  });

  test('the same PUT again answers the stored charge; GET shows it', async () => {
    const again = await api('PUT', `/cob/${cob.txid}`, {
      body: cobBody('123.45', { devedor: { cpf: '52998224725', nome: 'Fulano de Tal' }, solicitacaoPagador: 'Pedido 1' }),
    });
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, cob, 'a repeated PUT is idempotent');
    const got = await api('GET', `/cob/${cob.txid}`);
    assert.deepEqual(got.body, cob, 'GET shows the charge as created');
  });

  test('a PUT that changes an ATIVA charge revises it, as the file allows; the old revision stays readable', async () => {
    const revised = await api('PUT', `/cob/${cob.txid}`, { body: cobBody('200.00') });
    assert.equal(revised.status, 201);
    assert.equal(revised.body.revisao, 1);
    assert.equal(revised.body.valor.original, '200.00');
    assert.equal(revised.body.pixCopiaECola, cob.pixCopiaECola, 'the location, and so the code, stay');
    const old = await api('GET', `/cob/${cob.txid}?revisao=0`);
    assert.equal(old.body.valor.original, '123.45', 'revision 0 as it was');
    assertProblem(await api('GET', `/cob/${cob.txid}?revisao=7`, { checkAnswer: false }), 400, 'CobConsultaInvalida');
  });

  test('PUT /cob refuses what a PSP refuses, naming each violation', async () => {
    const cases: Array<[unknown, string]> = [
      [cobBody('10.00', { chave: 'someone-else@example.com' }), 'cob.chave'],
      [cobBody('12.5'), 'cob.valor.original'],
      [cobBody('0.00'), 'cob.valor.original'],
      [{ ...cobBody('10.00'), calendario: { expiracao: 0 } }, 'cob.calendario.expiracao'],
      [cobBody('10.00', { devedor: { cpf: '52998224725', cnpj: '11222333000181', nome: 'X' } }), 'cob.devedor'],
      [cobBody('10.00', { devedor: { cpf: '52998224700', nome: 'X' } }), 'cob.devedor.cpf'],
      [{ calendario: {}, chave: RECEIVER_KEY }, 'cob.valor'],
    ];
    for (const [body, propriedade] of cases) {
      assertProblem(await api('PUT', `/cob/${newTxid()}`, { body, validRequest: false }), 400, 'CobOperacaoInvalida', propriedade);
    }
    assertProblem(await api('PUT', '/cob/tooShort', { body: cobBody('1.00'), validRequest: false }), 400, 'CobOperacaoInvalida', 'txid');
    const notJson = await api('PUT', `/cob/${newTxid()}`, { rawBody: '{"valor":', validRequest: false, checkAnswer: false });
    assert.equal(notJson.status, 400, 'a body that is not JSON → 400');
    assert.match(notJson.contentType, /^application\/problem\+json/, 'as a problem');
    assertProblem(await api('GET', `/cob/${newTxid()}`), 404, 'CobNaoEncontrado');
  });

  test('the location answers a JWS signed with the key published at its jku', async () => {
    const fetched = await getText(`http://${cob.location}`);
    assert.equal(fetched.status, 200, `the location answers: ${fetched.text}`);
    assert.match(fetched.contentType, /^application\/jose/, `content type ${fetched.contentType}`);
    assert.match(fetched.cacheControl, /no-store/, 'a payload is signed when fetched and never cached');
    const [h, p, s] = fetched.text.split('.');
    assert.ok(h && p && s, `a compact JWS has three parts: ${fetched.text}`);
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    assert.equal(header.alg, 'ES256');
    assert.equal(header.jku, psp.jwksUrl);
    const jwks = JSON.parse((await getText(header.jku)).text) as { keys: Array<JsonWebKey & { kid: string }> };
    const jwk = jwks.keys.find((k) => k.kid === header.kid);
    assert.ok(jwk, `the JWKS has the key ${header.kid}`);
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    const signed = Buffer.from(`${h}.${p}`);
    const signature = Buffer.from(s, 'base64url');
    assert.ok(verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, signature), 'the signature verifies with the published key');
    assert.ok(!verify('sha256', Buffer.from(`${h}.${p}x`), { key, dsaEncoding: 'ieee-p1363' }, signature), 'and fails for another payload');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    assert.equal(payload.txid, cob.txid);
    assert.equal(payload.valor.original, '200.00', 'the current revision');
    assert.equal(payload.revisao, 1);
    assert.equal(payload.status, 'ATIVA');
    assert.equal(payload.calendario.apresentacao, clock.now().toISOString());
    const validate = validatorFor('CobPayload (location) response', forDirection(apiPixDocument.components.schemas.CobPayload!, 'response'), 'body');
    assert.ok(validate(payload), `the payload is a CobPayload: ${describeErrors('payload', validate.errors).join('; ')}`);
    const unknown = await getText(`http://${cob.location.replace(/[0-9a-f]{32}$/, 'f'.repeat(32))}`);
    assert.equal(unknown.status, 404, 'an unknown location → 404');
  });
});

describe('Pix received', () => {
  test('pay: the callback reaches the webhook with a Pix valid per the file, and the charge is CONCLUIDA', async () => {
    const cob = await createCob('50.00');
    tick();
    const pix = await psp.pay(cob.txid, 5000, { infoPagador: 'Pedido 2' });
    assert.match(pix.endToEndId, E2E_RE, `endToEndId in the BCB format: ${pix.endToEndId}`);
    assert.equal(pix.valor, '50.00');
    assert.equal(pix.txid, cob.txid);
    await receiver.waitFor(() => callbacksFor(pix.endToEndId).length > 0, WAIT_MS, 'the callback of the payment');
    assert.deepEqual(callbacksFor(pix.endToEndId)[0], pix, 'the callback carries the Pix');
    const got = await api('GET', `/cob/${cob.txid}`);
    assert.equal(got.body.status, 'CONCLUIDA');
    assert.deepEqual(got.body.pix, [pix]);
    assert.deepEqual((await api('GET', `/pix/${pix.endToEndId}`)).body, pix);
    assertProblem(await api('GET', `/pix/E${'0'.repeat(31)}`), 404, 'PixNaoEncontrado');
    const paidPayload = await getText(`http://${cob.location}`);
    assert.equal(paidPayload.status, 200, 'a paid charge is still shown to a payer');
    tick();
    const twice = await psp.pay(cob.txid, 5000);
    assert.equal((await api('GET', `/cob/${cob.txid}`)).body.pix.length, 2, 'a second payment of a paid code is received all the same');
    assert.notEqual(twice.endToEndId, pix.endToEndId);
  });

  test('a Pix of another amount, or for a removed charge, is received and the charge is not concluded', async () => {
    const cob = await createCob('10.00');
    tick();
    await psp.pay(cob.txid, 999);
    assert.equal((await api('GET', `/cob/${cob.txid}`)).body.status, 'ATIVA', 'a wrong amount does not conclude the charge');
    const both = { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR', valor: { original: '11.00' } };
    assertProblem(await api('PATCH', `/cob/${cob.txid}`, { body: both }), 400, 'CobOperacaoInvalida', 'cob.status');
    const removed = await api('PATCH', `/cob/${cob.txid}`, { body: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } });
    assert.equal(removed.status, 200);
    assert.equal(removed.body.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    assert.equal(removed.body.revisao, 1);
    const again = await api('PATCH', `/cob/${cob.txid}`, { body: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } });
    assert.equal(again.body.revisao, 1, 'removing a removed charge changes nothing');
    assertProblem(await api('PATCH', `/cob/${cob.txid}`, { body: { valor: { original: '12.00' } } }), 400, 'CobOperacaoInvalida');
    assertProblem(await api('PUT', `/cob/${cob.txid}`, { body: cobBody('12.00') }), 400, 'CobOperacaoInvalida');
    assert.equal((await getText(`http://${cob.location}`)).status, 404, 'a removed charge is no longer shown');
    tick();
    const stale = await psp.pay(cob.txid, 1000);
    const afterStale = await api('GET', `/cob/${cob.txid}`);
    assert.equal(afterStale.body.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    assert.ok(
      afterStale.body.pix.some((p: Pix) => p.endToEndId === stale.endToEndId),
      'the Pix is received all the same: the receiver must give it back',
    );
    assertProblem(await api('PATCH', `/cob/${newTxid()}`, { body: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } }), 404, 'CobNaoEncontrado');
  });

  test('a PATCH revises an ATIVA charge', async () => {
    const cob = await createCob('20.00');
    const revised = await api('PATCH', `/cob/${cob.txid}`, { body: { valor: { original: '21.50' }, solicitacaoPagador: 'Novo valor' } });
    assert.equal(revised.status, 200);
    assert.equal(revised.body.revisao, 1);
    assert.equal(revised.body.valor.original, '21.50');
    tick();
    await psp.pay(cob.txid, 2150);
    assert.equal((await api('GET', `/cob/${cob.txid}`)).body.status, 'CONCLUIDA', 'paid at the revised amount');
  });

  test('a static code (txid without charge) is received and called back', async () => {
    tick();
    const pix = await psp.pay('PEDIDO123', 1234);
    await receiver.waitFor(() => callbacksFor(pix.endToEndId).length > 0, WAIT_MS, 'the callback of a static code');
    assert.equal(callbacksFor(pix.endToEndId)[0]!.txid, 'PEDIDO123');
  });

  test('dropped callbacks: nothing arrives, and GET /pix lists every Pix, page by page, in horario order', async () => {
    tick();
    const inicio = clock.now().toISOString();
    psp.setCallbacks('drop');
    const paid: Pix[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        tick();
        paid.push(await psp.pay(`droppedCallbackTest${i}${'y'.repeat(10)}`, 100 + i));
      }
    } finally {
      psp.setCallbacks('deliver');
    }
    // pay resolves once its callback is settled, and a dropped one is never sent.
    for (const p of paid) assert.equal(callbacksFor(p.endToEndId).length, 0, `no callback for ${p.endToEndId}`);
    tick();
    const fim = clock.now().toISOString();
    const window = `inicio=${encodeURIComponent(inicio)}&fim=${encodeURIComponent(fim)}`;
    const seen: string[] = [];
    for (let page = 0; page < 4; page++) {
      const res = await api('GET', `/pix?${window}&paginacao.paginaAtual=${page}&paginacao.itensPorPagina=2`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.parametros.paginacao, { paginaAtual: page, itensPorPagina: 2, quantidadeDePaginas: 3, quantidadeTotalDeItens: 5 });
      assert.equal(res.body.pix.length, [2, 2, 1, 0][page], `page ${page} size`);
      seen.push(...res.body.pix.map((p: Pix) => p.endToEndId));
    }
    assert.deepEqual(
      seen,
      paid.map((p) => p.endToEndId),
      'every Pix once, oldest first',
    );
    const one = await api('GET', `/pix?${window}&txid=droppedCallbackTest3${'y'.repeat(10)}`);
    assert.deepEqual(
      one.body.pix.map((p: Pix) => p.endToEndId),
      [paid[3]!.endToEndId],
    );
    assert.equal((await api('GET', `/pix?${window}&txIdPresente=false`)).body.pix.length, 0, 'every Pix here has a txid');
    const backwards = await api('GET', `/pix?inicio=${encodeURIComponent(fim)}&fim=${encodeURIComponent(inicio)}`, { checkAnswer: false });
    assertProblem(backwards, 400, 'PixConsultaInvalida', 'fim');
    assertProblem(
      await api('GET', `/pix?fim=${encodeURIComponent(fim)}`, { validRequest: false, checkAnswer: false }),
      400,
      'PixConsultaInvalida',
      'inicio',
    );
  });

  test('a failing callback is retried; one that never succeeds does not fail pay', async () => {
    receiver.script('/flaky/pix', 500, 200);
    await registerWebhook('/flaky');
    tick();
    const retried = await psp.pay('FLAKY1', 500);
    assert.equal(callbacksFor(retried.endToEndId, '/flaky/pix').length, 2, 'one failure, then the retry');
    receiver.script('/down/pix', 503);
    await registerWebhook('/down');
    tick();
    const lost = await psp.pay('DOWN1', 500);
    assert.equal(lost.valor, '5.00', 'pay answers the Pix though its callback failed');
    assert.equal(callbacksFor(lost.endToEndId, '/down/pix').length, 3, 'the first attempt and the two retries');
    await registerWebhook('/hooks');
  });
});

describe('devoluções', () => {
  test('EM_PROCESSAMENTO, then DEVOLVIDO with a callback carrying devolucoes; over-refund refused; a failure armed → NAO_REALIZADO', async () => {
    const cob = await createCob('100.00');
    tick();
    const pix = await psp.pay(cob.txid, 10_000);
    const path = (id: string) => `/pix/${pix.endToEndId}/devolucao/${id}`;
    tick();
    const d1 = await api('PUT', path('D1'), { body: { valor: '30.00', descricao: 'Troca' } });
    assert.equal(d1.status, 201);
    assert.equal(d1.body.status, 'EM_PROCESSAMENTO');
    assert.match(d1.body.rtrId, RTR_RE, `rtrId in the BCB format: ${d1.body.rtrId}`);
    assert.equal(d1.body.natureza, 'ORIGINAL');
    assert.equal(d1.body.horario.solicitacao, clock.now().toISOString());
    assert.deepEqual(
      (await api('PUT', path('D1'), { body: { valor: '30.00', descricao: 'Troca' } })).body,
      d1.body,
      'the same request again is idempotent',
    );
    assertProblem(await api('PUT', path('D1'), { body: { valor: '31.00' } }), 400, 'PixDevolucaoInvalida', 'id');
    assert.equal((await api('GET', path('D1'))).body.status, 'EM_PROCESSAMENTO');
    tick();
    await psp.settleDevolucoes();
    const settled = await api('GET', path('D1'));
    assert.equal(settled.body.status, 'DEVOLVIDO');
    assert.equal(settled.body.horario.liquidacao, clock.now().toISOString());
    await receiver.waitFor(
      () => callbacksFor(pix.endToEndId).some((p) => p.devolucoes?.[0]?.status === 'DEVOLVIDO'),
      WAIT_MS,
      'the devolução callback',
    );
    assertProblem(await api('PUT', path('D2'), { body: { valor: '70.01' } }), 400, 'PixDevolucaoInvalida', 'devolucao.valor');

    psp.failNextDevolucoes(1);
    assert.equal((await api('PUT', path('D3'), { body: { valor: '70.00' } })).body.status, 'EM_PROCESSAMENTO');
    await psp.settleDevolucoes();
    const failed = await api('GET', path('D3'));
    assert.equal(failed.body.status, 'NAO_REALIZADO');
    assert.ok(failed.body.motivo, 'a devolução not made says why');
    assert.equal(failed.body.horario.liquidacao, undefined, 'nothing was settled');
    await receiver.waitFor(
      () => callbacksFor(pix.endToEndId).some((p) => p.devolucoes?.some((d) => d.id === 'D3' && d.status === 'NAO_REALIZADO')),
      WAIT_MS,
      'the NAO_REALIZADO callback',
    );
    assert.equal((await api('PUT', path('D4'), { body: { valor: '70.00' } })).status, 201, 'what failed was not given back, so it can be again');
    await psp.settleDevolucoes();
    assertProblem(await api('PUT', path('D5'), { body: { valor: '0.01' } }), 400, 'PixDevolucaoInvalida', 'devolucao.valor');
    const listed = (await api('GET', `/pix/${pix.endToEndId}`)).body as Pix;
    assert.deepEqual(
      listed.devolucoes?.map((d) => [d.id, d.status]),
      [
        ['D1', 'DEVOLVIDO'],
        ['D3', 'NAO_REALIZADO'],
        ['D4', 'DEVOLVIDO'],
      ],
    );
    assertProblem(await api('PUT', `/pix/E${'1'.repeat(31)}/devolucao/X1`, { body: { valor: '1.00' } }), 404, 'PixNaoEncontrado');
    assertProblem(await api('GET', path('NOPE')), 404, 'PixDevolucaoNaoEncontrada');
  });

  test('a MED devolução is DEVOLVIDO at once and called back', async () => {
    const cob = await createCob('80.00');
    tick();
    const pix = await psp.pay(cob.txid, 8_000);
    const med = await psp.openMedDevolucao(pix.endToEndId, { amountCents: 8_000, natureza: 'MED_FRAUDE' });
    assert.equal(med.status, 'DEVOLVIDO');
    assert.equal(med.natureza, 'MED_FRAUDE');
    assert.match(med.rtrId, RTR_RE);
    await receiver.waitFor(
      () => callbacksFor(pix.endToEndId).some((p) => p.devolucoes?.some((d) => d.natureza === 'MED_FRAUDE')),
      WAIT_MS,
      'the MED callback',
    );
    await assert.rejects(psp.openMedDevolucao(pix.endToEndId, { amountCents: 1, natureza: 'MED_OPERACIONAL' }), /more than/);
    assertProblem(await api('PUT', `/pix/${pix.endToEndId}/devolucao/AFTERMED`, { body: { valor: '0.01' } }), 400, 'PixDevolucaoInvalida');
    const got = (await api('GET', `/pix/${pix.endToEndId}`)).body as Pix;
    assert.equal(got.devolucoes?.[0]?.natureza, 'MED_FRAUDE');
  });
});

describe('the api-pix connector, through a proxy checking every request and answer against the file', () => {
  test('charge, payment, listing and devolução end to end', async () => {
    const proxy = await startValidatingProxy({ target: psp.apiUrl });
    // The token endpoint is OAuth2's, outside the file: the client reaches it directly.
    const client = createApiPixClient({ baseUrl: proxy.url, tokenUrl: psp.tokenUrl, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    try {
      const txid = newTxid();
      const cob = await client.putCob(txid, { calendario: { expiracao: 600 }, valor: { original: '12.34' }, chave: RECEIVER_KEY });
      assert.equal(cob.status, 'ATIVA');
      await client.putWebhook(RECEIVER_KEY, receiver.url('/hooks'));
      assert.equal((await client.getWebhook(RECEIVER_KEY)).webhookUrl, receiver.url('/hooks'));
      tick();
      const inicio = clock.now();
      const pix = await psp.pay(txid, 1234);
      assert.equal((await client.getCob(txid)).status, 'CONCLUIDA');
      assert.equal((await client.getPix(pix.endToEndId)).valor, '12.34');
      const listed: string[] = [];
      for await (const p of client.allPix({ inicio, fim: clock.now(), itensPorPagina: 1 })) listed.push(p.endToEndId);
      assert.deepEqual(listed, [pix.endToEndId]);
      const devolucao = await client.putDevolucao(pix.endToEndId, 'C1', { valor: '12.34' });
      assert.equal(devolucao.status, 'EM_PROCESSAMENTO');
      await psp.settleDevolucoes();
      assert.equal((await client.getDevolucao(pix.endToEndId, 'C1')).status, 'DEVOLVIDO');
      assert.equal(callbacksFor(pix.endToEndId).length, 2, 'the payment and the devolução were called back');
      assert.deepEqual(proxy.violations, [], `the exchanges break the file: ${proxy.violations.join('; ')}`);
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});

describe('webhook registration', () => {
  test('PUT, GET and DELETE /webhook/{chave}', async () => {
    const other = await api('PUT', '/webhook/someone-else@example.com', { body: { webhookUrl: receiver.url('/hooks') } });
    assertProblem(other, 400, 'WebhookOperacaoInvalida', 'chave');
    for (const webhookUrl of ['http://example.com/hooks', 'ftp://127.0.0.1/hooks', 'not a url']) {
      const res = await api('PUT', `/webhook/${RECEIVER_KEY}`, { body: { webhookUrl }, validRequest: false });
      assertProblem(res, 400, 'WebhookOperacaoInvalida', 'webhook.webhookUrl');
    }
    const got = await api('GET', `/webhook/${RECEIVER_KEY}`);
    assert.equal(got.body.webhookUrl, receiver.url('/hooks'));
    assert.equal(got.body.chave, RECEIVER_KEY);
    assert.equal((await api('DELETE', `/webhook/${RECEIVER_KEY}`)).status, 204);
    assertProblem(await api('GET', `/webhook/${RECEIVER_KEY}`), 404, 'WebhookNaoEncontrado');
    assertProblem(await api('DELETE', `/webhook/${RECEIVER_KEY}`), 404, 'WebhookNaoEncontrado');
    tick();
    const unheard = await psp.pay('NOWEBHOOK1', 100);
    assert.equal(callbacksFor(unheard.endToEndId).length, 0, 'no webhook, no callback');
    await registerWebhook('/hooks');
  });
});

describe('a restart on the same database', () => {
  test('keeps charges and Pix, honours tokens, and settles the devoluções left pending', async () => {
    const cob = await createCob('40.00');
    tick();
    const pix = await psp.pay(cob.txid, 4_000);
    assert.equal((await api('PUT', `/pix/${pix.endToEndId}/devolucao/R1`, { body: { valor: '10.00' } })).body.status, 'EM_PROCESSAMENTO');
    await psp.close();
    tick(61_000); // past R1's settle time
    psp = await start({ devolucaoDelayMs: 20, callbackTimeoutMs: 200 });
    const got = await api('GET', `/cob/${cob.txid}`);
    assert.equal(got.status, 200, 'the token of the previous process is still good, and the charge is there');
    assert.equal(got.body.status, 'CONCLUIDA');
    assert.equal(got.body.pixCopiaECola, cob.pixCopiaECola);
    const settledR1 = (p: Pix) => p.devolucoes?.some((d) => d.id === 'R1' && d.status === 'DEVOLVIDO') ?? false;
    await receiver.waitFor(() => callbacksFor(pix.endToEndId).some(settledR1), WAIT_MS, 'R1 settled by the new process');
    assert.equal((await api('PUT', `/pix/${pix.endToEndId}/devolucao/R2`, { body: { valor: '5.00' } })).status, 201);
    const settledR2 = (p: Pix) => p.devolucoes?.some((d) => d.id === 'R2' && d.status === 'DEVOLVIDO') ?? false;
    await receiver.waitFor(() => callbacksFor(pix.endToEndId).some(settledR2), WAIT_MS, 'R2 settled after its delay');
    const path = new URL(`http://${cob.location}`).pathname;
    const served = await getText(`${psp.apiUrl.replace('/api/v2', '')}${path}`);
    assert.equal(served.status, 200, 'the location path is served by the new process');
  });

  test('a receiver that never answers costs each attempt its time limit, and pay still resolves', async () => {
    receiver.script('/hang/pix', 'hang');
    await registerWebhook('/hang');
    tick();
    const pix = await psp.pay('HANGING1', 100);
    assert.equal(pix.valor, '1.00', 'pay answers the Pix');
    assert.equal(
      receiver.requestsTo('/hang/pix').filter((r) => r.body.toString('utf8').includes(pix.endToEndId)).length,
      3,
      'three attempts, each cut at its time limit',
    );
    await registerWebhook('/hooks');
  });
});
