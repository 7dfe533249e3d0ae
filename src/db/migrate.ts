import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

const migrations_dir = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any constant works; it only has to be the same in every process of this gateway.
const migration_lock_key = 728_401_993;
// Beyond the usual statement limit: a migration may rewrite or index a large table.
const migration_timeout_ms = 10 * 60_000;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = migrations_dir): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f, sql: readFileSync(dir + f, 'utf8') }));
}

/**
 * Applies every pending migration in one transaction. The transaction-scoped advisory lock makes a
 * second process that starts at the same moment wait, then see the versions the first one applied.
 */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<string[]> {
  return db.tx(
    async (q) => {
      await q.query('SELECT pg_advisory_xact_lock($1)', [migration_lock_key]);
      await q.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const done = new Set((await q.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
      const applied: string[] = [];
      for (const m of migrations.filter((m) => !done.has(m.version))) {
        await runScript(q, m.sql);
        await q.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        applied.push(m.name);
      }
      return applied;
    },
    { timeoutMs: migration_timeout_ms },
  );
}

// Prepared statements take one command each, so a script is split on the statement marker.
async function runScript(q: { query: Db['query'] }, sql: string): Promise<void> {
  for (const statement of sql
    .split(/^-- statement$/m)
    .map((s) => s.trim())
    .filter(Boolean)) {
    await q.query(statement);
  }
}
