import type { Queryable } from '../db/db.ts';
import { maybeOne, one, raw, run, type Sql, sql } from '../db/sql.ts';
import { assertBalanced, LedgerInvariantError, type Posting, sellerDelta, withoutZeroLines } from '../domain/ledger.ts';

export interface PostedBalance {
  postingId: number;
  available: number;
  blocked: number;
}

/** Postings of one use case, checked and flattened for one statement. */
interface PostingBatch {
  count: number;
  sellerId: number | null;
  transactionId: number | null;
  cashoutId: number | null;
  kinds: string[];
  ordinals: number[];
  accounts: string[];
  amounts: number[];
  references: (string | null)[];
  delta: { available: number; blocked: number };
}

/**
 * Zero lines dropped, postings left empty by that dropped, each checked balanced, all of one seller
 * and one resource, the seller deltas summed for one balance write.
 */
function postingBatch(postings: Posting[]): PostingBatch {
  const clean = postings.map(withoutZeroLines).filter((p) => p.lines.length > 0);
  const first = clean[0];
  const batch: PostingBatch = {
    count: clean.length,
    sellerId: first?.sellerId ?? null,
    transactionId: first?.transactionId ?? null,
    cashoutId: first?.cashoutId ?? null,
    kinds: clean.map((p) => p.kind),
    ordinals: [],
    accounts: [],
    amounts: [],
    references: [],
    delta: { available: 0, blocked: 0 },
  };
  clean.forEach((posting, i) => {
    assertBalanced(posting);
    if (
      posting.sellerId !== batch.sellerId ||
      (posting.transactionId ?? null) !== batch.transactionId ||
      (posting.cashoutId ?? null) !== batch.cashoutId
    ) {
      throw new LedgerInvariantError(`${posting.kind}: postings written together must share seller and resource`);
    }
    const d = sellerDelta(posting);
    batch.delta.available += d.available;
    batch.delta.blocked += d.blocked;
    for (const line of posting.lines) {
      batch.ordinals.push(i + 1);
      batch.accounts.push(line.account);
      batch.amounts.push(line.amount);
      batch.references.push(line.reference ?? null);
    }
  });
  return batch;
}

/**
 * CTEs `posting_ids`, `postings_written`, `lines_written` and `balance` writing `postings`, their
 * lines and the seller's balance projection in one statement (one round trip; the journal's balance
 * trigger sees each posting's lines together). With `gate`, nothing is written unless that CTE
 * yields a row.
 */
export function postingsCte(postings: Posting[], gate?: string): Sql {
  const b = postingBatch(postings);
  const from = gate ? raw(`${gate}, `) : raw('');
  return sql`
  posting_ids AS (
    SELECT nextval('postings_id_seq') AS id, x.kind, x.n
    FROM ${from}unnest(${b.kinds}::text[]) WITH ORDINALITY AS x (kind, n)
  ), postings_written AS (
    INSERT INTO postings (id, kind, seller_id, transaction_id, cashout_id)
    SELECT id, kind, ${b.sellerId}::bigint, ${b.transactionId}::bigint, ${b.cashoutId}::bigint FROM posting_ids ORDER BY n
  ), lines_written AS (
    INSERT INTO journal_lines (posting_id, account, seller_id, amount, reference, created_at)
    SELECT i.id, x.account, CASE WHEN x.account IN ('available', 'blocked') THEN ${b.sellerId}::bigint END, x.amount, x.reference, now()
    FROM unnest(${b.ordinals}::int[], ${b.accounts}::text[], ${b.amounts}::bigint[], ${b.references}::text[]) AS x (n, account, amount, reference)
    JOIN posting_ids i ON i.n = x.n
  ), balance AS (
    INSERT INTO balances (seller_id, available, blocked)
    SELECT ${b.sellerId}::bigint, ${b.delta.available}::bigint, ${b.delta.blocked}::bigint FROM posting_ids WHERE ${b.sellerId}::bigint IS NOT NULL LIMIT 1
    ON CONFLICT (seller_id) DO UPDATE
      SET available = balances.available + EXCLUDED.available, blocked = balances.blocked + EXCLUDED.blocked, updated_at = now()
    RETURNING available, blocked
  )`;
}

/**
 * Writes a balanced posting and applies it to the seller's balance, in the caller's transaction.
 * A posting whose lines are all zero (a fee of 0 on a 0 net) moves nothing and is not written.
 */
export async function post(q: Queryable, posting: Posting): Promise<PostedBalance | null> {
  if (postingBatch([posting]).count === 0) return null;
  return one(
    await run<PostedBalance>(
      q,
      sql`
    WITH ${postingsCte([posting])}
    SELECT (SELECT id FROM posting_ids) AS "postingId", balance.available, balance.blocked FROM balance`,
    ),
  );
}

/**
 * Like post, but only if the seller's available balance stays ≥ 0; null when it would not. The
 * balance row is updated only if `available` stays ≥ 0, and the posting exists only if that update
 * happened: under READ COMMITTED a concurrent writer of the same row waits, then re-checks the
 * condition against the committed value, so no two debits spend one cent.
 */
export async function postIfCovered(q: Queryable, posting: Posting): Promise<PostedBalance | null> {
  const b = postingBatch([posting]);
  if (b.count !== 1) throw new LedgerInvariantError(`${posting.kind}: a covered posting must move money`);
  return maybeOne(
    await run<PostedBalance>(
      q,
      sql`
    WITH b AS (
      UPDATE balances SET available = available + ${b.delta.available}::bigint, blocked = blocked + ${b.delta.blocked}::bigint, updated_at = now()
      WHERE seller_id = ${b.sellerId}::bigint AND available + ${b.delta.available}::bigint >= 0
      RETURNING available, blocked
    ), p AS (
      INSERT INTO postings (kind, seller_id, transaction_id, cashout_id)
      SELECT ${b.kinds[0]}::text, ${b.sellerId}::bigint, ${b.transactionId}::bigint, ${b.cashoutId}::bigint FROM b
      RETURNING id, seller_id, created_at
    ), l AS (
      INSERT INTO journal_lines (posting_id, account, seller_id, amount, reference, created_at)
      SELECT p.id, x.account, CASE WHEN x.account IN ('available', 'blocked') THEN p.seller_id END, x.amount, x.reference, p.created_at
      FROM p, unnest(${b.accounts}::text[], ${b.amounts}::bigint[], ${b.references}::text[]) AS x (account, amount, reference)
    )
    SELECT p.id AS "postingId", b.available, b.blocked FROM p, b`,
    ),
  );
}
