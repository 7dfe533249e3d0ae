/**
 * The Efí payout worker (CONTRACT §11.3): registers the paying key's callback URL, sends the
 * cashouts that are due (each one claimed first, so that a crash anywhere leaves it to be sent again
 * with the same idEnvio), and asks Efí how payouts stand when no callback said so: PENDING and
 * PROCESSING ones every PIX_RECONCILE_SECONDS, COMPLETED ones for returns over their first 7 days.
 */

import type { CashoutRow } from '../../cashouts/cashouts-repo.ts';
import { checkAfterClaim, waitForProvider } from '../../cashouts/payout-schedule.ts';
import type { AppContext } from '../../context.ts';
import { run, sql } from '../../db/sql.ts';
import type { Job, JobLog } from '../../workers/job.ts';
import { ofAccount } from '../accounts.ts';
import { applyProviderFact } from '../events/apply-fact.ts';
import type { EfiPayoutConnector } from './connector.ts';

const batch = 20;
// Sends in flight at once: Efí asks integrators to pace sends (CONTRACT §11.3), and one slow answer must not hold the rest.
const parallel = 4;

export interface PayoutJobSettings {
  reconcileSeconds: number;
  payerKey: string;
  /** The callback URL Efí is told; null until this process knows where it listens. */
  webhookUrl(): Promise<string | null>;
}

/** Claims what is due and sets when each is looked at next (cashouts/payout-schedule.ts), in one statement. */
async function claimDue(ctx: AppContext, connector: EfiPayoutConnector, now: Date, intervalMs: number): Promise<CashoutRow[]> {
  const r = await run<CashoutRow>(
    ctx.db,
    sql`UPDATE cashouts c SET next_check_at = ${checkAfterClaim(now, intervalMs)}
        FROM (SELECT id FROM cashouts WHERE ${ofAccount(connector.account)} AND next_check_at <= ${now} ORDER BY next_check_at LIMIT ${batch} FOR UPDATE SKIP LOCKED) due
        WHERE c.id = due.id
        RETURNING c.*`,
  );
  return r.rows;
}

async function handle(ctx: AppContext, connector: EfiPayoutConnector, row: CashoutRow, intervalMs: number, log?: JobLog): Promise<void> {
  if (row.status === 'PENDING') {
    const attempt = await connector.send({ cashoutId: row.id, netCents: row.net_amount, pixKey: row.pix_key, pixKeyType: row.pix_key_type });
    if (attempt.kind === 'later') {
      log?.warn({ cashoutId: row.id, why: attempt.why }, 'Efí did not take the payout for good; sent again with the same idEnvio next round');
      await waitForProvider(ctx.db, row.id, ctx.clock.now(), attempt.retryAfterMs ?? 0, intervalMs);
      return;
    }
    for (const fact of attempt.facts) await applyProviderFact(ctx, fact);
    return;
  }
  const facts = await connector.sync(row.id);
  if (facts === null) {
    if (row.status === 'PROCESSING') log?.error({ cashoutId: row.id }, 'Efí has no sent Pix for a cashout it took: the operator must look');
    return;
  }
  for (const fact of facts) await applyProviderFact(ctx, fact);
}

export function createPayoutJob(connector: EfiPayoutConnector, s: PayoutJobSettings): Job {
  const intervalMs = s.reconcileSeconds * 1000;
  let registered: string | null = null;
  let registrationFailedAt = Number.NEGATIVE_INFINITY;
  return {
    name: 'efi-payouts',
    idle_interval_ms: 250,
    async run(ctx, _wake, log, stopping) {
      const url = await s.webhookUrl().catch(() => null);
      if (url !== null && registered !== url && Date.now() - registrationFailedAt > intervalMs) {
        try {
          await connector.client.putWebhook(s.payerKey, url);
          registered = url;
        } catch (error) {
          registrationFailedAt = Date.now();
          log?.error({ err: error }, "Efí: registering the paying key's webhook failed; outcomes arrive by reconciliation until it succeeds");
        }
      }
      // Claimed, a batch's next checks move on: once it is taken, a stop lets it finish.
      stopping?.throwIfAborted();
      const rows = await claimDue(ctx, connector, ctx.clock.now(), intervalMs);
      const queue = [...rows];
      const worker = async () => {
        for (let row = queue.shift(); row; row = queue.shift()) {
          await handle(ctx, connector, row, intervalMs, log).catch((error: unknown) =>
            log?.warn({ err: error, cashoutId: row!.id }, 'Efí payout: asked again next round'),
          );
        }
      };
      await Promise.all(Array.from({ length: Math.min(parallel, rows.length) }, worker));
      return rows.length;
    },
  };
}
