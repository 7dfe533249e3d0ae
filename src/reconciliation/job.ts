/**
 * The daily reconciliation (CONTRACT §15): after 01:00 in São Paulo, yesterday of every account;
 * any day left pending or unreadable (up to five weeks back) again when it is due; and, from 06:00,
 * yesterday not matched is logged as an error for the operator, once per account and day.
 */

import { run, sql } from '../db/sql.ts';
import { addDays } from '../domain/calendar.ts';
import type { Job } from '../workers/job.ts';
import { accountRecords } from './accounts.ts';
import { saoPauloHour, yesterday } from './days.ts';
import { claimDay, reconcileAccounts } from './run.ts';

const kept_days = 35;
const retries_per_round = 20;
const after_hour = 1;
const alarm_hour = 6;

export function createReconciliationJob(): Job {
  const told = new Set<string>();
  return {
    name: 'reconciliation',
    idle_interval_ms: 60_000,
    async run(ctx, _wake, log, stopping) {
      const now = ctx.clock.now();
      const day = yesterday(now);
      const records = accountRecords(ctx.providers);
      const take = async (d: string, account: string) => {
        const rec = records.find((r) => r.account.id === account);
        stopping?.throwIfAborted();
        if (rec && (await claimDay(ctx, d, rec.account))) await reconcileAccounts(ctx, d, account);
      };
      if (saoPauloHour(now) >= after_hour) for (const rec of records) await take(day, rec.account.id);
      const due = await run<{ day: string; account: string }>(
        ctx.db,
        sql`SELECT day::text AS day, account FROM reconciliation_days
            WHERE state IN ('pending', 'unreadable') AND next_try_at <= ${now} AND day >= ${addDays(day, -kept_days)}::date
            ORDER BY day, account LIMIT ${retries_per_round}`,
      );
      for (const d of due.rows) await take(d.day, d.account);
      if (saoPauloHour(now) >= alarm_hour) {
        const open = await run<{ account: string; state: string; finding_count: number; error: string | null }>(
          ctx.db,
          sql`SELECT account, state, finding_count, error FROM reconciliation_days WHERE day = ${day}::date AND state <> 'matched'`,
        );
        for (const o of open.rows) {
          if (told.has(`${day}\n${o.account}`)) continue;
          told.add(`${day}\n${o.account}`);
          log?.error(
            { day, account: o.account, state: o.state, findings: o.finding_count, reason: o.error },
            'reconciliation: a day not matched past 06:00',
          );
        }
      }
      // Paced by the interval: the next round is a minute away whatever this one did.
      return 0;
    },
  };
}
