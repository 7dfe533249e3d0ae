import type { Queryable } from '../db/db.ts';
import { assertBalanced, LedgerInvariantError, sellerDelta, withoutZeroLines, type Posting } from '../domain/ledger.ts';

export interface PostedBalance { postingId: number; available: number; blocked: number }

const line_columns = `
  INSERT INTO journal_lines (posting_id, account, seller_id, amount, created_at)
  SELECT p.id, x.account, CASE WHEN x.account IN ('available', 'blocked') THEN p.seller_id END, x.amount, p.created_at
  FROM p, unnest($5::text[], $6::bigint[]) AS x (account, amount)`;

// One statement writes the posting, its lines and the balance projection: a single round trip,
// and the database's balance trigger sees the lines together.
const post_sql = `
  WITH p AS (
    INSERT INTO postings (kind, seller_id, transaction_id, cashout_id) VALUES ($1, $2, $3, $4)
    RETURNING id, seller_id, created_at
  ), l AS (${line_columns}
  ), b AS (
    INSERT INTO balances (seller_id, available, blocked) VALUES ($2, $7, $8)
    ON CONFLICT (seller_id) DO UPDATE
      SET available = balances.available + EXCLUDED.available, blocked = balances.blocked + EXCLUDED.blocked, updated_at = now()
    RETURNING available, blocked
  )
  SELECT p.id AS "postingId", b.available, b.blocked FROM p, b`;

// The conditional form: the balance row is updated only if `available` stays ≥ 0, and the posting
// exists only if that update happened. Under READ COMMITTED a concurrent writer of the same row
// waits, then re-checks the condition against the committed value: no two debits spend one cent.
const post_if_covered_sql = `
  WITH b AS (
    UPDATE balances SET available = available + $7, blocked = blocked + $8, updated_at = now()
    WHERE seller_id = $2 AND available + $7 >= 0
    RETURNING available, blocked
  ), p AS (
    INSERT INTO postings (kind, seller_id, transaction_id, cashout_id) SELECT $1, $2, $3, $4 FROM b
    RETURNING id, seller_id, created_at
  ), l AS (${line_columns}
  )
  SELECT p.id AS "postingId", b.available, b.blocked FROM p, b`;

function params(clean: Posting): unknown[] {
  assertBalanced(clean);
  const delta = sellerDelta(clean);
  return [
    clean.kind, clean.sellerId, clean.transactionId ?? null, clean.cashoutId ?? null,
    clean.lines.map((l) => l.account), clean.lines.map((l) => l.amount), delta.available, delta.blocked,
  ];
}

/**
 * Writes a balanced posting and applies it to the seller's balance, in the caller's transaction.
 * A posting whose lines are all zero (a fee of 0 on a 0 net) moves nothing and is not written.
 */
export async function post(q: Queryable, posting: Posting): Promise<PostedBalance | null> {
  const clean = withoutZeroLines(posting);
  if (clean.lines.length === 0) return null;
  const r = await q.query<PostedBalance>(post_sql, params(clean));
  return r.rows[0]!;
}

/** Like post, but only if the seller's available balance stays ≥ 0; null when it would not. */
export async function postIfCovered(q: Queryable, posting: Posting): Promise<PostedBalance | null> {
  const clean = withoutZeroLines(posting);
  if (clean.lines.length === 0) throw new LedgerInvariantError(`${posting.kind}: a covered posting must move money`);
  const r = await q.query<PostedBalance>(post_if_covered_sql, params(clean));
  return r.rows[0] ?? null;
}
