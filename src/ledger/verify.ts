import type { Db, Queryable } from '../db/db.ts';
import { one, raw, run, type Sql, sql } from '../db/sql.ts';

export interface Mismatch {
  check: string;
  [detail: string]: unknown;
}
export interface VerifyReport {
  ok: boolean;
  sellersChecked: number;
  mismatches: Mismatch[];
}

const max_mismatches_per_check = 100;
// A constant of ours, so it is part of each check's text rather than a parameter.
const limit = raw(String(max_mismatches_per_check));
// It reads the whole journal: more than the usual statement limit.
const verify_timeout_ms = 120_000;

/**
 * Recomputes everything from the journal and compares it with what the projections say. Runs in one
 * REPEATABLE READ snapshot, so postings committed meanwhile cannot show up as false mismatches.
 */
export async function verifyLedger(db: Db, extraChecks: LedgerCheck[] = []): Promise<VerifyReport> {
  return db.tx(
    async (q) => {
      await run(q, sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`);
      const sellers = await run<{ n: number }>(q, sql`SELECT count(*)::int AS n FROM sellers`);
      const mismatches: Mismatch[] = [];
      for (const check of [...core_checks, ...extraChecks]) {
        mismatches.push(...(await check(q)).slice(0, max_mismatches_per_check));
      }
      return { ok: mismatches.length === 0, sellersChecked: one(sellers).n, mismatches };
    },
    { timeoutMs: verify_timeout_ms },
  );
}

export type LedgerCheck = (q: Queryable) => Promise<Mismatch[]>;

const tagged = async (check: string, q: Queryable, statement: Sql): Promise<Mismatch[]> =>
  (await run(q, statement)).rows.map((r) => ({ check, ...r }));

const unbalancedPostings: LedgerCheck = (q) =>
  tagged(
    'posting_balanced',
    q,
    sql`
  SELECT p.id AS "postingId", coalesce(sum(l.amount), 0)::bigint AS sum, count(l.id)::int AS lines
  FROM postings p LEFT JOIN journal_lines l ON l.posting_id = p.id
  GROUP BY p.id HAVING coalesce(sum(l.amount), 0) <> 0 OR count(l.id) < 2
  LIMIT ${limit}`,
  );

const sellerBalances: LedgerCheck = (q) =>
  tagged(
    'seller_balance',
    q,
    sql`
  WITH j AS (
    SELECT seller_id,
      coalesce(sum(amount) FILTER (WHERE account = 'available'), 0)::bigint AS available,
      coalesce(sum(amount) FILTER (WHERE account = 'blocked'), 0)::bigint AS blocked
    FROM journal_lines WHERE seller_id IS NOT NULL GROUP BY seller_id
  )
  SELECT s.id AS "sellerId",
    coalesce(b.available, 0) AS "balanceAvailable", coalesce(b.blocked, 0) AS "balanceBlocked",
    coalesce(j.available, 0) AS "journalAvailable", coalesce(j.blocked, 0) AS "journalBlocked"
  FROM sellers s LEFT JOIN balances b ON b.seller_id = s.id LEFT JOIN j ON j.seller_id = s.id
  WHERE coalesce(b.available, 0) <> coalesce(j.available, 0) OR coalesce(b.blocked, 0) <> coalesce(j.blocked, 0)
  LIMIT ${limit}`,
  );

const linesMatchPostingSeller: LedgerCheck = (q) =>
  tagged(
    'line_seller',
    q,
    sql`
  SELECT l.id AS "lineId", l.seller_id AS "lineSellerId", p.seller_id AS "postingSellerId"
  FROM journal_lines l JOIN postings p ON p.id = l.posting_id
  WHERE l.seller_id IS NOT NULL AND l.seller_id <> p.seller_id
  LIMIT ${limit}`,
  );

// CONTRACT §5, §15: money returned to the payer equals money received, for every ESTORNADO sale, at each account.
const refundedSalesNetZero: LedgerCheck = (q) =>
  tagged(
    'refunded_customer_funds',
    q,
    sql`
  SELECT t.id AS "transactionId", l.account, sum(l.amount)::bigint AS "customerFunds"
  FROM transactions t
  JOIN postings p ON p.transaction_id = t.id
  JOIN journal_lines l ON l.posting_id = p.id AND (l.account = 'customer_funds' OR l.account LIKE 'customer_funds:%')
  WHERE t.status = 'ESTORNADO'
  GROUP BY t.id, l.account HAVING sum(l.amount) <> 0
  LIMIT ${limit}`,
  );

// CONTRACT §15: a line that moves an account's money belongs to that account's funds and no seller;
// a provider's fee is the platform's cost, never a seller's.
const fundsLines: LedgerCheck = (q) =>
  tagged(
    'funds_line',
    q,
    sql`
  SELECT l.id AS "lineId", l.account, p.kind
  FROM journal_lines l JOIN postings p ON p.id = l.posting_id
  WHERE l.account LIKE 'provider\_fees:%' AND EXISTS (SELECT 1 FROM journal_lines s WHERE s.posting_id = p.id AND s.seller_id IS NOT NULL)
  LIMIT ${limit}`,
  );

const core_checks: LedgerCheck[] = [unbalancedPostings, sellerBalances, linesMatchPostingSeller, refundedSalesNetZero, fundsLines];
