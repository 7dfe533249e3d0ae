import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { Db, Queryable } from './db.ts';

/**
 * The embedded engine: one in-process connection, so nothing to time out, lose or reconnect.
 * `onClose` runs once the database is closed (it releases DATA_DIR's lock).
 */
export async function openPglite(dir: string, onClose: () => void = () => {}): Promise<Db> {
  if (dir !== 'memory://') mkdirSync(dir, { recursive: true });
  const db = new PGlite(dir);
  await db.waitReady;
  const wrap = (c: { query: PGlite['query'] }): Queryable => ({
    async query<T>(sql: string, params?: unknown[]) {
      const r = await c.query<T>(sql, params as unknown[]);
      return { rows: r.rows, rowCount: r.affectedRows || r.rows.length };
    },
  });
  const self = wrap(db);
  return {
    kind: 'pglite',
    listening: true,
    available: true,
    query: self.query,
    // PGlite is one connection: its transaction() queues callers, which serializes them for us.
    tx: (fn) => db.transaction((t) => fn(wrap(t))),
    async listen(channel, handlers) {
      const unlisten = await db.listen(channel, handlers.onPayload);
      return async () => {
        await unlisten().catch(() => {});
      };
    },
    async close() {
      try {
        await db.close();
      } finally {
        onClose();
      }
    },
  };
}
