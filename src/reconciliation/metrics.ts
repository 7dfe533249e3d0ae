/**
 * CONTRACT §15's metrics, read at each scrape: the findings of each account's latest reconciled day,
 * and how long ago its last matched day ended (an account never matched is not reported).
 */
import { Gauge, type Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { run, sql } from '../db/sql.ts';

export function registerReconciliationGauges(registry: Registry, ctx: AppContext): void {
  new Gauge({
    name: 'gateway_reconciliation_findings',
    help: "Findings of each account's latest reconciled day (unmatched or unequal movements)",
    labelNames: ['account'],
    registers: [registry],
    async collect() {
      this.reset();
      const r = await run<{ account: string; n: number }>(
        ctx.db,
        sql`SELECT DISTINCT ON (account) account, finding_count AS n FROM reconciliation_days
            WHERE state IN ('matched', 'mismatched') ORDER BY account, day DESC`,
      );
      for (const row of r.rows) this.set({ account: row.account }, Number(row.n));
    },
  });
  new Gauge({
    name: 'gateway_reconciliation_last_matched_age_seconds',
    help: 'Seconds since the end (São Paulo midnight, UTC−3) of the last day each account matched',
    labelNames: ['account'],
    registers: [registry],
    async collect() {
      this.reset();
      const r = await run<{ account: string; age: number }>(
        ctx.db,
        sql`SELECT account, extract(epoch FROM ${ctx.clock.now()}::timestamptz - (((max(day) + 1)::timestamp + interval '3 hours') AT TIME ZONE 'UTC'))::float8 AS age
            FROM reconciliation_days WHERE state = 'matched' GROUP BY account`,
      );
      for (const row of r.rows) this.set({ account: row.account }, Math.max(0, Number(row.age)));
    },
  });
}
