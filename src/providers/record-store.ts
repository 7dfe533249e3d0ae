/**
 * Each account's record as read from its provider (CONTRACT §15), kept once: a provider line is
 * stored once per account whatever number of times it is read (Adyen announces a report once; an
 * API is read again each day), page by page, never a day in memory.
 */
import type { Queryable } from '../db/db.ts';
import { run, sql } from '../db/sql.ts';
import type { ProviderMovement } from './record.ts';

/** Stores a page of the record; a row already kept stays as it was first read. */
export async function keepMovements(q: Queryable, account: string, page: ProviderMovement[]): Promise<void> {
  const rows = page.filter((m) => m.amount !== 0);
  for (const m of rows) {
    if (!Number.isSafeInteger(m.amount)) throw new Error(`${account}: movement ${m.id} has ${m.amount}, not integer cents`);
    if (Number.isNaN(m.at.getTime())) throw new Error(`${account}: movement ${m.id} has no booking time`);
  }
  if (rows.length === 0) return;
  await run(
    q,
    sql`INSERT INTO provider_movements (account, id, kind, reference, amount, at, detail)
        SELECT ${account}, x.id, x.kind, x.reference, x.amount, x.at, x.detail
        FROM unnest(${rows.map((m) => m.id)}::text[], ${rows.map((m) => m.kind)}::text[], ${rows.map((m) => m.reference)}::text[],
          ${rows.map((m) => m.amount)}::bigint[], ${rows.map((m) => m.at.toISOString())}::timestamptz[],
          ${rows.map((m) => JSON.stringify(m.detail ?? null))}::jsonb[]) AS x (id, kind, reference, amount, at, detail)
        ON CONFLICT (account, id) DO NOTHING`,
  );
}
