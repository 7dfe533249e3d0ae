/**
 * The extrato's source: the seller's postings (each a movement of the journal, CONTRACT §3), newest
 * first, with what each moved on every account, and the available balance the journal gives after
 * the newest one. One statement, so the balance and the postings are of one moment.
 */
import type { Queryable } from '../db/db.ts';
import { before as beforeCursor, run, sql } from '../db/sql.ts';

export interface PostingSums {
  id: number;
  kind: string;
  transaction_id: number | null;
  cashout_id: number | null;
  created_at: Date;
  /** Signed cents this posting moved on each account (the seller's two, then the platform's). */
  available: number;
  blocked: number;
  fee_revenue: number;
  customer_funds: number;
  payouts: number;
}

export interface PostingsPage {
  postings: PostingSums[];
  /**
   * The available balance after the newest posting of the page: today's balance less what the
   * journal moved since (the ledger keeps the two equal), so the first page costs nothing more
   * however long the seller's history, and a deeper one only what lies above it.
   */
  availableAfter: number;
}

const moved = (account: string) => sql`coalesce(sum(l.amount) FILTER (WHERE l.account = ${account}), 0)::bigint`;
// A provider account's funds (CONTRACT §15): a sale's are the payer's money, a cashout's went to the seller's key.
const funds = sql`(l.account = 'customer_funds' OR l.account LIKE 'customer_funds:%')`;
const to_payers = sql`coalesce(sum(l.amount) FILTER (WHERE ${funds} AND p.cashout_id IS NULL), 0)::bigint`;
const to_keys = sql`coalesce(sum(l.amount) FILTER (WHERE l.account = 'payouts' OR (${funds} AND p.cashout_id IS NOT NULL)), 0)::bigint`;

/** The seller's postings below `before` (a posting id), newest first; found through the seller's own journal lines. */
export async function postingsPage(q: Queryable, sellerId: number, before: number | null, limit: number): Promise<PostingsPage> {
  const r = await run<PostingSums & { through: number }>(
    q,
    sql`WITH mine AS (
          SELECT DISTINCT posting_id FROM journal_lines
          WHERE seller_id = ${sellerId} AND ${beforeCursor('posting_id', before)}
          ORDER BY posting_id DESC LIMIT ${limit}
        ), moves AS (
          SELECT p.id, p.kind, p.transaction_id, p.cashout_id, p.created_at,
            ${moved('available')} AS available, ${moved('blocked')} AS blocked, ${moved('fee_revenue')} AS fee_revenue,
            ${to_payers} AS customer_funds, ${to_keys} AS payouts
          FROM mine JOIN postings p ON p.id = mine.posting_id JOIN journal_lines l ON l.posting_id = p.id
          GROUP BY p.id
        )
        SELECT moves.*, (
          coalesce((SELECT b.available FROM balances b WHERE b.seller_id = ${sellerId}), 0) - (
            SELECT coalesce(sum(j.amount), 0) FROM journal_lines j
            WHERE j.seller_id = ${sellerId} AND j.account = 'available' AND j.posting_id > (SELECT max(posting_id) FROM mine))
        )::bigint AS through
        FROM moves ORDER BY id DESC`,
  );
  const postings = r.rows.map(({ through: _, ...p }) => ({
    ...p,
    available: Number(p.available),
    blocked: Number(p.blocked),
    fee_revenue: Number(p.fee_revenue),
    customer_funds: Number(p.customer_funds),
    payouts: Number(p.payouts),
  }));
  return { postings, availableAfter: Number(r.rows[0]?.through ?? 0) };
}
