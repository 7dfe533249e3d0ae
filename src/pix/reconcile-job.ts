/**
 * The PIX rail's worker (CONTRACT §11.1): registers the callback URL, lists the Pix received over a
 * window overlapping the last one (a lost callback delays a payment by one interval at most), and
 * finishes what a PSP outage interrupted: returns not yet sent, refunds whose callback never came,
 * charges of cancelled sales still open at the PSP.
 */
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import { maybeOne } from '../db/sql.ts';
import { isRefusal } from '../pix-rail/api-pix-client.ts';
import { settleRefund } from '../refunds/refund-moves.ts';
import type { Job } from '../workers/job.ts';
import { applyDevolucoes, applyOpenMeds } from './devolucoes.ts';
import { refundDevolucaoId, refundOutcomeOf } from './pix-charges.ts';
import { applyReceivedPix, recordReturn, sendReturn } from './received-pix.ts';

// With no window behind it yet, reconciliation looks back this far.
const first_window_ms = 60 * 60_000;
const batch = 50;

export function createPixReconcileJob(config: Config): Job {
  const intervalMs = config.pixRail.reconcileSeconds * 1000;
  let registered: string | null = null;
  // After a failed run the runner calls again within a second: the PSP is asked again only an interval later.
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    name: 'pix-reconcile',
    idle_interval_ms: intervalMs,
    async run(ctx) {
      if (Date.now() - failedAt < intervalMs) return 0;
      // Each step and each item on its own: one the PSP keeps refusing holds back nothing else.
      const failures: string[] = [];
      const step = (name: string, work: () => Promise<unknown>) =>
        work().catch((error: unknown) => {
          failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
        });
      const url = ctx.pix.webhookUrl();
      if (url !== null && registered !== url) {
        await step('webhook registration', async () => {
          await ctx.pix.client.putWebhook(config.pixReceiverKey, url);
          registered = url;
        });
      }
      await step('received Pix', () => reconcileReceived(ctx, intervalMs));
      await step('MED devoluções', () => applyOpenMeds(ctx, batch));
      await eachDue(failures, 'return', dueReturns(ctx, intervalMs), (r) => settleReturn(ctx, r));
      await eachDue(failures, 'refund', dueRefunds(ctx, intervalMs), (r) => pollRefund(ctx, r));
      await eachDue(failures, 'cancelled charge', dueCharges(ctx), (r) => removeCharge(ctx, r));
      if (failures.length > 0) {
        failedAt = Date.now();
        throw new Error(`PIX reconciliation, retried in ${config.pixRail.reconcileSeconds} s: ${failures.join('; ')}`);
      }
      // Paced by the interval, not by a backlog: the runner waits a whole interval before the next run.
      return 0;
    },
  };
}

async function eachDue<T>(failures: string[], what: string, due: Promise<T[]>, work: (item: T) => Promise<void>) {
  let items: T[];
  try {
    items = await due;
  } catch (error) {
    failures.push(`${what}s: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  for (const item of items) {
    await work(item).catch((error: unknown) => {
      failures.push(`${what} ${JSON.stringify(item)}: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
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

interface DueReturn {
  e2e: string;
  amount: number;
  status: string;
  returnId: string;
}

/** Returns not yet sent, and those the PSP accepted an interval ago without a callback saying how they ended. */
async function dueReturns(ctx: AppContext, olderThanMs: number): Promise<DueReturn[]> {
  const r = await ctx.db.query<{ end_to_end_id: string; amount: number; return_status: string; return_id: string }>(
    `SELECT end_to_end_id, amount, return_status, return_id FROM pix_received
     WHERE return_status = 'TO_SEND' OR (return_status = 'EM_PROCESSAMENTO' AND created_at < $1) ORDER BY created_at LIMIT $2`,
    [new Date(ctx.clock.now().getTime() - olderThanMs), batch],
  );
  return r.rows.map((x) => ({ e2e: x.end_to_end_id, amount: Number(x.amount), status: x.return_status, returnId: x.return_id }));
}

async function settleReturn(ctx: AppContext, r: DueReturn): Promise<void> {
  try {
    if (r.status === 'TO_SEND') return await sendReturn(ctx.pix.client, ctx.db, r.e2e, r.amount);
    const devolucao = await ctx.pix.client.getDevolucao(r.e2e, r.returnId);
    await recordReturn(ctx.db, r.e2e, devolucao.status, devolucao.motivo ?? null);
  } catch (error) {
    if (!isRefusal(error)) throw error;
    // Shown to the operator (GET /admin/pix/returns) as not made, with the PSP's reason.
    await recordReturn(ctx.db, r.e2e, 'NAO_REALIZADO', `refused by the PSP: ${error.problem?.title ?? error.message}`);
  }
}

/** PIX refunds the PSP accepted but whose outcome no callback brought: asked for (GET of the devolução). */
async function dueRefunds(ctx: AppContext, olderThanMs: number): Promise<{ id: number; e2e: string }[]> {
  const r = await ctx.db.query<{ id: number; e2e: string }>(
    `SELECT r.id, t.pix_end_to_end_id AS e2e FROM refunds r JOIN transactions t ON t.id = r.transaction_id
     WHERE r.status = 'PENDING' AND r.provider_ref IS NOT NULL AND t.pix_end_to_end_id IS NOT NULL AND r.created_at < $1
     ORDER BY r.id LIMIT $2`,
    [new Date(ctx.clock.now().getTime() - olderThanMs), batch],
  );
  return r.rows.map((x) => ({ id: Number(x.id), e2e: x.e2e }));
}

async function pollRefund(ctx: AppContext, r: { id: number; e2e: string }): Promise<void> {
  const outcome = refundOutcomeOf(await ctx.pix.client.getDevolucao(r.e2e, refundDevolucaoId(r.id)));
  if (outcome.status !== 'PENDING') await settleRefund(ctx.db, r.id, outcome, ctx.clock.now());
}

/** Charges of cancelled or expired sales, removed at the PSP so that no payer can still pay them. */
async function dueCharges(ctx: AppContext): Promise<{ id: number; txid: string }[]> {
  const r = await ctx.db.query<{ id: number; pix_txid: string }>(
    "SELECT id, pix_txid FROM transactions WHERE pix_charge = 'ACTIVE' AND status = 'CANCELADO' ORDER BY id LIMIT $1",
    [batch],
  );
  return r.rows.map((x) => ({ id: Number(x.id), txid: x.pix_txid }));
}

async function removeCharge(ctx: AppContext, sale: { id: number; txid: string }): Promise<void> {
  try {
    await ctx.pix.client.patchCob(sale.txid, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
  } catch (error) {
    // Refused (already paid or removed at the PSP): nothing left to remove; a Pix it took is returned.
    if (!isRefusal(error)) throw error;
  }
  await ctx.db.query("UPDATE transactions SET pix_charge = 'REMOVED' WHERE id = $1", [sale.id]);
}
