/**
 * The matcher (CONTRACT §15), set-based in SQL so a day of a million movements never sits in
 * memory: each movement of the account's record pairs with one journal movement of the same
 * account and reference (the n-th with the n-th, in booking order, so a payout the PSP sent twice
 * leaves one of the two alone), over the day widened by the overlap. A pair belongs to the day of
 * its provider side (its journal side's when alone), and two sides farther apart than the day's
 * edges allow are two movements alone. Each lone or unequal movement of the day is a
 * provider event RECONCILIATION `needs_operator` with both sides, stored once; nothing moves.
 */
import type { Db, Queryable } from '../db/db.ts';
import { one, raw, run, type Sql, sql } from '../db/sql.ts';
import type { Account } from '../providers/ports.ts';
import type { RecordWindow } from '../providers/record.ts';

export interface Finding {
  side: 'provider' | 'ledger';
  reference: string;
  /** Cents as this side has it (+ into the account, − out). */
  amount: number;
  /** Cents as the other side has it; null when it has none. */
  otherAmount: number | null;
  eventId: number | null;
}

export interface DayTally {
  providerMovements: number;
  ledgerMovements: number;
  matched: number;
  providerTotal: number;
  ledgerTotal: number;
  findingCount: number;
  /** The first findings, in booking order (every one is a provider event). */
  findings: Finding[];
}

export interface MatchWindows {
  day: RecordWindow;
  provider: RecordWindow;
  ledger: RecordWindow;
}

const shown_findings = 100;

const interval = (ms: number) => sql`make_interval(secs => ${ms / 1000})`;

/**
 * A boleto híbrido paid by its Pix is one payment in two records, the issuer's (its charge paid) and
 * the PSP's (the Pix received): the journal names one of the two, and the other is its twin, not a
 * second movement. Two tests, one per kind, so each is an anti-join on its own key.
 */
const twin_of_charge = sql`
  SELECT 1 FROM transactions t
  JOIN postings ps ON ps.transaction_id = t.id AND ps.kind IN ('FIRST_PAYMENT', 'ACCOUNT_SPLIT')
  JOIN journal_lines j ON j.posting_id = ps.id AND j.reference = t.pix_end_to_end_id
  WHERE t.payment_method = 'BOLETO' AND t.external_transaction_id = m.reference`;
const twin_of_pix = sql`
  SELECT 1 FROM transactions t
  JOIN postings ps ON ps.transaction_id = t.id AND ps.kind IN ('FIRST_PAYMENT', 'ACCOUNT_SPLIT')
  JOIN journal_lines j ON j.posting_id = ps.id AND j.reference = t.external_transaction_id
  WHERE t.payment_method = 'BOLETO' AND t.pix_end_to_end_id = m.reference`;

// A day of a million movements takes seconds, above the usual statement limit; sorts kept in memory.
const match_timeout_ms = 600_000;
const match_work_mem = '64MB';

/**
 * Every pair of the widened windows (provider movement, journal movement, or both), computed once
 * into a table of this transaction, with whether it is the day's and a finding.
 */
function pairsTable(account: string, w: MatchWindows): Sql {
  // The provider may book up to the overlap earlier than the journal, and the overlap and its delay later.
  const apart = { laterMs: w.provider.to.getTime() - w.day.to.getTime(), earlierMs: w.day.from.getTime() - w.provider.from.getTime() };
  return sql`
  CREATE TEMPORARY TABLE day_pairs ON COMMIT DROP AS
  WITH p AS (
    SELECT m.id, m.kind, m.reference, m.amount, m.at, row_number() OVER (PARTITION BY m.reference ORDER BY m.at, m.id) AS n
    FROM provider_movements m
    WHERE m.account = ${account} AND m.kind <> 'FEE' AND m.at >= ${w.provider.from} AND m.at < ${w.provider.to}
      AND NOT (m.kind = 'BOLETO_PAID' AND EXISTS (${twin_of_charge}))
      AND NOT (m.kind = 'PIX_RECEIVED' AND EXISTS (${twin_of_pix}))
  ), l AS (
    SELECT j.reference, j.posting_id, -sum(j.amount)::bigint AS amount, min(j.created_at) AS at,
      min(ps.kind) AS kind, min(ps.transaction_id) AS transaction_id, min(ps.cashout_id) AS cashout_id,
      row_number() OVER (PARTITION BY j.reference ORDER BY min(j.created_at), j.posting_id) AS n
    FROM journal_lines j JOIN postings ps ON ps.id = j.posting_id
    WHERE j.account = ${`customer_funds:${account}`} AND j.reference IS NOT NULL AND ps.kind <> 'PROVIDER_FEE'
      AND j.created_at >= ${w.ledger.from} AND j.created_at < ${w.ledger.to}
    GROUP BY j.posting_id, j.reference
  ), joined AS (
    SELECT coalesce(p.reference, l.reference) AS reference, p.id AS p_id, p.kind AS p_kind, p.amount AS p_amount, p.at AS p_at,
      l.posting_id, l.kind AS l_kind, l.amount AS l_amount, l.at AS l_at, l.transaction_id, l.cashout_id,
      -- Farther apart than a day's edges allow: not one movement, but two alone.
      (p.id IS NOT NULL AND l.posting_id IS NOT NULL
        AND (p.at - l.at > ${interval(apart.laterMs)} OR l.at - p.at > ${interval(apart.earlierMs)})) AS far
    FROM p FULL JOIN l ON l.reference = p.reference AND l.n = p.n
  ), pairs AS (
    SELECT reference, p_id, p_kind, p_amount, p_at, posting_id, l_kind, l_amount, l_at, transaction_id, cashout_id FROM joined WHERE NOT far
    UNION ALL
    SELECT reference, p_id, p_kind, p_amount, p_at, NULL, NULL, NULL, NULL, NULL, NULL FROM joined WHERE far
    UNION ALL
    SELECT reference, NULL, NULL, NULL, NULL, posting_id, l_kind, l_amount, l_at, transaction_id, cashout_id FROM joined WHERE far
  )
  SELECT *,
    -- A pair is the day's of its provider side (its journal side's when alone): counted, totalled and judged there.
    CASE WHEN p_id IS NOT NULL THEN p_at >= ${w.day.from} AND p_at < ${w.day.to} ELSE l_at >= ${w.day.from} AND l_at < ${w.day.to} END AS today,
    (p_id IS NULL OR posting_id IS NULL OR p_amount <> l_amount) AS finding
  FROM pairs`;
}

/** The provider event a finding is stored as: the provider's row, or the journal's posting when alone. */
const identity = (account: string) =>
  sql`'reconciliation:' || ${account}::text || ':' || CASE WHEN p_id IS NOT NULL THEN 'provider:' || p_id ELSE 'ledger:' || posting_id || ':' || reference END`;

const reason = sql`CASE
  WHEN p_id IS NULL THEN format('the journal moved %s cents (%s) that the provider''s record does not show', l_amount, l_kind)
  WHEN posting_id IS NULL THEN format('the provider booked %s cents (%s) that the journal never moved', p_amount, p_kind)
  ELSE format('the provider booked %s cents (%s); the journal moved %s (%s)', p_amount, p_kind, l_amount, l_kind) END`;

/** Matches one account's day in one transaction: stores its findings as provider events and answers the tally. */
export async function matchDay(db: Db, account: Account, day: string, w: MatchWindows): Promise<DayTally> {
  return db.tx(
    async (q) => {
      await run(q, sql`SET LOCAL work_mem = ${raw(`'${match_work_mem}'`)}`);
      // Rows of the record just stored have no statistics yet: without them the planner takes a million for a few.
      await run(q, sql`ANALYZE provider_movements`);
      await run(q, pairsTable(account.id, w));
      await run(
        q,
        sql`INSERT INTO provider_events (provider, identity, kind, state, reason, fact, amount, external_reference, transaction_id, cashout_id, received_at, applied_at)
        SELECT ${account.connector}, ${identity(account.id)}, 'RECONCILIATION', 'needs_operator', ${reason},
          jsonb_build_object('kind', 'RECONCILIATION', 'account', ${account.id}::text, 'day', ${day}::text, 'reference', reference,
            'provider', CASE WHEN p_id IS NULL THEN NULL ELSE jsonb_build_object('id', p_id, 'kind', p_kind, 'amount', p_amount, 'at', p_at) END,
            'ledger', CASE WHEN posting_id IS NULL THEN NULL ELSE jsonb_build_object('postingId', posting_id, 'kind', l_kind, 'amount', l_amount, 'at', l_at) END),
          coalesce(p_amount, l_amount), reference, transaction_id, cashout_id, now(), now()
        FROM day_pairs WHERE today AND finding
        ON CONFLICT (provider, identity) DO NOTHING`,
      );
      return { ...(await tallyOf(q)), findings: await firstFindings(q, account) };
    },
    { timeoutMs: match_timeout_ms },
  );
}

async function tallyOf(q: Queryable): Promise<Omit<DayTally, 'findings'>> {
  const t = one(
    await run<Record<string, string | number>>(
      q,
      sql`SELECT count(p_id)::int AS "providerMovements", count(posting_id)::int AS "ledgerMovements",
        coalesce(sum(p_amount), 0)::bigint AS "providerTotal", coalesce(sum(l_amount), 0)::bigint AS "ledgerTotal",
        count(*) FILTER (WHERE NOT finding)::int AS matched, count(*) FILTER (WHERE finding)::int AS "findingCount"
      FROM day_pairs WHERE today`,
    ),
  );
  return {
    providerMovements: Number(t.providerMovements),
    ledgerMovements: Number(t.ledgerMovements),
    matched: Number(t.matched),
    providerTotal: Number(t.providerTotal),
    ledgerTotal: Number(t.ledgerTotal),
    findingCount: Number(t.findingCount),
  };
}

async function firstFindings(q: Queryable, account: Account): Promise<Finding[]> {
  const r = await run<{ side: 'provider' | 'ledger'; reference: string; amount: string; other: string | null; event_id: string | null }>(
    q,
    sql`SELECT CASE WHEN p_id IS NULL THEN 'ledger' ELSE 'provider' END AS side, reference,
      coalesce(p_amount, l_amount) AS amount, CASE WHEN p_id IS NULL THEN NULL ELSE l_amount END AS other,
      (SELECT e.id FROM provider_events e WHERE e.provider = ${account.connector} AND e.identity = ${identity(account.id)}) AS event_id
    FROM day_pairs WHERE today AND finding ORDER BY coalesce(p_at, l_at), reference LIMIT ${shown_findings}`,
  );
  return r.rows.map((f) => ({
    side: f.side,
    reference: f.reference,
    amount: Number(f.amount),
    otherAmount: f.other === null ? null : Number(f.other),
    eventId: f.event_id === null ? null : Number(f.event_id),
  }));
}
