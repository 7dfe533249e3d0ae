import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres } from '../helpers/databases.ts';
import { adminHeaders, type Gateway, startGateway } from '../helpers/gateway.ts';

describe('sellers, keys and the balance endpoint', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway();
  });
  after(async () => {
    await gw.close();
  });

  test('a new seller reads zero balances with its keys', async () => {
    const seller = await gw.createSeller();
    const res = await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"available":0,"blocked":0,"total":0}');
  });

  test('seller creation answers 201 with keys shown once and stores only a digest', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/admin/sellers',
      headers: adminHeaders,
      payload: { name: 'Loja', email: 'a@b.co', document: '529.982.247-25' },
    });
    assert.equal(res.statusCode, 201);
    const s = res.json();
    assert.equal(typeof s.id, 'number');
    assert.match(s.publicKey, /^pk_/);
    assert.match(s.privateKey, /^sk_/);
    assert.equal(s.document, '52998224725');
    assert.equal(s.apiWithdrawalEnabled, true);
    assert.equal(s.transferAllowed, true);
    assert.match(s.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const rows = await gw.ctx.db.query<{ d: string }>("SELECT encode(private_key_digest, 'hex') AS d FROM api_keys WHERE public_key = $1", [
      s.publicKey,
    ]);
    assert.equal(rows.rows[0]!.d.length, 64);
    const dump = await gw.ctx.db.query<{ t: string }>('SELECT row_to_json(k)::text AS t FROM api_keys k');
    assert.ok(!dump.rows.some((r) => r.t.includes(s.privateKey)), 'plain private key must not be stored');
    const read = await gw.app.inject({ method: 'GET', url: `/admin/sellers/${s.id}`, headers: adminHeaders });
    assert.equal(read.statusCode, 200);
    assert.equal(read.json().keys.length, 1);
    assert.equal(read.json().privateKey, undefined);
  });

  test('seller creation validates every field and names it', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/admin/sellers', headers: adminHeaders, payload: { name: '', email: 'nope', extra: 1 } });
    assert.equal(res.statusCode, 400);
    const body = res.json();
    assert.equal(body.errorType, 'VALIDATION_ERROR');
    const fields = body.details.map((d: { field: string }) => d.field).sort();
    // An unknown field is refused too (CONTRACT §3: only the spec's two POSTs ignore them).
    assert.deepEqual(fields, ['email', 'extra', 'name']);
    const bad = await gw.app.inject({
      method: 'POST',
      url: '/admin/sellers',
      headers: adminHeaders,
      payload: { name: 'x', email: 'a@b.co', document: '11111111111' },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().details[0].field, 'document');
    const typed = await gw.app.inject({ method: 'POST', url: '/admin/sellers', headers: adminHeaders, payload: { name: 42, email: ['a@b.co'] } });
    assert.equal(typed.statusCode, 400);
    assert.deepEqual(
      typed
        .json()
        .details.map((d: { field: string }) => d.field)
        .sort(),
      ['email', 'name'],
    );
  });

  test('PATCH changes settings; unknown seller is 404; bad id is 400', async () => {
    const seller = await gw.createSeller();
    const res = await gw.app.inject({
      method: 'PATCH',
      url: `/admin/sellers/${seller.id}`,
      headers: adminHeaders,
      payload: { apiWithdrawalEnabled: false, transferAllowed: false },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().apiWithdrawalEnabled, false);
    assert.equal(res.json().transferAllowed, false);
    const missing = await gw.app.inject({ method: 'GET', url: '/admin/sellers/999999', headers: adminHeaders });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(Object.keys(missing.json()), ['error', 'message']);
    for (const id of ['abc', '0', '01', '-1', '1.5', '9007199254740992', '99999999999999999']) {
      const bad = await gw.app.inject({ method: 'GET', url: `/admin/sellers/${id}`, headers: adminHeaders });
      assert.equal(bad.statusCode, 400, id);
      assert.equal(bad.json().error, 'Bad Request');
    }
    const wrongType = await gw.app.inject({
      method: 'PATCH',
      url: `/admin/sellers/${seller.id}`,
      headers: adminHeaders,
      payload: { apiWithdrawalEnabled: 'false' },
    });
    assert.equal(wrongType.statusCode, 400);
    assert.equal(wrongType.json().details[0].field, 'apiWithdrawalEnabled');
  });

  test('a second key works; a revoked key stops at once; the other keeps working', async () => {
    const seller = await gw.createSeller();
    const issued = await gw.app.inject({ method: 'POST', url: `/admin/sellers/${seller.id}/keys`, headers: adminHeaders });
    assert.equal(issued.statusCode, 201);
    const second = issued.json();
    const secondHeaders = { 'x-api-public-key': second.publicKey, 'x-api-private-key': second.privateKey };
    assert.equal((await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: secondHeaders })).statusCode, 200);
    const revoke = await gw.app.inject({ method: 'DELETE', url: `/admin/sellers/${seller.id}/keys/${seller.publicKey}`, headers: adminHeaders });
    assert.equal(revoke.statusCode, 204);
    const afterRevoke = await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
    assert.equal(afterRevoke.statusCode, 401);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: secondHeaders })).statusCode, 200);
    const again = await gw.app.inject({ method: 'DELETE', url: `/admin/sellers/${seller.id}/keys/pk_unknown`, headers: adminHeaders });
    assert.equal(again.statusCode, 404);
  });

  test("one seller's private key does not open another seller's public key", async () => {
    const a = await gw.createSeller();
    const b = await gw.createSeller();
    const res = await gw.app.inject({
      method: 'GET',
      url: '/api/public/balance',
      headers: { 'x-api-public-key': a.publicKey, 'x-api-private-key': b.privateKey },
    });
    assert.equal(res.statusCode, 401);
  });

  test('revocation reaches another process at once', { skip: !onPostgres && 'needs PostgreSQL (two processes share one database)' }, async () => {
    const seller = await gw.createSeller();
    const peer = await gw.peer();
    // The peer caches the key on its first use.
    assert.equal((await peer.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers })).statusCode, 200);
    assert.equal((await peer.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers })).statusCode, 200);
    await gw.app.inject({ method: 'DELETE', url: `/admin/sellers/${seller.id}/keys/${seller.publicKey}`, headers: adminHeaders });
    // NOTIFY is delivered after commit; allow its delivery, nothing more.
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      status = (await peer.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers })).statusCode;
      if (status === 200) await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(status, 401);
    await peer.close();
  });
});
