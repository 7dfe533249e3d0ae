import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Db } from '../../src/db/db.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { openDb } from '../../src/db/open.ts';
import { splitHistory } from '../../src/ledger/account-split.ts';
import { verifyLedger } from '../../src/ledger/verify.ts';
import { recordAccounts } from '../../src/providers/accounts.ts';
import { freshDatabase, onPostgres } from '../helpers/databases.ts';

test('migrations apply once; a second run applies nothing', async () => {
  const database = await freshDatabase();
  const db = await openDb(database.url, mkdtempSync(join(tmpdir(), 'gw-mig-')));
  try {
    const first = await migrate(db);
    assert.deepEqual(
      first,
      loadMigrations().map((m) => m.name),
    );
    assert.deepEqual(await migrate(db), []);
  } finally {
    await db.close();
    await database.drop();
  }
});

test('two processes migrating at once: each migration applied exactly once', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
  const database = await freshDatabase();
  const dbs = await Promise.all([1, 2, 3].map(() => openDb(database.url, '.')));
  try {
    const results = await Promise.all(dbs.map((db) => migrate(db)));
    assert.deepEqual(
      results.flat().sort(),
      loadMigrations()
        .map((m) => m.name)
        .sort(),
    );
    const rows = await dbs[0]!.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
    assert.equal(rows.rows[0]!.n, loadMigrations().length);
  } finally {
    for (const db of dbs) await db.close();
    await database.drop();
  }
});

test('an embedded database in a directory keeps its data across restarts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-pglite-'));
  const first = await openDb(undefined, dir);
  await migrate(first);
  await first.query("INSERT INTO sellers (name, email) VALUES ('Persisted', 'p@example.com')");
  await first.close();
  const second = await openDb(undefined, dir);
  assert.deepEqual(await migrate(second), []);
  const rows = await second.query<{ name: string }>('SELECT name FROM sellers');
  assert.deepEqual(
    rows.rows.map((r) => r.name),
    ['Persisted'],
  );
  await second.close();
});

test('migration 013 gives every existing seller its own signing secret of 32 bytes', async () => {
  const database = await freshDatabase();
  const db = await openDb(database.url, mkdtempSync(join(tmpdir(), 'gw-mig-')));
  try {
    await migrate(
      db,
      loadMigrations().filter((m) => m.version < 13),
    );
    await db.query("INSERT INTO sellers (name, email) VALUES ('A', 'a@example.com'), ('B', 'b@example.com')");
    await migrate(db);
    const rows = (await db.query<{ secret: string; expires_at: Date | null }>('SELECT secret, expires_at FROM signing_secrets ORDER BY seller_id'))
      .rows;
    assert.equal(rows.length, 2);
    for (const r of rows) {
      assert.match(r.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(r.secret.slice(6), 'base64').length, 32);
      assert.equal(r.expires_at, null);
    }
    assert.notEqual(rows[0]!.secret, rows[1]!.secret);
  } finally {
    await db.close();
    await database.drop();
  }
});

/** A database migrated up to (not including) `version`, handed to `fill`, then migrated to the end. */
async function migratedAcross(version: number, fill: (db: Db) => Promise<void>, check: (db: Db) => Promise<void>) {
  const database = await freshDatabase();
  const db = await openDb(database.url, mkdtempSync(join(tmpdir(), 'gw-mig-')));
  try {
    await migrate(
      db,
      loadMigrations().filter((m) => m.version < version),
    );
    await fill(db);
    await migrate(db);
    await check(db);
  } finally {
    await db.close();
    await database.drop();
  }
}

const tablesLike = async (db: Db, pattern: string) =>
  (
    await db.query<{ name: string }>(
      "SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_name LIKE $1 OR table_schema LIKE $1 ORDER BY 1",
      [pattern],
    )
  ).rows.map((r) => r.name);

test('migration 027: a database whose sandbox never held anything has no sandbox table left', async () => {
  await migratedAcross(
    27,
    async () => {},
    async (db) => {
      assert.deepEqual(await tablesLike(db, 'sandbox%'), []);
      assert.equal((await db.query("SELECT to_regnamespace('sandbox_psp') AS s")).rows[0]!.s, null);
    },
  );
});

test("migration 027: a sandbox's state moves into the PSP's own schema, whole, its first migration recorded", async () => {
  await migratedAcross(
    27,
    async (db) => {
      await db.query(
        `INSERT INTO sandbox_psp_cobs (txid, criacao, expiracao, original_cents, chave, loc_token, location, loc_criacao, pix_copia_e_cola)
         VALUES ('kept0000000000000000000000001', now(), 3600, 1500, 'k', 'tok', 'psp.example/loc/1', now(), 'code')`,
      );
      await db.query("SELECT nextval('sandbox_psp_charge_ids')");
    },
    async (db) => {
      assert.deepEqual(await tablesLike(db, 'sandbox_psp_%'), [], 'none left in the gateway schema');
      const cob = await db.query<{ original_cents: string }>(
        "SELECT original_cents FROM sandbox_psp.cobs WHERE txid = 'kept0000000000000000000000001'",
      );
      assert.equal(Number(cob.rows[0]!.original_cents), 1500);
      assert.equal(Number((await db.query<{ n: string }>("SELECT nextval('sandbox_psp.charge_ids') AS n")).rows[0]!.n), 1000002);
      assert.deepEqual((await db.query<{ name: string }>('SELECT name FROM sandbox_psp.migrations')).rows, [{ name: '001_psp.sql' }]);
    },
  );
});

test('migration 024: a boleto sale keeps the location of its Pix, read from its BR Code', async () => {
  const code =
    '00020101021226830014br.gov.bcb.pix2561qrcodespix.sejaefi.com.br/v2/41e0badf811a4ce6ad8a80b306821fce5204000053039865802BR5905EFISA6008SAOPAULO62070503***63045A3B';
  await migratedAcross(
    24,
    async (db) => {
      const seller = await db.query<{ id: number }>("INSERT INTO sellers (name, email) VALUES ('A', 'a@example.com') RETURNING id");
      await db.query(
        `INSERT INTO transactions (seller_id, status, payment_method, amount, fee_schedule, customer_name, customer_email, external_transaction_id, created_at, updated_at, boleto_pix_code, provider)
         VALUES ($1, 'PENDENTE', 'BOLETO', 1000, '{}', 'M', 'm@example.com', '1', now(), now(), $2, 'efi'), ($1, 'PENDENTE', 'BOLETO', 1000, '{}', 'M', 'm@example.com', '2', now(), now(), 'not a code', 'efi')`,
        [seller.rows[0]!.id, code],
      );
    },
    async (db) => {
      const rows = await db.query<{ boleto_pix_location: string | null }>(
        'SELECT boleto_pix_location FROM transactions ORDER BY external_transaction_id',
      );
      assert.deepEqual(
        rows.rows.map((r) => r.boleto_pix_location),
        ['qrcodespix.sejaefi.com.br/v2/41e0badf811a4ce6ad8a80b306821fce', null],
      );
    },
  );
});

test('migration 028 and the split at start: history moves to its accounts once, no line rewritten, no balance moved', async () => {
  const e2e = 'E00000000202611271200abcdefghijk';
  await migratedAcross(
    28,
    async (db) => {
      const seller = Number(
        (await db.query<{ id: number }>("INSERT INTO sellers (name, email) VALUES ('A', 'a@example.com') RETURNING id")).rows[0]!.id,
      );
      const sale = await db.query<{ id: number }>(
        `INSERT INTO transactions (seller_id, status, payment_method, amount, fee_schedule, customer_name, customer_email, external_transaction_id, created_at, updated_at, provider, pix_end_to_end_id)
         VALUES ($1, 'PAGO', 'PIX', 10000, '{}', 'M', 'm@example.com', 'txid1', now(), now(), 'api-pix', $2) RETURNING id`,
        [seller, e2e],
      );
      const cashout = await db.query<{ id: number }>(
        `INSERT INTO cashouts (seller_id, status, amount, fee_fixed, fee_variable, fee_total, net_amount, pix_key, pix_key_type, created_at, updated_at, provider, provider_data)
         VALUES ($1, 'COMPLETED', 1000, 200, 0, 200, 800, '52998224725', 'CPF', now(), now(), 'efi', '{"idEnvio":"abc123def4567"}') RETURNING id`,
        [seller],
      );
      const posting = async (kind: string, resource: string, id: number, lines: [string, number][]) => {
        const p = await db.query<{ id: number }>(
          `INSERT INTO postings (kind, seller_id, ${resource}, created_at) VALUES ($1, $2, $3, '2026-11-27T15:00:00Z') RETURNING id`,
          [kind, seller, id],
        );
        await db.query(
          "INSERT INTO journal_lines (posting_id, account, seller_id, amount) SELECT $1, x.account, CASE WHEN x.account IN ('available', 'blocked') THEN $2::bigint END, x.amount FROM unnest($3::text[], $4::bigint[]) AS x (account, amount)",
          [p.rows[0]!.id, seller, lines.map((l) => l[0]), lines.map((l) => l[1])],
        );
      };
      await posting('FIRST_PAYMENT', 'transaction_id', sale.rows[0]!.id, [
        ['customer_funds', -10000],
        ['available', 9801],
        ['fee_revenue', 199],
      ]);
      await posting('CASHOUT_COMPLETED', 'cashout_id', cashout.rows[0]!.id, [
        ['blocked', -1000],
        ['payouts', 800],
        ['fee_revenue', 200],
      ]);
      await db.query('INSERT INTO balances (seller_id, available, blocked) VALUES ($1, 9801, -1000)', [seller]);
    },
    async (db) => {
      await recordAccounts(db, {
        pix: { id: 'api-pix:sandbox', connector: 'api-pix' },
        card: { id: 'sandbox', connector: 'sandbox' },
        boleto: { id: 'efi:sandbox', connector: 'efi' },
        payout: { id: 'efi:sandbox', connector: 'efi' },
      });
      assert.equal(await splitHistory(db), 2);
      assert.equal(await splitHistory(db), 0, 'split once');
      const sums = await db.query<{ account: string; reference: string | null; total: string }>(
        "SELECT account, reference, sum(amount)::bigint AS total FROM journal_lines WHERE account NOT IN ('available', 'blocked', 'fee_revenue') GROUP BY 1, 2 HAVING sum(amount) <> 0 ORDER BY 1",
      );
      assert.deepEqual(
        sums.rows.map((r) => [r.account, r.reference, Number(r.total)]),
        [
          ['customer_funds:api-pix:sandbox', e2e, -10000],
          ['customer_funds:efi:sandbox', 'abc123def4567', 800],
        ],
        'the history of customer_funds and payouts is at its accounts, with its references',
      );
      const splits = await db.query<{ created_at: Date; splits: string }>("SELECT created_at, splits FROM postings WHERE kind = 'ACCOUNT_SPLIT'");
      assert.equal(splits.rows.length, 2);
      for (const s of splits.rows) assert.equal(s.created_at.toISOString(), '2026-11-27T15:00:00.000Z', 'dated like the posting it splits');
      const balances = await db.query<{ available: string; blocked: string }>('SELECT available, blocked FROM balances');
      assert.deepEqual([Number(balances.rows[0]!.available), Number(balances.rows[0]!.blocked)], [9801, -1000]);
      assert.equal((await verifyLedger(db)).ok, true);
      assert.equal(
        Number((await db.query<{ n: string }>('SELECT funds_split_before AS n FROM installation')).rows[0]!.n),
        0,
        'nothing left to split',
      );
    },
  );
});

test('a process of the previous release goes on after a migration adds a column under its prepared statements', {
  skip: !onPostgres && 'needs PostgreSQL',
}, async () => {
  const database = await freshDatabase();
  const old = await openDb(database.url, '.', { poolSize: 1 }); // one connection: the statement is prepared on it
  const upgrade = await openDb(database.url, '.');
  try {
    await migrate(old);
    const read = `SELECT * FROM sellers WHERE id > $1`;
    const inTx = () => old.tx((q) => q.query(read, [0]));
    assert.equal((await old.query(read, [0])).rowCount, 0);
    assert.equal((await inTx()).rowCount, 0);
    // What the next release's migration does while this process runs.
    await upgrade.query(`ALTER TABLE sellers ADD COLUMN next_release_field text`);
    const single = await old.query<{ next_release_field: string | null }>(read, [0]);
    assert.equal(single.rowCount, 0, 'a statement prepared before the migration is prepared again, not failed');
    await old.query(`SELECT pg_sleep(0)`);
    await upgrade.query(`ALTER TABLE sellers ADD COLUMN another_field text`);
    assert.equal((await inTx()).rowCount, 0, 'and inside a transaction, tried again on a new connection');
  } finally {
    await old.close();
    await upgrade.close();
    await database.drop();
  }
});
