import type { Queryable } from '../db/db.ts';
import { assertBalanced, LedgerInvariantError, sellerDelta, withoutZeroLines, type Posting } from '../domain/ledger.ts';

export interface PostedBalance { postingId: number; available: number; blocked: number }

/** Postings of one use case: one seller, one transaction or cashout, several postings at most. */
export interface PostingBatch { params: unknown[]; count: number }

/**
 * The statement parameters of `postings`, ready for `postingsCte`: zero lines dropped, postings
 * left empty by that dropped, each checked balanced, the seller deltas summed for one balance write.
 */
export function postingBatch(postings: Posting[]): PostingBatch {
  const clean = postings.map(withoutZeroLines).filter((p) => p.lines.length > 0);
  const first = clean[0];
  const delta = { available: 0, blocked: 0 };
  const [ordinals, accounts, amounts]: [number[], string[], number[]] = [[], [], []];
  clean.forEach((posting, i) => {
    assertBalanced(posting);
    if (posting.sellerId !== first!.sellerId || (posting.transactionId ?? null) !== (first!.transactionId ?? null)
      || (posting.cashoutId ?? null) !== (first!.cashoutId ?? null)) {
      throw new LedgerInvariantError(`${posting.kind}: postings written together must share seller and resource`);
    }
    const d = sellerDelta(posting);
    delta.available += d.available;
    delta.blocked += d.blocked;
    for (const line of posting.lines) {
      ordinals.push(i + 1);
      accounts.push(line.account);
      amounts.push(line.amount);
    }
  });
  return {
    count: clean.length,
    params: [
      first?.sellerId ?? null, first?.transactionId ?? null, first?.cashoutId ?? null, clean.map((p) => p.kind),
      ordinals, accounts, amounts, delta.available, delta.blocked,
    ],
  };
}

/**
 * CTEs `posting_ids`, `postings_written`, `lines_written` and `balance` writing a batch's
 * postings, their lines and the seller's balance projection in one statement (one round trip; the
 * journal's balance trigger sees each posting's lines together). Parameters are `postingBatch`'s,
 * from `$first`. With `gate`, nothing is written unless that CTE yields a row.
 */
export function postingsCte(first: number, gate?: string): string {
  const $ = (i: number) => `$${first + i}`;
  return `
  posting_ids AS (
    SELECT nextval('postings_id_seq') AS id, x.kind, x.n
    FROM ${gate ? `${gate}, ` : ''}unnest(${$(3)}::text[]) WITH ORDINALITY AS x (kind, n)
  ), postings_written AS (
    INSERT INTO postings (id, kind, seller_id, transaction_id, cashout_id)
    SELECT id, kind, ${$(0)}::bigint, ${$(1)}::bigint, ${$(2)}::bigint FROM posting_ids ORDER BY n
  ), lines_written AS (
    INSERT INTO journal_lines (posting_id, account, seller_id, amount, created_at)
    SELECT i.id, x.account, CASE WHEN x.account IN ('available', 'blocked') THEN ${$(0)}::bigint END, x.amount, now()
    FROM unnest(${$(4)}::int[], ${$(5)}::text[], ${$(6)}::bigint[]) AS x (n, account, amount) JOIN posting_ids i ON i.n = x.n
  ), balance AS (
    INSERT INTO balances (seller_id, available, blocked)
    SELECT ${$(0)}::bigint, ${$(7)}::bigint, ${$(8)}::bigint FROM posting_ids LIMIT 1
    ON CONFLICT (seller_id) DO UPDATE
      SET available = balances.available + EXCLUDED.available, blocked = balances.blocked + EXCLUDED.blocked, updated_at = now()
    RETURNING available, blocked
  )`;
}

const post_sql = `
  WITH ${postingsCte(1)}
  SELECT (SELECT id FROM posting_ids) AS "postingId", balance.available, balance.blocked FROM balance`;

// The conditional form, over `postingBatch`'s parameters for one posting: the balance row is
// updated only if `available` stays ≥ 0, and the posting exists only if that update happened.
// Under READ COMMITTED a concurrent writer of the same row waits, then re-checks the condition
// against the committed value: no two debits spend one cent.
const post_if_covered_sql = `
  WITH b AS (
    UPDATE balances SET available = available + $8, blocked = blocked + $9, updated_at = now()
    WHERE seller_id = $1 AND available + $8 >= 0
    RETURNING available, blocked
  ), p AS (
    INSERT INTO postings (kind, seller_id, transaction_id, cashout_id) SELECT ($4::text[])[1], $1, $2, $3 FROM b
    RETURNING id, seller_id, created_at
  ), l AS (
    INSERT INTO journal_lines (posting_id, account, seller_id, amount, created_at)
    SELECT p.id, x.account, CASE WHEN x.account IN ('available', 'blocked') THEN p.seller_id END, x.amount, p.created_at
    FROM p, unnest($5::int[], $6::text[], $7::bigint[]) AS x (n, account, amount)
  )
  SELECT p.id AS "postingId", b.available, b.blocked FROM p, b`;

/**
 * Writes a balanced posting and applies it to the seller's balance, in the caller's transaction.
 * A posting whose lines are all zero (a fee of 0 on a 0 net) moves nothing and is not written.
 */
export async function post(q: Queryable, posting: Posting): Promise<PostedBalance | null> {
  const batch = postingBatch([posting]);
  if (batch.count === 0) return null;
  const r = await q.query<PostedBalance>(post_sql, batch.params);
  return r.rows[0]!;
}

/** Like post, but only if the seller's available balance stays ≥ 0; null when it would not. */
export async function postIfCovered(q: Queryable, posting: Posting): Promise<PostedBalance | null> {
  const batch = postingBatch([posting]);
  if (batch.count === 0) throw new LedgerInvariantError(`${posting.kind}: a covered posting must move money`);
  const r = await q.query<PostedBalance>(post_if_covered_sql, batch.params);
  return r.rows[0] ?? null;
}
