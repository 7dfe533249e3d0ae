/**
 * The PIX rail's worker (CONTRACT §11.1): registers the callback URL, lists the Pix received over a
 * window overlapping the last one (a lost callback delays a payment by one interval at most), and
 * finishes what a PSP outage interrupted: returns not yet sent, refunds whose callback never came,
 * charges of cancelled sales still open at the PSP.
 */
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import { maybeOne } from '../db/sql.ts';
import { ApiPixError } from '../pix-rail/api-pix-client.ts';
import { settleRefund } from '../refunds/refund-moves.ts';
import type { Job } from '../workers/job.ts';
import { applyDevolucoes } from './devolucoes.ts';
import { refundDevolucaoId, refundOutcomeOf } from './pix-charges.ts';
import { applyReceivedPix, sendReturn } from './received-pix.ts';

// With no window behind it yet, reconciliation looks back this far.
const first_window_ms = 60 * 60_000;
const batch = 50;

export function createPixReconcileJob(config: Config): Job {
  const intervalMs = config.pixRail.reconcileSeconds * 1000;
  let registered: string | null = null;
  return {
    name: 'pix-reconcile',
    idle_interval_ms: intervalMs,
    async run(ctx) {
      const url = ctx.pix.webhookUrl();
      if (url !== null && registered !== url) {
        await ctx.pix.client.putWebhook(config.pixReceiverKey, url);
        registered = url;
      }
      await reconcileReceived(ctx, intervalMs);
      await resendReturns(ctx);
      await pollRefunds(ctx, intervalMs);
      await removeCancelledCharges(ctx);
      // Paced by the interval, not by a backlog: the runner waits a whole interval before the next run.
      return 0;
    },
  };
}

/** Lists the Pix received since just before the last window ended, and applies each (once per e2eid). */
export async function reconcileReceived(ctx: AppContext, overlapMs: number): Promise<number> {
  const fim = ctx.clock.now();
  const state = maybeOne(await ctx.db.query<{ reconciled_until: Date }>('SELECT reconciled_until FROM pix_rail_state'));
  const inicio = new Date((state?.reconciled_until.getTime() ?? fim.getTime() - first_window_ms) - overlapMs);
  let count = 0;
  for await (const pix of ctx.pix.client.allPix({ inicio, fim })) {
    await applyReceivedPix(ctx, pix);
    await applyDevolucoes(ctx, pix);
    count++;
  }
  await ctx.db.query(
    `INSERT INTO pix_rail_state (id, reconciled_until) VALUES (true, $1)
     ON CONFLICT (id) DO UPDATE SET reconciled_until = greatest(pix_rail_state.reconciled_until, EXCLUDED.reconciled_until)`,
    [fim],
  );
  return count;
}

async function resendReturns(ctx: AppContext): Promise<void> {
  const due = await ctx.db.query<{ end_to_end_id: string; amount: number }>(
    "SELECT end_to_end_id, amount FROM pix_received WHERE return_status = 'TO_SEND' ORDER BY created_at LIMIT $1",
    [batch],
  );
  for (const r of due.rows) await sendReturn(ctx.pix.client, ctx.db, r.end_to_end_id, Number(r.amount));
}

/** PIX refunds the PSP accepted but whose outcome no callback brought: asked for (GET of the devolução). */
async function pollRefunds(ctx: AppContext, olderThanMs: number): Promise<void> {
  const due = await ctx.db.query<{ id: number; e2e: string }>(
    `SELECT r.id, t.pix_end_to_end_id AS e2e FROM refunds r JOIN transactions t ON t.id = r.transaction_id
     WHERE r.status = 'PENDING' AND r.provider_ref IS NOT NULL AND t.pix_end_to_end_id IS NOT NULL AND r.created_at < $1
     ORDER BY r.id LIMIT $2`,
    [new Date(ctx.clock.now().getTime() - olderThanMs), batch],
  );
  for (const r of due.rows) {
    const outcome = refundOutcomeOf(await ctx.pix.client.getDevolucao(r.e2e, refundDevolucaoId(Number(r.id))));
    if (outcome.status !== 'PENDING') await settleRefund(ctx.db, Number(r.id), outcome, ctx.clock.now());
  }
}

/** A cancelled or expired sale's charge is removed at the PSP, so no payer can still pay it. */
async function removeCancelledCharges(ctx: AppContext): Promise<void> {
  const due = await ctx.db.query<{ id: number; pix_txid: string }>(
    "SELECT id, pix_txid FROM transactions WHERE pix_charge = 'ACTIVE' AND status = 'CANCELADO' ORDER BY id LIMIT $1",
    [batch],
  );
  for (const sale of due.rows) {
    try {
      await ctx.pix.client.patchCob(sale.pix_txid, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
    } catch (error) {
      // Refused (already paid or removed at the PSP): nothing left to remove; a Pix it took is returned.
      if (!(error instanceof ApiPixError && error.kind === 'http' && error.status !== undefined && error.status < 500)) throw error;
    }
    await ctx.db.query("UPDATE transactions SET pix_charge = 'REMOVED' WHERE id = $1", [sale.id]);
  }
}
