/**
 * The fees of each account's record (CONTRACT §15): each fee the record shows is posted once as the
 * platform's cost at that account, never a seller's.
 */
import type { Queryable } from '../db/db.ts';
import { one, run, sql } from '../db/sql.ts';
import type { RecordWindow } from '../providers/record.ts';

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
