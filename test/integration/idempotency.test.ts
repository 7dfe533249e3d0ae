import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { App } from '../../src/app.ts';
import type { Queryable } from '../../src/db/db.ts';
import { canonicalJson } from '../../src/domain/canonical-json.ts';
import type { ApiError } from '../../src/domain/errors.ts';
import { idempotencyExpiryJob, idempotent } from '../../src/http/idempotency.ts';
import { idempotentWrite, type KeyedAnswer } from '../../src/http/idempotent-write.ts';
import { type SaleRow, writeSale } from '../../src/sales/sale-writes.ts';
import { onPostgres } from '../helpers/databases.ts';
import { cardExample, pixExample, saleRowExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway, testEnv } from '../helpers/gateway.ts';

type Json = Record<string, unknown>;

const ENDPOINT = 'POST /api/sales';
const T0 = new Date('2026-11-20T12:00:00.000Z');

/** CONTRACT §4's PIX example (test/helpers/fixtures.ts) of `amount` cents. */
const pixBody = (amount = 15000): Json => pixExample({ amount });

/** The same body with keys in reverse order at every depth (same canonical JSON, different bytes). */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .reverse()
        .map((k) => [k, reordered((value as Json)[k])]),
    );
  }
  return value;
}

/** The stored fingerprint of a request, as the gateway computes it. */
const fingerprintOf = (req: { fingerprintKey: string; body: unknown }) =>
  createHmac('sha256', req.fingerprintKey).update(canonicalJson(req.body)).digest('hex');

function post(app: App, seller: SellerKeys, payload: unknown, key?: string) {
  return app.inject({
    method: 'POST',
    url: '/api/sales',
    headers: { ...seller.headers, 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
}

describe('Idempotency-Key on POST /api/sales', () => {
  let gw: Gateway;
  let current = T0;
  before(async () => {
    gw = await startGateway({ clock: { now: () => current } });
  });
  after(async () => {
    await gw.close();
  });

  const countFor = async (seller: SellerKeys) =>
    Number((await gw.ctx.db.query<{ n: string }>('SELECT count(*)::text AS n FROM transactions WHERE seller_id = $1', [seller.id])).rows[0]!.n);

  test('same key, same body (keys reordered): the first answer again, byte for byte, marked replayed; one sale', async () => {
    current = T0;
    const seller = await gw.createSeller();
    const body = pixBody();
    const text = JSON.stringify(body);
    const otherText = JSON.stringify(reordered(body));
    assert.notEqual(text, otherText);
    const first = await post(gw.app, seller, text, 'order-1');
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    for (const payload of [otherText, text, otherText]) {
      const again = await post(gw.app, seller, payload, 'order-1');
      assert.equal(again.statusCode, 201);
      assert.equal(again.body, first.body);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.match(again.headers['content-type'] as string, /^application\/json/);
    }
    assert.equal(await countFor(seller), 1);
    // The first answer is replayed even after the sale moved on.
    const id = first.json().sale.id;
    assert.equal(
      (
        await gw.app.inject({
          method: 'POST',
          url: `/admin/transactions/${id}/events`,
          headers: adminHeaders,
          payload: { event: 'PAYMENT_CONFIRMED' },
        })
      ).statusCode,
      200,
    );
    const later = await post(gw.app, seller, text, 'order-1');
    assert.equal(later.body, first.body);
    assert.equal(later.json().sale.status, 'PENDENTE');
    // No key, no idempotency: the same body creates another sale.
    assert.equal((await post(gw.app, seller, text)).statusCode, 201);
    assert.equal(await countFor(seller), 2);
  });

  test('same key, different body: 422 IDEMPOTENCY_KEY_REUSED and nothing created; the key still replays its own answer', async () => {
    current = T0;
    const seller = await gw.createSeller();
    const first = await post(gw.app, seller, pixBody(), 'order-2');
    assert.equal(first.statusCode, 201);
    // Other PIX bodies; a card sale (written in one statement with its answer); a body refused as invalid.
    const others = [
      pixBody(15001),
      { ...pixBody(), postbackUrl: 'https://seller.example/other' },
      { ...pixBody(), extra: 1 },
      cardExample(),
      { amount: -1 },
    ];
    for (const changed of others) {
      const res = await post(gw.app, seller, changed, 'order-2');
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(Object.keys(res.json()), ['message', 'errorType']);
      assert.equal(res.json().errorType, 'IDEMPOTENCY_KEY_REUSED');
    }
    assert.equal(await countFor(seller), 1);
    assert.equal((await post(gw.app, seller, pixBody(), 'order-2')).body, first.body);
  });

  test('a 400 answer is stored and replayed; the corrected body under that key is a different request', async () => {
    current = T0;
    const seller = await gw.createSeller();
    const bad = { ...pixBody(), amount: '15000' };
    const first = await post(gw.app, seller, bad, 'order-3');
    assert.equal(first.statusCode, 400);
    assert.equal(first.json().errorType, 'VALIDATION_ERROR');
    const again = await post(gw.app, seller, bad, 'order-3');
    assert.equal(again.statusCode, 400);
    assert.equal(again.body, first.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const stored = (
      await gw.ctx.db.query<{ response_status: number }>(
        'SELECT response_status FROM idempotency_keys WHERE seller_id = $1 AND endpoint = $2 AND key = $3',
        [seller.id, ENDPOINT, 'order-3'],
      )
    ).rows;
    assert.deepEqual(
      stored.map((r) => r.response_status),
      [400],
    );
    assert.equal((await post(gw.app, seller, pixBody(), 'order-3')).statusCode, 422);
    assert.equal(await countFor(seller), 0);
    assert.equal((await post(gw.app, seller, pixBody(), 'order-3b')).statusCode, 201);
  });

  test("keys are per seller: B using A's key creates its own sale", async () => {
    current = T0;
    const a = await gw.createSeller({ name: 'A', email: 'a@example.com' });
    const b = await gw.createSeller({ name: 'B', email: 'b@example.com' });
    const fromA = await post(gw.app, a, pixBody(), 'shared-key');
    const fromB = await post(gw.app, b, pixBody(), 'shared-key');
    assert.equal(fromA.statusCode, 201);
    assert.equal(fromB.statusCode, 201);
    assert.equal(fromB.headers['idempotent-replayed'], undefined);
    assert.notEqual(fromB.json().sale.id, fromA.json().sale.id);
    // and a different body from B under the same key is not A's business
    assert.equal((await post(gw.app, b, pixBody(), 'shared-key')).body, fromB.body);
    assert.equal(await countFor(a), 1);
    assert.equal(await countFor(b), 1);
    const read = await gw.app.inject({ method: 'GET', url: `/api/transactions/${fromB.json().sale.id}`, headers: b.headers });
    assert.equal(read.statusCode, 200);
    // bad keys are refused before any replay
    const wrongKeys = await post(gw.app, { ...a, headers: { ...a.headers, 'x-api-private-key': 'sk_wrong' } }, pixBody(), 'shared-key');
    assert.equal(wrongKeys.statusCode, 401);
  });

  test("keys are per endpoint: a sale's key used on POST /api/public/cashout is a new request there", async () => {
    current = T0;
    const seller = await gw.createSeller();
    assert.equal((await post(gw.app, seller, pixBody(), 'both-endpoints')).statusCode, 201);
    const cashout = await gw.app.inject({
      method: 'POST',
      url: '/api/public/cashout',
      headers: { ...seller.headers, 'idempotency-key': 'both-endpoints' },
      payload: { amount: 150, pixKey: '52998224725', pixKeyType: 'CPF' },
    });
    // The seller has no balance yet: the cashout is judged on its own, not refused as a reused key.
    assert.equal(cashout.statusCode, 422, cashout.body);
    assert.equal(cashout.json().errorType, 'INSUFFICIENT_BALANCE');
    assert.equal(cashout.headers['idempotent-replayed'], undefined);
    const endpoints = (
      await gw.ctx.db.query<{ endpoint: string }>('SELECT endpoint FROM idempotency_keys WHERE seller_id = $1 AND key = $2 ORDER BY endpoint', [
        seller.id,
        'both-endpoints',
      ])
    ).rows.map((r) => r.endpoint);
    assert.deepEqual(endpoints, ['POST /api/public/cashout', ENDPOINT]);
    assert.equal((await post(gw.app, seller, pixBody(), 'both-endpoints')).headers['idempotent-replayed'], 'true');
  });

  test('a key of 256 characters (or an empty one) is 400 naming Idempotency-Key; 255 is accepted', async () => {
    current = T0;
    const seller = await gw.createSeller();
    const empty = await post(gw.app, seller, pixBody(), '');
    assert.equal(empty.statusCode, 400);
    assert.deepEqual(
      empty.json().details.map((d: { field: string }) => d.field),
      ['Idempotency-Key'],
    );
    const res = await post(gw.app, seller, pixBody(), 'k'.repeat(256));
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().errorType, 'VALIDATION_ERROR');
    assert.deepEqual(
      res.json().details.map((d: { field: string }) => d.field),
      ['Idempotency-Key'],
    );
    assert.equal(await countFor(seller), 0);
    const ok = await post(gw.app, seller, pixBody(), 'k'.repeat(255));
    assert.equal(ok.statusCode, 201);
    assert.equal((await post(gw.app, seller, pixBody(), 'k'.repeat(255))).headers['idempotent-replayed'], 'true');
    assert.equal(await countFor(seller), 1);
  });

  /**
   * Holds the embedded PSP's charges table from another connection: a PIX sale waits in its provider
   * call, its key claimed (a write of its own, one statement of a few milliseconds, would make a
   * same-key request wait for its end rather than answer 409).
   */
  async function holdPsp() {
    const client = new pg.Client({ connectionString: gw.database.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE sandbox_psp.cobs IN EXCLUSIVE MODE');
    return {
      release: async () => {
        await client.query('COMMIT');
        await client.end();
      },
    };
  }

  /** Polls (bounded) until a request has claimed its key and its charge waits on the held PSP. */
  async function waitForClaim() {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await gw.ctx.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM idempotency_claims
          WHERE EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock')`,
      );
      if (r.rows[0]!.n > 0) return;
      if (Date.now() > deadline) throw new Error('the first request never claimed its key');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  test('a key held by a request still running: 409 IDEMPOTENCY_KEY_IN_USE, whatever the body; the first answer once it ends', {
    skip: !onPostgres && 'PGlite runs one transaction at a time: a second request waits, then replays',
  }, async () => {
    current = T0;
    const seller = await gw.createSeller();
    const body = pixBody();
    const held = await holdPsp();
    const first = post(gw.app, seller, body, 'k1');
    try {
      await waitForClaim();
      // The same body, reordered, another PIX body, a card sale (written in one statement) and a body
      // refused as invalid (whose refusal must not take the key from the charge already made).
      const others = [body, reordered(body), pixBody(20000), cardExample(), { ...body, amount: -1 }].map((b) => JSON.stringify(b));
      for (const payload of others) {
        const res = await post(gw.app, seller, payload, 'k1');
        assert.equal(res.statusCode, 409, res.body);
        assert.deepEqual(Object.keys(res.json()), ['message', 'errorType']);
        assert.equal(res.json().errorType, 'IDEMPOTENCY_KEY_IN_USE');
      }
    } finally {
      await held.release();
    }
    const done = await first;
    assert.equal(done.statusCode, 201, done.body);
    assert.equal((await post(gw.app, seller, body, 'k1')).body, done.body);
    assert.equal((await post(gw.app, seller, pixBody(20000), 'k1')).statusCode, 422);
    assert.equal(await countFor(seller), 1);
  });

  test('a process killed mid-request frees its key at once: the retry creates the sale', {
    skip: !onPostgres && 'PGlite has no second process',
  }, async () => {
    current = T0;
    const seller = await gw.createSeller();
    const body = pixBody();
    const held = await holdPsp();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/helpers/idempotent-child.ts', JSON.stringify(seller.headers), 'crash-1', JSON.stringify(body)],
      { env: { ...process.env, ...testEnv(gw.database.url) }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // Its start-up takes the migration lock (advisory too): look for the key's claim only after it.
    const sent = new Promise<void>((resolve) =>
      child.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('sent')) resolve();
      }),
    );
    try {
      await Promise.race([
        sent,
        exited.then(() => {
          throw new Error('the child exited before sending');
        }),
      ]);
      await waitForClaim();
      assert.equal((await post(gw.app, seller, body, 'crash-1')).statusCode, 409, 'held by the child while it runs');
      child.kill('SIGKILL');
      await exited;
    } finally {
      child.kill('SIGKILL');
      await held.release();
    }
    // The server notices the dead connection and ends its transaction: no 60 s wait.
    const deadline = Date.now() + 5_000;
    let retry = await post(gw.app, seller, body, 'crash-1');
    while (retry.statusCode === 409 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      retry = await post(gw.app, seller, body, 'crash-1');
    }
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], undefined);
    assert.equal(await countFor(seller), 1, 'the killed request created nothing');
  });

  for (const [method, body] of [
    ['PIX, its key claimed before the charge', pixBody()],
    ['card, one statement', cardExample()],
  ] as const) {
    test(`two identical requests at once${onPostgres ? ' from two processes' : ''} (${method}): one sale; the other is 409 IN_USE or the replay`, async () => {
      current = T0;
      const seller = await gw.createSeller();
      const second = onPostgres ? (await gw.peer()).app : gw.app;
      const rounds = 10;
      for (let i = 0; i < rounds; i++) {
        const key = `race-${i}`;
        const [x, y] = await Promise.all([post(gw.app, seller, body, key), post(second, seller, body, key)]);
        const fresh = [x, y].filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
        assert.equal(fresh.length, 1, `${x.statusCode} ${y.statusCode}`);
        const rest = [x, y].find((r) => r !== fresh[0])!;
        if (rest.statusCode === 409) assert.equal(rest.json().errorType, 'IDEMPOTENCY_KEY_IN_USE');
        else {
          assert.equal(rest.statusCode, 201);
          assert.equal(rest.headers['idempotent-replayed'], 'true');
          assert.equal(rest.body, fresh[0]!.body);
        }
        // once finished, the key replays
        assert.equal((await post(second, seller, body, key)).body, fresh[0]!.body);
      }
      assert.equal(await countFor(seller), rounds);
    });
  }

  test('an answer stored by another request after this one looked: its work rolls back and that answer is replayed', {
    skip: onPostgres ? false : 'PostgreSQL only: the other request commits on a second connection while this one works',
  }, async () => {
    current = T0;
    const seller = await gw.createSeller();
    const req = {
      db: gw.ctx.db,
      sellerId: seller.id,
      endpoint: 'POST /test/meanwhile',
      key: 'meanwhile',
      body: { a: 1 },
      now: T0,
      fingerprintKey: 'test-fingerprint-key',
    };
    // An answer committed under the key from another connection after this request's look-up (what a
    // request of another process that committed just before this one took the key leaves unseen by
    // the look-up's snapshot); then the work writes a row of its own.
    let wrote = 0;
    const work = async (q: Queryable) => {
      if (wrote++ === 0) {
        await gw.ctx.db.query(
          `INSERT INTO idempotency_keys (seller_id, endpoint, key, request_hash, response_status, response_body, expires_at, created_at)
           SELECT $1, $2, $3, request_hash, 201, '{"from":"the other request"}', $4, $5 FROM (SELECT $6::text AS request_hash) h`,
          [seller.id, req.endpoint, req.key, new Date(T0.getTime() + 86_400_000), T0, fingerprintOf(req)],
        );
      }
      await q.query("UPDATE sellers SET name = 'written by the work' WHERE id = $1", [seller.id]);
      return { made: { from: 'this request' } };
    };
    const answer = await idempotent(req, work);
    assert.deepEqual(answer, { status: 201, body: '{"from":"the other request"}', replayed: true });
    const name = (await gw.ctx.db.query<{ name: string }>('SELECT name FROM sellers WHERE id = $1', [seller.id])).rows[0]!.name;
    assert.notEqual(name, 'written by the work', "this request's work was rolled back");
  });

  /** A one-statement write (a sale, as sale-writes.ts writes it) under key `key`, and the request it answers. */
  function oneSale(sellerId: number, key: string) {
    const req = {
      db: gw.ctx.db,
      sellerId,
      endpoint: 'POST /test/one-statement',
      key,
      body: { a: 1 },
      now: T0,
      fingerprintKey: 'test-fingerprint-key',
    };
    const row: SaleRow = saleRowExample(sellerId, 1000, T0);
    const plan = () => ({
      write: (answer: KeyedAnswer | null) => writeSale(gw.ctx.db, { ...row, answer }),
      answer: (id: number) => ({ made: { sale: id } }),
    });
    const salesNow = async () =>
      (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE seller_id = $1', [sellerId])).rows[0]!.n;
    return { req, plan, salesNow };
  }

  test('a one-statement write whose key another request answered writes nothing, and that answer is replayed', async () => {
    const seller = await gw.createSeller();
    const { req, plan, salesNow } = oneSale(seller.id, 'answered-before');
    // Committed by another request: no look-up precedes the write, whose answer's insert finds it.
    await gw.ctx.db.query(
      `INSERT INTO idempotency_keys (seller_id, endpoint, key, request_hash, response_status, response_body, expires_at, created_at)
       VALUES ($1, $2, $3, $4, 201, '{"from":"the other request"}', $5, $6)`,
      [seller.id, req.endpoint, req.key, fingerprintOf(req), new Date(T0.getTime() + 86_400_000), T0],
    );
    const answer = await idempotentWrite(req, plan);
    assert.deepEqual(answer, { status: 201, body: '{"from":"the other request"}', replayed: true, id: null });
    assert.equal(await salesNow(), 0, "this request's sale was not written");
    const fresh = await idempotentWrite({ ...req, key: 'fresh' }, plan);
    assert.ok(fresh.id !== null);
    assert.deepEqual(fresh, { status: 201, body: `{"sale":${fresh.id}}`, replayed: false, id: fresh.id });
    assert.equal(await salesNow(), 1);
    const replay = await idempotentWrite({ ...req, key: 'fresh' }, plan);
    assert.deepEqual(replay, { ...fresh, replayed: true, id: null });
  });

  test('a claim taken over while its holder called the provider: its write writes nothing, nothing stored, the key in use', async () => {
    const seller = await gw.createSeller();
    const { req, plan, salesNow } = oneSale(seller.id, 'taken-over');
    // What a lease that lapsed mid-call leaves: another request's claim on the key.
    const prepare = async () => {
      await gw.ctx.db.query("UPDATE idempotency_claims SET claimed_by = 'another request' WHERE seller_id = $1 AND key = $2", [seller.id, req.key]);
      return null;
    };
    await assert.rejects(idempotentWrite(req, plan, { run: prepare, callsProvider: true }), (e: ApiError) => e.code === 'IDEMPOTENCY_KEY_IN_USE');
    assert.equal(await salesNow(), 0, 'the sale was not written');
    const stored = await gw.ctx.db.query('SELECT 1 FROM idempotency_keys WHERE seller_id = $1 AND key = $2', [seller.id, req.key]);
    assert.equal(stored.rowCount, 0, 'no answer stored');
    const claims = await gw.ctx.db.query<{ claimed_by: string }>('SELECT claimed_by FROM idempotency_claims WHERE seller_id = $1', [seller.id]);
    assert.deepEqual(claims.rows, [{ claimed_by: 'another request' }], "the other request's claim stands");
  });

  test('a refusal of a request that claimed its key first (a PIX sale) is stored with the claim ended, and replayed', async () => {
    const strict = await startGateway({ env: { WEBHOOK_ALLOW_PRIVATE: 'false' } });
    try {
      const seller = await strict.createSeller();
      const body = pixExample({}, { postbackUrl: 'http://127.0.0.1/hook' });
      const first = await post(strict.app, seller, body, 'refused-after-claim');
      assert.equal(first.statusCode, 400, first.body);
      assert.equal(first.json().details[0].field, 'postbackUrl');
      const again = await post(strict.app, seller, body, 'refused-after-claim');
      assert.equal(again.statusCode, 400);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body, first.body);
      const left = await strict.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_claims');
      assert.equal(left.rows[0]!.n, 0, 'the claim ended with the stored refusal');
      const sales = await strict.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions');
      assert.equal(sales.rows[0]!.n, 0);
    } finally {
      await strict.close();
    }
  });

  test('kept 24 h: replayed at 24 h − 1 s, a new sale at 24 h + 1 s', async () => {
    current = T0;
    const seller = await gw.createSeller();
    const first = await post(gw.app, seller, pixBody(), 'daily');
    assert.equal(first.statusCode, 201);
    current = new Date(T0.getTime() + 86_400_000 - 1000);
    const replay = await post(gw.app, seller, pixBody(), 'daily');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    // a different body is still refused while the key is kept
    assert.equal((await post(gw.app, seller, pixBody(20000), 'daily')).statusCode, 422);
    current = new Date(T0.getTime() + 86_400_000 + 1000);
    const fresh = await post(gw.app, seller, pixBody(), 'daily');
    assert.equal(fresh.statusCode, 201);
    assert.equal(fresh.headers['idempotent-replayed'], undefined);
    assert.notEqual(fresh.json().sale.id, first.json().sale.id);
    assert.equal(fresh.json().sale.createdAt, current.toISOString());
    assert.equal(await countFor(seller), 2);
    // the key now holds the new answer
    assert.equal((await post(gw.app, seller, pixBody(), 'daily')).body, fresh.body);
    // and an expired key may also carry a different body
    current = new Date(T0.getTime() + 3 * 86_400_000);
    assert.equal((await post(gw.app, seller, pixBody(20000), 'daily')).statusCode, 201);
    current = T0;
  });

  test('the expiry job deletes keys past their 24 h, and only those', async () => {
    current = T0;
    const seller = await gw.createSeller();
    assert.equal((await post(gw.app, seller, pixBody(), 'old-1')).statusCode, 201);
    current = new Date(T0.getTime() + 12 * 3_600_000);
    assert.equal((await post(gw.app, seller, pixBody(), 'young-1')).statusCode, 201);
    const keys = async () =>
      (await gw.ctx.db.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE seller_id = $1 ORDER BY key', [seller.id])).rows.map(
        (r) => r.key,
      );
    current = new Date(T0.getTime() + 86_400_000 + 1000);
    for (let i = 0; i < 10 && (await idempotencyExpiryJob.run(gw.ctx)) > 0; i++);
    assert.deepEqual(await keys(), ['young-1']);
    current = new Date(T0.getTime() + 2 * 86_400_000);
    for (let i = 0; i < 10 && (await idempotencyExpiryJob.run(gw.ctx)) > 0; i++);
    assert.deepEqual(await keys(), []);
    current = T0;
  });

  test('the expiry job never deletes what changed under it: a claim taken over, an expired answer replaced', {
    skip: onPostgres ? false : 'PostgreSQL only: two connections',
  }, async () => {
    current = T0;
    const seller = await gw.createSeller();
    await gw.ctx.db.query(
      `INSERT INTO idempotency_claims (seller_id, endpoint, key, claimed_by, claimed_until) VALUES ($1, 'POST /api/sales', 'lapsed', 'dead', clock_timestamp() - interval '1 minute')`,
      [seller.id],
    );
    await gw.ctx.db.query(
      `INSERT INTO idempotency_keys (seller_id, endpoint, key, request_hash, response_status, response_body, expires_at, created_at)
       VALUES ($1, 'POST /api/sales', 'expired', 'h', 201, 'old', $2, $3)`,
      [seller.id, new Date(T0.getTime() - 3_600_000), new Date(T0.getTime() - 86_400_000)],
    );
    // Another request, mid-statement: it takes the lapsed claim over and replaces the expired answer.
    const other = new pg.Client({ connectionString: gw.config.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        `UPDATE idempotency_claims SET claimed_by = 'new holder', claimed_until = clock_timestamp() + interval '1 minute' WHERE seller_id = $1 AND key = 'lapsed'`,
        [seller.id],
      );
      await other.query(`UPDATE idempotency_keys SET response_body = 'fresh', expires_at = $2 WHERE seller_id = $1 AND key = 'expired'`, [
        seller.id,
        new Date(T0.getTime() + 86_400_000),
      ]);
      const job = idempotencyExpiryJob.run(gw.ctx); // waits on the rows the other request holds
      await new Promise((r) => setTimeout(r, 300));
      await other.query('COMMIT');
      await job;
    } finally {
      await other.end();
    }
    const claims = await gw.ctx.db.query('SELECT claimed_by FROM idempotency_claims WHERE seller_id = $1', [seller.id]);
    assert.deepEqual(claims.rows, [{ claimed_by: 'new holder' }], "the new holder's claim stands");
    const answers = await gw.ctx.db.query('SELECT response_body FROM idempotency_keys WHERE seller_id = $1', [seller.id]);
    assert.deepEqual(answers.rows, [{ response_body: 'fresh' }], 'the fresh answer stands');
  });

  test('a deeply nested body with an Idempotency-Key is a 400, not a 500', async () => {
    current = T0;
    const seller = await gw.createSeller();
    const deep = `${'['.repeat(5000)}1${']'.repeat(5000)}`;
    const payload = JSON.stringify({ ...pixBody(), amount: 'x' }).replace('"x"', deep);
    const withoutKey = await post(gw.app, seller, payload);
    assert.equal(withoutKey.statusCode, 400);
    const withKey = await post(gw.app, seller, payload, 'deep-1');
    assert.equal(withKey.statusCode, 400, withKey.body);
  });
});
