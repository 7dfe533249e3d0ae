import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDb } from '../../src/db/open.ts';
import { LedgerInvariantError, type Posting } from '../../src/domain/ledger.ts';
import { readBalance } from '../../src/ledger/balances.ts';
import { post, postIfCovered } from '../../src/ledger/postings.ts';
import { onPostgres } from '../helpers/databases.ts';
import { adminHeaders, type Gateway, startGateway } from '../helpers/gateway.ts';

const credit = (sellerId: number, cents: number, fee = 0): Posting => ({
  kind: 'TEST_CREDIT',
  sellerId,
  lines: [
    { account: 'customer_funds', amount: -cents },
    { account: 'available', amount: cents - fee },
    { account: 'fee_revenue', amount: fee },
  ],
});

describe('ledger: balanced postings, append-only journal, projection, verification', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway();
  });
  after(async () => {
    await gw.close();
  });

  const verify = async () => (await gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders })).json();

  test('a posting moves the balance and verify stays ok', async () => {
    const seller = await gw.createSeller();
    await gw.ctx.db.tx((q) => post(q, credit(seller.id, 15000, 298)));
    await gw.ctx.db.tx((q) =>
      post(q, {
        kind: 'TEST_BLOCK',
        sellerId: seller.id,
        lines: [
          { account: 'available', amount: -1000 },
          { account: 'blocked', amount: 1000 },
        ],
      }),
    );
    const res = await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
    assert.deepEqual(res.json(), { available: 13702, blocked: 1000, total: 14702 });
    const report = await verify();
    assert.equal(report.ok, true);
    assert.ok(report.sellersChecked >= 1, `sellersChecked at least 1 (this seller), got ${report.sellersChecked}`);
    assert.deepEqual(report.mismatches, []);
  });

  test('the application refuses an unbalanced posting before any write', async () => {
    const seller = await gw.createSeller();
    await assert.rejects(
      () => gw.ctx.db.tx((q) => post(q, { kind: 'BAD', sellerId: seller.id, lines: [{ account: 'available', amount: 100 }] })),
      LedgerInvariantError,
    );
    assert.deepEqual(await readBalance(gw.ctx.db, seller.id), { available: 0, blocked: 0, total: 0 });
  });

  test('the database refuses an unbalanced posting written around the application', async () => {
    const seller = await gw.createSeller();
    await assert.rejects(
      () =>
        gw.ctx.db.tx(async (q) => {
          const p = await q.query<{ id: number }>("INSERT INTO postings (kind, seller_id) VALUES ('RAW', $1) RETURNING id", [seller.id]);
          await q.query(
            "INSERT INTO journal_lines (posting_id, account, seller_id, amount) VALUES ($1, 'available', $2, 500), ($1, 'customer_funds', NULL, -499)",
            [p.rows[0]!.id, seller.id],
          );
        }),
      /unbalanced posting/,
    );
  });

  test('the journal is append-only', async () => {
    const seller = await gw.createSeller();
    await gw.ctx.db.tx((q) => post(q, credit(seller.id, 100)));
    await assert.rejects(() => gw.ctx.db.query('UPDATE journal_lines SET amount = amount * 2'), /append-only/);
    await assert.rejects(() => gw.ctx.db.query('DELETE FROM journal_lines'), /append-only/);
    await assert.rejects(() => gw.ctx.db.query('DELETE FROM postings'), /append-only/);
    await assert.rejects(() => gw.ctx.db.query('TRUNCATE journal_lines CASCADE'), /append-only/);
  });

  test('verify reports a projection that drifted from the journal', async () => {
    const seller = await gw.createSeller();
    await gw.ctx.db.tx((q) => post(q, credit(seller.id, 700)));
    await gw.ctx.db.query('UPDATE balances SET available = available + 1 WHERE seller_id = $1', [seller.id]);
    const report = await verify();
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.mismatches.filter((m: { sellerId?: number }) => m.sellerId === seller.id),
      [{ check: 'seller_balance', sellerId: seller.id, balanceAvailable: 701, balanceBlocked: 0, journalAvailable: 700, journalBlocked: 0 }],
    );
    await gw.ctx.db.query('UPDATE balances SET available = available - 1 WHERE seller_id = $1', [seller.id]);
    assert.equal((await verify()).ok, true);
  });

  test('a covered posting never overdraws available', async () => {
    const seller = await gw.createSeller();
    await gw.ctx.db.tx((q) => post(q, credit(seller.id, 1000)));
    const hold = (cents: number): Posting => ({
      kind: 'TEST_HOLD',
      sellerId: seller.id,
      lines: [
        { account: 'available', amount: -cents },
        { account: 'blocked', amount: cents },
      ],
    });
    assert.ok(await gw.ctx.db.tx((q) => postIfCovered(q, hold(600))), '600 of 1000 available is covered');
    assert.equal(await gw.ctx.db.tx((q) => postIfCovered(q, hold(401))), null);
    assert.ok(await gw.ctx.db.tx((q) => postIfCovered(q, hold(400))), 'the last 400 is covered');
    assert.deepEqual(await readBalance(gw.ctx.db, seller.id), { available: 0, blocked: 1000, total: 1000 });
    assert.equal((await verify()).ok, true);
  });

  test('concurrent postings to one seller from many connections sum exactly', async () => {
    const seller = await gw.createSeller();
    const connections = 24;
    const perConnection = 10;
    const db = onPostgres ? await openDb(gw.database.url, gw.config.dataDir, { poolSize: connections }) : gw.ctx.db;
    try {
      const amounts = Array.from({ length: connections * perConnection }, (_, i) => 100 + i);
      await Promise.all(amounts.map((cents, i) => db.tx((q) => post(q, credit(seller.id, cents, i % 7)))));
      const expectedAvailable = amounts.reduce((sum, cents, i) => sum + cents - (i % 7), 0);
      assert.deepEqual(await readBalance(db, seller.id), { available: expectedAvailable, blocked: 0, total: expectedAvailable });
      const lines = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM postings WHERE seller_id = $1', [seller.id]);
      assert.equal(lines.rows[0]!.n, amounts.length);
    } finally {
      if (db !== gw.ctx.db) await db.close();
    }
    assert.equal((await verify()).ok, true);
  });

  test('concurrent covered debits never spend the same cents', async () => {
    const seller = await gw.createSeller();
    await gw.ctx.db.tx((q) => post(q, credit(seller.id, 10 * 1000)));
    const db = onPostgres ? await openDb(gw.database.url, gw.config.dataDir, { poolSize: 30 }) : gw.ctx.db;
    try {
      const hold: Posting = {
        kind: 'TEST_HOLD',
        sellerId: seller.id,
        lines: [
          { account: 'available', amount: -1000 },
          { account: 'blocked', amount: 1000 },
        ],
      };
      const results = await Promise.all(Array.from({ length: 30 }, () => db.tx((q) => postIfCovered(q, hold))));
      assert.equal(results.filter(Boolean).length, 10);
      assert.deepEqual(await readBalance(db, seller.id), { available: 0, blocked: 10000, total: 10000 });
    } finally {
      if (db !== gw.ctx.db) await db.close();
    }
  });
});
