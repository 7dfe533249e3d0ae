import type { Db, Queryable } from '../db/db.ts';
import { run, type Sql, sql } from '../db/sql.ts';

/**
 * The shape of every "find what is due, move each" job: the due rows are claimed with FOR UPDATE
 * SKIP LOCKED in one transaction and handled in it, so several workers share the work without
 * handling a row twice. `due` is a SELECT (with its ORDER BY and LIMIT) of the rows to claim.
 */
export async function claimEach<T>(db: Db, due: Sql, handle: (q: Queryable, row: T) => Promise<unknown>): Promise<number> {
  return db.tx(async (q) => {
    const rows = (await run<T>(q, sql`${due} FOR UPDATE SKIP LOCKED`)).rows;
    for (const row of rows) await handle(q, row);
    return rows.length;
  });
}
