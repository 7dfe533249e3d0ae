// Keys claimed before a provider call, the embedded PSP's charges and balance reads go to the
// database in groups (src/db/group-write.ts), as sales do: each still decided alone.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Claim, claimKey } from '../../src/http/idempotency-claim.ts';
import { readBalanceInGroup } from '../../src/ledger/balances.ts';
import { insertCobInGroup, type NewCob } from '../../src/providers/sandbox/psp/cob-store.ts';
import { countingDb } from '../helpers/counting-db.ts';
import { pixExample } from '../helpers/fixtures.ts';
import { fund } from '../helpers/funding.ts';
import { type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

const endpoint = 'POST /api/sales';

describe('claims, charges and balance reads in groups', () => {
  let gw: Gateway;
  let seller: SellerKeys;

  before(async () => {
    gw = await startGateway();
    seller = await gw.createSeller();
  });
  after(() => gw?.close());

  const ids = (key: string) => ({ sellerId: seller.id, endpoint, key });

  test('claims at once: fresh keys claimed, an answered key replayed (its claim dropped), a held key held', async () => {
    const prefix = randomUUID();
    const key = (name: string) => `${prefix}-${name}`;
    await gw.ctx.db.query(
      `INSERT INTO idempotency_keys (seller_id, endpoint, key, request_hash, response_status, response_body, expires_at, created_at)
       VALUES ($1, $2, $3, 'hash', 201, '{"answered":true}', now() + interval '1 day', now())`,
      [seller.id, endpoint, key('answered')],
    );
    await gw.ctx.db.query(
      `INSERT INTO idempotency_claims (seller_id, endpoint, key, claimed_by, claimed_until)
       VALUES ($1, $2, $3, 'another request', clock_timestamp() + interval '1 minute')`,
      [seller.id, endpoint, key('held')],
    );
    const statements: string[] = [];
    const db = countingDb(gw.ctx.db, statements);
    // Two go at once (two statements out); the other four wait and go together.
    const names = ['a', 'b', 'c', 'answered', 'held', 'd'];
    const claims: Claim[] = await Promise.all(names.map((name) => claimKey(db, ids(key(name)), new Date())));
    assert.deepEqual(
      claims.map((c) => c.kind),
      ['claimed', 'claimed', 'claimed', 'answered', 'held', 'claimed'],
    );
    assert.equal(statements.length, 3, 'two alone, then one group of four');
    const answered = claims[3] as Extract<Claim, { kind: 'answered' }>;
    assert.deepEqual([answered.status, answered.body, answered.requestHash], [201, '{"answered":true}', 'hash']);
    const rows = await gw.ctx.db.query<{ key: string; claimed_by: string }>(
      'SELECT key, claimed_by FROM idempotency_claims WHERE seller_id = $1 AND key LIKE $2 ORDER BY key',
      [seller.id, `${prefix}-%`],
    );
    const tokens = new Map(rows.rows.map((r) => [r.key.slice(prefix.length + 1), r.claimed_by]));
    assert.deepEqual([...tokens.keys()].sort(), ['a', 'b', 'c', 'd', 'held'], "the replay's claim is dropped");
    assert.equal(tokens.get('held'), 'another request', "the held key's claim stands");
    for (const [i, name] of names.entries()) {
      const c = claims[i]!;
      if (c.kind === 'claimed') assert.equal(tokens.get(name), c.token, `${name}: its own token`);
    }
    for (const c of claims) if (c.kind === 'claimed') await c.release();
    const left = await gw.ctx.db.query('SELECT 1 FROM idempotency_claims WHERE seller_id = $1 AND key LIKE $2', [seller.id, `${prefix}-%`]);
    assert.equal(left.rows.length, 1, 'released: only the other request’s claim is left');
  });

  test('charges at once: each made with its own fields; a txid already taken answers null and is left as it was', async () => {
    const cob = (n: number, txid = `grp${randomUUID().replaceAll('-', '')}`): NewCob => ({
      txid,
      fields: { expiracao: 3600 + n, originalCents: 1000 + n, modalidadeAlteracao: 0, chave: 'c2f5e2a4-3b1d-4f6e-9a7c-1d2e3f4a5b6c' },
      criacao: new Date(),
      locToken: randomUUID().replaceAll('-', ''),
      location: `psp.example/loc/${n}`,
      pixCopiaECola: `code-${n}`,
    });
    const taken = cob(0);
    assert.ok(await insertCobInGroup(gw.ctx.db, taken), 'made alone');
    const statements: string[] = [];
    const db = countingDb(gw.ctx.db, statements);
    const cobs = [cob(1), cob(2), cob(3), { ...cob(4), txid: taken.txid }, cob(5)];
    const rows = await Promise.all(cobs.map((c) => insertCobInGroup(db, c)));
    assert.equal(statements.length, 3, 'two alone, then one group of three');
    for (const [i, row] of rows.entries()) {
      if (i === 3) {
        assert.equal(row, null, 'the taken txid');
        continue;
      }
      assert.ok(row, `charge ${i} made`);
      assert.deepEqual(
        [row.txid, row.expiracao, Number(row.original_cents), row.location, row.pix_copia_e_cola, row.revisao, row.status],
        [cobs[i]!.txid, 3600 + i + 1, 1000 + i + 1, `psp.example/loc/${i + 1}`, `code-${i + 1}`, 0, 'ATIVA'],
      );
    }
    const stored = await gw.ctx.db.query<{ original_cents: string }>('SELECT original_cents FROM sandbox_psp_cobs WHERE txid = $1', [taken.txid]);
    assert.equal(Number(stored.rows[0]!.original_cents), 1000, 'the taken charge is as it was');
  });

  test('keyed dynamic PIX sales at once, some keys sent thrice: one charge and one sale per key, every answer its key’s', async () => {
    const count = async (table: string) => (await gw.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
    const [cobsBefore, salesBefore] = [await count('sandbox_psp_cobs'), await count('transactions')];
    const keys = Array.from({ length: 8 }, () => randomUUID());
    const sends = keys.flatMap((key, i) => Array.from({ length: i < 3 ? 3 : 1 }, () => ({ key, amount: 2000 + i })));
    const answers = await Promise.all(
      sends.map(({ key, amount }) =>
        gw.app.inject({ method: 'POST', url: '/api/sales', headers: { ...seller.headers, 'idempotency-key': key }, payload: pixExample({ amount }) }),
      ),
    );
    assert.equal((await count('sandbox_psp_cobs')) - cobsBefore, 8, 'one charge at the PSP per key');
    assert.equal((await count('transactions')) - salesBefore, 8, 'one sale per key');
    for (const key of keys) {
      const mine = answers.filter((_, i) => sends[i]!.key === key);
      const created = mine.filter((r) => r.statusCode === 201);
      for (const r of mine) assert.ok(r.statusCode === 201 || r.json().errorType === 'IDEMPOTENCY_KEY_IN_USE', r.body);
      assert.equal(created.filter((r) => r.headers['idempotent-replayed'] !== 'true').length, 1, 'one first answer');
      assert.equal(new Set(created.map((r) => r.body)).size, 1, 'replays are the first answer, byte for byte');
      const sale = created[0]!.json().sale;
      assert.equal(Number(sale.amount), sends.find((s) => s.key === key)!.amount);
      assert.match(sale.payment.pix.key, /^000201/, 'a BR Code');
      assert.match(sale.payment.pix.qrCodeBase64, /^data:image\/png;base64,/);
    }
  });

  test('balance reads at once, of several sellers and of one seller twice: each its own, and each sees what was committed before it', async () => {
    const sellers = [seller, await gw.createSeller(), await gw.createSeller(), await gw.createSeller()];
    const before = (await readBalanceInGroup(gw.ctx.db, seller.id)).available;
    await fund(gw, sellers[1]!.id, 700);
    await fund(gw, sellers[2]!.id, 1_300);
    const statements: string[] = [];
    const db = countingDb(gw.ctx.db, statements);
    const asked = [0, 1, 2, 3, 1, 2];
    const read = await Promise.all(asked.map((i) => readBalanceInGroup(db, sellers[i]!.id)));
    assert.equal(statements.length, 3, 'two alone, then one for the other four');
    assert.deepEqual(
      read.map((b) => [b.available, b.blocked, b.total]),
      [
        [before, 0, before],
        [700, 0, 700],
        [1_300, 0, 1_300],
        [0, 0, 0],
        [700, 0, 700],
        [1_300, 0, 1_300],
      ],
    );
    // Reads that wait for their turn behind others still start after they were asked: they see the write.
    await fund(gw, sellers[3]!.id, 50);
    const after = await Promise.all(Array.from({ length: 5 }, () => readBalanceInGroup(db, sellers[3]!.id)));
    assert.deepEqual(
      after.map((b) => b.available),
      [50, 50, 50, 50, 50],
    );
    const res = await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: sellers[2]!.headers });
    assert.deepEqual(res.json(), { available: 1_300, blocked: 0, total: 1_300 });
  });
});
