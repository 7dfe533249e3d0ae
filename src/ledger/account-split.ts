/**
 * History kept, money per account (CONTRACT §15): a posting written before customer_funds was split
 * per provider account is followed, once, by an ACCOUNT_SPLIT posting that moves its customer_funds
 * and payouts lines to `customer_funds:<account>` of the sale or cashout, naming the provider's
 * reference where the row knows it. No line is rewritten and no seller's balance moves. It runs at
 * each start (after the accounts are recorded on older rows), a batch at a time; rows whose account
 * is still unknown stay on plain customer_funds until their connector is configured again.
 */
import type { Queryable } from '../db/db.ts';
import { one, run, sql } from '../db/sql.ts';

const batch_size = 1_000;
const max_batches = 10_000;

/** Splits what is left of the history; answers the postings split. */
export async function splitHistory(q: Queryable): Promise<number> {
  let total = 0;
  for (let i = 0; i < max_batches; i++) {
    const n = one(await run<{ n: number }>(q, splitBatch)).n;
    total += n;
    if (n < batch_size) break;
  }
  await run(q, sql`UPDATE installation SET funds_split_before = 0 WHERE funds_split_before > 0 AND NOT EXISTS (${unsplit(sql`LIMIT 1`)})`);
  return total;
}

const legacy = sql`('customer_funds', 'payouts')`;

/** Postings of the history with a line to split whose sale or cashout has an account. */
const unsplit = (tail: ReturnType<typeof sql>) => sql`
  SELECT p.id, p.kind, p.seller_id, p.transaction_id, p.cashout_id, p.created_at,
    coalesce(t.paid_account, t.account, c.account) AS account,
    CASE
      WHEN p.kind = 'FIRST_PAYMENT' AND t.payment_method = 'PIX' THEN t.pix_end_to_end_id
      WHEN p.kind = 'FIRST_PAYMENT' AND t.payment_method = 'BOLETO' THEN coalesce(t.pix_end_to_end_id, t.external_transaction_id)
      WHEN p.kind = 'FIRST_PAYMENT' THEN t.external_transaction_id
      WHEN p.kind = 'CASHOUT_COMPLETED' THEN c.provider_data->>'idEnvio'
    END AS reference
  FROM postings p
  LEFT JOIN transactions t ON t.id = p.transaction_id
  LEFT JOIN cashouts c ON c.id = p.cashout_id
  WHERE p.id < (SELECT funds_split_before FROM installation)
    AND coalesce(t.paid_account, t.account, c.account) IS NOT NULL
    AND EXISTS (SELECT 1 FROM journal_lines l WHERE l.posting_id = p.id AND l.account IN ${legacy})
    AND NOT EXISTS (SELECT 1 FROM postings s WHERE s.splits = p.id)
  ORDER BY p.id ${tail}`;

const splitBatch = sql`
  WITH todo AS (${unsplit(sql`LIMIT ${batch_size}`)}),
  ids AS (SELECT nextval('postings_id_seq') AS new_id, todo.* FROM todo),
  written AS (
    INSERT INTO postings (id, kind, seller_id, transaction_id, cashout_id, created_at, splits)
    SELECT new_id, 'ACCOUNT_SPLIT', seller_id, transaction_id, cashout_id, created_at, id FROM ids
    RETURNING id
  ), lines AS (
    INSERT INTO journal_lines (posting_id, account, seller_id, amount, reference, created_at)
    SELECT ids.new_id, x.account, NULL, x.amount, x.reference, ids.created_at
    FROM ids JOIN journal_lines l ON l.posting_id = ids.id AND l.account IN ${legacy}
    CROSS JOIN LATERAL (VALUES (l.account, -l.amount, NULL::text), ('customer_funds:' || ids.account, l.amount, ids.reference))
      AS x (account, amount, reference)
  )
  SELECT count(*)::int AS n FROM written`;
