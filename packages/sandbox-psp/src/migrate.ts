/**
 * The embedded PSP's own migrations (../migrations), into its own schema `sandbox_psp`, applied when
 * it starts: a database whose rails are all real never has it. Each file once, in name order, under
 * an advisory lock so that processes starting together apply it once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './sql.ts';

const folder = fileURLToPath(new URL('../migrations', import.meta.url));

export async function migrate(db: Db): Promise<void> {
  const files = readdirSync(folder)
    .filter((name) => name.endsWith('.sql'))
    .sort();
  await db.tx(async (q) => {
    await q.query("SELECT pg_advisory_xact_lock(hashtext('sandbox_psp migrations'))");
    await q.query('CREATE SCHEMA IF NOT EXISTS sandbox_psp');
    await q.query('CREATE TABLE IF NOT EXISTS sandbox_psp.migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await q.query<{ name: string }>('SELECT name FROM sandbox_psp.migrations')).rows.map((r) => r.name));
    for (const name of files.filter((f) => !done.has(f))) {
      // One command per query: a script is split on its statement marker.
      for (const statement of readFileSync(join(folder, name), 'utf8').split(/^-- statement$/m)) {
        if (statement.replace(/--.*$/gm, '').trim() !== '') await q.query(statement);
      }
      await q.query('INSERT INTO sandbox_psp.migrations (name) VALUES ($1)', [name]);
    }
  });
}
