/** What Início shows: the seller's balances, paid sales per day for 30 days, the latest sales. */
import type { Queryable } from '../db/db.ts';
import { run, sql } from '../db/sql.ts';
import { saoPauloDate } from '../domain/calendar.ts';
import { readBalance } from '../ledger/balances.ts';
import { listTransactions, type ShownRow } from '../transactions/transactions-repo.ts';
import { awaitingAuthentication, refundedBy } from './authentication.ts';
import type { DayTotal } from './chart.ts';

const day_ms = 24 * 60 * 60_000;
const idOf = (s: { id: number }) => s.id;

export interface Home {
  balance: { available: number; blocked: number; total: number };
  days: DayTotal[];
  latest: ShownRow[];
  /** The latest sales still waiting for their shopper's 3-D Secure. */
  awaiting: Set<number>;
  /** The ESTORNADO ones among the latest sales, by the event that refunded them. */
  refunded: Map<number, string>;
}

export async function homeOf(q: Queryable, sellerId: number, now: Date): Promise<Home> {
  const balance = await readBalance(q, sellerId);
  // Paid sales by the São Paulo day of their first payment (completed_at), the last 30 days.
  const since = new Date(now.getTime() - 30 * day_ms);
  const rows = await run<{ day: string; cents: number }>(
    q,
    sql`SELECT to_char(completed_at AT TIME ZONE 'America/Sao_Paulo', 'YYYY-MM-DD') AS day, sum(amount)::bigint AS cents
        FROM transactions WHERE seller_id = ${sellerId} AND completed_at > ${since} GROUP BY 1`,
  );
  const byDay = new Map(rows.rows.map((r) => [r.day, Number(r.cents)]));
  const days: DayTotal[] = [];
  for (let i = 29; i >= 0; i--) {
    const day = new Date(now.getTime() - i * day_ms);
    days.push({ day, cents: byDay.get(saoPauloDate(day)) ?? 0 });
  }
  const latest = await listTransactions(q, { sellerId, beforeId: null, limit: 10 });
  const awaiting = await awaitingAuthentication(q, latest.map(idOf));
  const refunded = await refundedBy(q, latest.map(idOf));
  return { balance, days, latest, awaiting, refunded };
}
