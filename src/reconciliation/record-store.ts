/**
 * Where each account's record is kept once read (CONTRACT §15): a provider row is stored once per
 * account whatever number of times it is read, page by page (never a day in memory), and each fee
 * the record shows is posted once as the platform's cost at that account, never a seller's.
 */
import type { Queryable } from '../db/db.ts';
import { one, run, sql } from '../db/sql.ts';
import type { ProviderMovement, RecordWindow } from '../providers/record.ts';

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

const fee_batch = 1_000;
const max_fee_batches = 10_000;

/**
 * Posts the record's fees in `window` not yet posted: the account's funds lowered, provider_fees
 * raised as the platform's cost (a posting of no seller). Answers how many.
 */
export async function postFees(q: Queryable, account: string, window: RecordWindow): Promise<number> {
  const funds = `customer_funds:${account}`;
  const fees = `provider_fees:${account}`;
  let total = 0;
  for (let i = 0; i < max_fee_batches; i++) {
    const n = one(
      await run<{ n: number }>(
        q,
        sql`WITH due AS (
              SELECT m.id, m.amount, m.reference FROM provider_movements m
              WHERE m.account = ${account} AND m.kind = 'FEE' AND m.at >= ${window.from} AND m.at < ${window.to}
                AND NOT EXISTS (SELECT 1 FROM journal_lines l WHERE l.account = ${fees} AND l.reference = m.id)
              ORDER BY m.at, m.id LIMIT ${fee_batch}
            ), ids AS (SELECT nextval('postings_id_seq') AS posting_id, due.* FROM due),
            written AS (INSERT INTO postings (id, kind, seller_id) SELECT posting_id, 'PROVIDER_FEE', NULL FROM ids RETURNING id),
            lines AS (
              INSERT INTO journal_lines (posting_id, account, seller_id, amount, reference)
              SELECT ids.posting_id, x.account, NULL, x.amount, x.reference
              FROM ids CROSS JOIN LATERAL (VALUES (${funds}, -ids.amount, ids.reference), (${fees}, ids.amount, ids.id)) AS x (account, amount, reference)
            )
            SELECT count(*)::int AS n FROM written`,
      ),
    ).n;
    total += n;
    if (n < fee_batch) break;
  }
  return total;
}
