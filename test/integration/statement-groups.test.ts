// Keys claimed before a provider call, the embedded PSP's charges and balance reads go to the
// database in groups (src/db/group-write.ts), as sales do: each still decided alone.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { NewCob } from '@pagar/sandbox-psp';
import pg from 'pg';
import { type Claim, claim_lease_ms, claimKey } from '../../src/http/idempotency-claim.ts';
import { readBalanceInGroup } from '../../src/ledger/balances.ts';
import { countingDb, heldAnswers } from '../helpers/counting-db.ts';
import { onPostgres } from '../helpers/databases.ts';
import { pixExample } from '../helpers/fixtures.ts';
import { fund } from '../helpers/funding.ts';

const { insertCobInGroup } = await import('@pagar/sandbox-psp');

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
    // One goes at once (one statement out); the other five wait and go together.
    const names = ['a', 'b', 'c', 'answered', 'held', 'd'];
    const claims: Claim[] = await Promise.all(names.map((name) => claimKey(db, ids(key(name)), 'h', new Date())));
    assert.deepEqual(
      claims.map((c) => c.kind),
      ['claimed', 'claimed', 'claimed', 'answered', 'held', 'claimed'],
    );
    assert.equal(statements.length, 2, 'one alone, then one group of five');
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
    const references = claims.flatMap((c) => (c.kind === 'claimed' ? [c.reference.value] : []));
    assert.equal(new Set(references).size, 4, 'each claim its own reference');
    assert.ok(
      claims.every((c) => c.kind !== 'claimed' || !c.reference.kept),
      'each drawn now, none kept from an earlier claim',
    );
    for (const r of references) assert.match(r, /^[A-Za-z0-9]{20}$/);
    for (const c of claims) if (c.kind === 'claimed') await c.release();
    // A released claim lapses (its reference kept for a retry): only the other request's still lives.
    const left = await gw.ctx.db.query(
      'SELECT 1 FROM idempotency_claims WHERE seller_id = $1 AND key LIKE $2 AND claimed_until > clock_timestamp()',
      [seller.id, `${prefix}-%`],
    );
    assert.equal(left.rows.length, 1, 'released: only the other request’s claim is left');
  });

  test('a group whose claiming waited on a lock starts its leases again: none is committed already lapsing', {
    skip: onPostgres ? false : 'PostgreSQL only: two connections',
  }, async () => {
    const prefix = randomUUID();
    // Another request, mid-statement, claiming the group's second key: the group waits on it.
    const other = new pg.Client({ connectionString: gw.config.databaseUrl });
    await other.connect();
    let claims: Claim[];
    try {
      await other.query('BEGIN');
      await other.query(
        `INSERT INTO idempotency_claims (seller_id, endpoint, key, claimed_by, claimed_until) VALUES ($1, $2, $3, 'other', clock_timestamp() + interval '1 minute')`,
        [seller.id, endpoint, `${prefix}-b`],
      );
      // A claim out (its answer held), so that a and b wait and go together, in one statement.
      const gate: (() => void)[] = [];
      const held: string[] = [];
      const db = heldAnswers(gw.ctx.db, held, gate);
      const first = [claimKey(db, ids(`${prefix}-x`), 'h', new Date())];
      for (let i = 0; i < 300 && gate.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
      const group = Promise.all([claimKey(db, ids(`${prefix}-a`), 'h', new Date()), claimKey(db, ids(`${prefix}-b`), 'h', new Date())]);
      for (const open of gate.splice(0)) open();
      // (Their renewals would go through the held database: stopped; the rows are deleted at the end.)
      for (const c of await Promise.all(first)) if (c.kind === 'claimed') c.stop();
      await new Promise((r) => setTimeout(r, 2_000));
      await other.query('ROLLBACK'); // the other request failed: the key is free
      for (let i = 0; i < 300 && gate.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(held.length, 2, 'a and b went in one statement');
      for (const open of gate.splice(0)) open();
      claims = await group;
    } finally {
      await other.end();
    }
    assert.deepEqual(
      claims.map((c) => c.kind),
      ['claimed', 'claimed'],
    );
    const left = await gw.ctx.db.query<{ key: string; ms: number }>(
      `SELECT key, extract(epoch FROM claimed_until - clock_timestamp()) * 1000 AS ms FROM idempotency_claims WHERE seller_id = $1 AND key = ANY ($2) ORDER BY key`,
      [seller.id, [`${prefix}-a`, `${prefix}-b`]],
    );
    assert.deepEqual(
      left.rows.map((r) => r.key.slice(prefix.length + 1)),
      ['a', 'b'],
    );
    for (const row of left.rows)
      assert.ok(
        Number(row.ms) > claim_lease_ms - 700,
        `${row.key}: ${Number(row.ms).toFixed(0)} ms of lease left (a lease counted from before the wait has ~1 s)`,
      );
    for (const c of claims) if (c.kind === 'claimed') c.stop();
    await gw.ctx.db.query('DELETE FROM idempotency_claims WHERE seller_id = $1 AND key LIKE $2', [seller.id, `${prefix}-%`]);
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
    assert.equal(statements.length, 2, 'one alone, then one group of four');
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
    const stored = await gw.ctx.db.query<{ original_cents: string }>('SELECT original_cents FROM sandbox_psp.cobs WHERE txid = $1', [taken.txid]);
    assert.equal(Number(stored.rows[0]!.original_cents), 1000, 'the taken charge is as it was');
  });

  test('a charge whose text holds a lone surrogate is made, the character replaced (as a text parameter would be)', async () => {
    const txid = `sur${randomUUID().replaceAll('-', '')}`;
    const row = await insertCobInGroup(gw.ctx.db, {
      txid,
      fields: {
        expiracao: 3600,
        originalCents: 100,
        modalidadeAlteracao: 0,
        chave: 'c2f5e2a4-3b1d-4f6e-9a7c-1d2e3f4a5b6c',
        solicitacaoPagador: 'pague \ud800 já 😀',
        devedor: { cpf: '52998224725', nome: 'Maria \udfff' },
      },
      criacao: new Date(),
      locToken: randomUUID().replaceAll('-', ''),
      location: 'psp.example/loc/s',
      pixCopiaECola: 'code',
    });
    assert.ok(row);
    assert.equal(row.solicitacao_pagador, 'pague \ufffd já 😀');
    assert.deepEqual(row.devedor, { cpf: '52998224725', nome: 'Maria \ufffd' });
  });

  test('keyed dynamic PIX sales at once, some keys sent thrice: one charge and one sale per key, every answer its key’s', async () => {
    const count = async (table: string) => (await gw.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
    const [cobsBefore, salesBefore] = [await count('sandbox_psp.cobs'), await count('transactions')];
    const keys = Array.from({ length: 8 }, () => randomUUID());
    const sends = keys.flatMap((key, i) => Array.from({ length: i < 3 ? 3 : 1 }, () => ({ key, amount: 2000 + i })));
    const answers = await Promise.all(
      sends.map(({ key, amount }) =>
        gw.app.inject({ method: 'POST', url: '/api/sales', headers: { ...seller.headers, 'idempotency-key': key }, payload: pixExample({ amount }) }),
      ),
    );
    assert.equal((await count('sandbox_psp.cobs')) - cobsBefore, 8, 'one charge at the PSP per key');
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
    assert.equal(statements.length, 2, 'one alone, then one for the other five');
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
    // A read out, run before a write commits but not yet answered; reads asked after the commit
    // wait for their turn and then see it (a read never shares a statement that started before it).
    const gate: (() => void)[] = [];
    const held: string[] = [];
    const db2 = heldAnswers(gw.ctx.db, held, gate);
    const early = [readBalanceInGroup(db2, sellers[3]!.id)];
    for (let i = 0; i < 300 && gate.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(held.length, 1, 'its statement ran');
    await fund(gw, sellers[3]!.id, 50);
    const late = Array.from({ length: 3 }, () => readBalanceInGroup(db2, sellers[3]!.id));
    for (const open of gate.splice(0)) open();
    for (let i = 0; i < 300 && gate.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    for (const open of gate.splice(0)) open();
    assert.deepEqual(
      (await Promise.all(early)).map((b) => b.available),
      [0],
      'the early read ran before the write',
    );
    assert.deepEqual(
      (await Promise.all(late)).map((b) => b.available),
      [50, 50, 50],
      'the late reads, in one statement of their own, see it',
    );
    assert.equal(held.length, 2);
    const res = await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: sellers[2]!.headers });
    assert.deepEqual(res.json(), { available: 1_300, blocked: 0, total: 1_300 });
  });
});
