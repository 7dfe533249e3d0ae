/**
 * Runs of reconciliation (CONTRACT §15): a day of every account (or of one), each account on its
 * own so one unreadable record holds back no other. The daily job and the operator's route share it.
 */
import type { AppContext } from '../context.ts';
import { run, sql } from '../db/sql.ts';
import { accountRecords } from './accounts.ts';
import { type DayOutcome, reconcileDay } from './reconcile.ts';

// A run claims its account's day for this long: another process leaves it alone meanwhile, and takes it over after a crash.
const claim_ms = 15 * 60_000;
const running = new Set<string>();

/** Reconciles `day` for each configured account (or `account` alone); answers each account's outcome. */
export async function reconcileAccounts(ctx: AppContext, day: string, account?: string): Promise<Map<string, DayOutcome>> {
  const outcomes = new Map<string, DayOutcome>();
  for (const rec of accountRecords(ctx.providers)) {
    if (account !== undefined && rec.account.id !== account) continue;
    const key = `${day}\n${rec.account.id}`;
    if (running.has(key)) continue;
    running.add(key);
    try {
      outcomes.set(rec.account.id, await reconcileDay(ctx, rec, day));
    } finally {
      running.delete(key);
    }
  }
  return outcomes;
}

/**
 * Takes an account's day for this process: a day never reconciled, or one due again (pending,
 * unreadable) whose claim is free. False when another process has it.
 */
export async function claimDay(ctx: AppContext, day: string, account: { id: string; connector: string }): Promise<boolean> {
  const now = ctx.clock.now();
  const until = new Date(now.getTime() + claim_ms);
  const r = await run(
    ctx.db,
    sql`INSERT INTO reconciliation_days AS d (account, day, connector, state, error, next_try_at, reconciled_at)
        VALUES (${account.id}, ${day}::date, ${account.connector}, 'pending', 'being reconciled', ${until}, ${now})
        ON CONFLICT (day, account) DO UPDATE SET next_try_at = ${until}
          WHERE d.state IN ('pending', 'unreadable') AND d.next_try_at <= ${now}
        RETURNING account`,
  );
  return r.rows.length > 0;
}
