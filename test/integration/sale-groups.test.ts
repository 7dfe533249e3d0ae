// Sales written in groups (src/sales/sale-writes.ts): sales that reach the database together share
// one statement, and each still stands alone: its own id, items, key and answer, its own failure.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/db/db.ts';
import { type SaleRow, writeSale } from '../../src/sales/sale-writes.ts';
import { countingDb } from '../helpers/counting-db.ts';
import { cardExample, pixExample, saleRowExample } from '../helpers/fixtures.ts';
import { type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

type Json = Record<string, unknown>;

describe('sales written in groups', () => {
  let gw: Gateway;
  let seller: SellerKeys;

  before(async () => {
    gw = await startGateway();
    seller = await gw.createSeller();
  });
  after(() => gw?.close());

  const post = (body: Json, key?: string) =>
    gw.app.inject({ method: 'POST', url: '/api/sales', headers: { ...seller.headers, ...(key ? { 'idempotency-key': key } : {}) }, payload: body });

  test('40 sales at once, keyed and not, card and static PIX: each written once, with its own amount, items and answer', async () => {
    const bodies = Array.from({ length: 40 }, (_, i) => {
      const items = Array.from({ length: 1 + (i % 3) }, (_, k) => ({
        title: `item ${i}.${k}`,
        unitPrice: 1000 + i,
        quantity: 1 + k,
        tangible: false,
      }));
      const amount = items.reduce((sum, it) => sum + it.unitPrice * it.quantity, 0);
      return i % 2 === 0
        ? { ...cardExample(), amount, items, shipping: undefined }
        : { ...pixExample({ amount, postbackUrl: null, pix: { expiresInSeconds: null } }), items };
    });
    const before = await countOf(gw.ctx.db, seller.id);
    const answers = await Promise.all(bodies.map((body, i) => post(body as Json, i % 4 < 2 ? randomUUID() : undefined)));
    for (const res of answers) assert.equal(res.statusCode, 201, res.body);
    assert.equal(await countOf(gw.ctx.db, seller.id), before + 40);
    const ids = new Set<number>();
    for (const [i, res] of answers.entries()) {
      assert.equal(res.statusCode, 201, res.body);
      const sale = res.json().sale;
      ids.add(sale.id);
      assert.equal(Number(sale.amount), (bodies[i] as { amount: number }).amount);
      const read = await gw.app.inject({ method: 'GET', url: `/api/transactions/${sale.id}`, headers: seller.headers });
      assert.equal(read.statusCode, 200, read.body);
      const t = read.json();
      assert.equal(Number(t.amount), (bodies[i] as { amount: number }).amount);
      assert.deepEqual(
        t.items.map((it: Json) => it.title),
        (bodies[i] as { items: { title: string }[] }).items.map((it) => it.title),
        'its own items, in order',
      );
    }
    assert.equal(ids.size, 40, 'forty ids');
  });

  test('the same key sent many times at once: one sale, and every answer is that sale', async () => {
    const key = randomUUID();
    const body = { ...cardExample(), amount: 4321, items: [{ title: 'once', unitPrice: 4321, quantity: 1, tangible: false }], shipping: undefined };
    const before = await countOf(gw.ctx.db, seller.id);
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(body as Json, key)));
    assert.equal(await countOf(gw.ctx.db, seller.id), before + 1, 'one sale');
    const created = answers.filter((r) => r.statusCode === 201);
    const inUse = answers.filter((r) => r.statusCode === 409);
    assert.equal(created.length + inUse.length, 8, answers.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
    for (const r of inUse) assert.equal(r.json().errorType, 'IDEMPOTENCY_KEY_IN_USE');
    assert.equal(created.filter((r) => r.headers['idempotent-replayed'] !== 'true').length, 1, 'one first answer');
    assert.equal(new Set(created.map((r) => r.body)).size, 1, 'every replay is the first answer, byte for byte');
  });

  test('a sale the server refuses fails alone: the others of its statement are written', async () => {
    const statements: string[] = [];
    const counted = countingDb(gw.ctx.db, statements);
    const sale = (amount: number, sellerId = seller.id): SaleRow & { answer: null } => ({
      ...saleRowExample(sellerId, amount, new Date()),
      answer: null,
    });
    // Two go at once (two statements out); the next four wait and go together, one of them for a
    // seller that does not exist (the foreign key refuses it).
    const writes = [101, 102, 103, 104, 105, 106].map((amount) => writeSale(counted, sale(amount, amount === 104 ? 999_999_999 : seller.id)));
    const results = await Promise.allSettled(writes);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    assert.equal(statements.length, 3 + 4, 'two alone, one group of four, then its four one at a time');
    for (const [i, r] of results.entries()) {
      if (r.status !== 'fulfilled') continue;
      const row = await gw.ctx.db.query<{ amount: number }>('SELECT amount FROM transactions WHERE id = $1', [r.value]);
      assert.equal(Number(row.rows[0]!.amount), 101 + i);
    }
  });
});

const countOf = async (db: Db, sellerId: number) =>
  (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE seller_id = $1', [sellerId])).rows[0]!.n;
