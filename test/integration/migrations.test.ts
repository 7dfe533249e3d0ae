import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { openDb } from '../../src/db/open.ts';
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
