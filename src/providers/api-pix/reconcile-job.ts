/**
 * The API Pix connector's worker (CONTRACT §11.1): registers the callback URL, lists the Pix received
 * over a window overlapping the last one (a lost callback delays a payment by one interval at most)
 * and applies what they say through the one apply step, asks the PSP how refunds whose callback never
 * came ended, and removes at the PSP the charges of sales that can no longer be paid.
 */
import type { AppContext } from '../../context.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import type { Job, JobLog } from '../../workers/job.ts';
import { ofAccount } from '../accounts.ts';
import { applyProviderFact } from '../events/apply-fact.ts';
import type { ApiPixConnector } from './connector.ts';
import { devolucaoFact } from './facts.ts';
import { refundDevolucaoId } from './keys.ts';
import { receivedPixFacts } from './received-pix.ts';

// With no window behind it yet, reconciliation looks back this far.
const first_window_ms = 60 * 60_000;
const batch = 50;

export interface ReconcileSettings {
  reconcileSeconds: number;
  receiverKey: string;
  installationId: string;
  /** The callback URL the PSP is told; null until this process knows where it listens. */
  webhookUrl(): Promise<string | null>;
}

export function createPixReconcileJob(connector: ApiPixConnector, s: ReconcileSettings): Job {
  const intervalMs = s.reconcileSeconds * 1000;
  let registered: string | null = null;
  // After a failed run the runner calls again within a second: the PSP is asked again only an interval later.
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    name: 'pix-reconcile',
    idle_interval_ms: intervalMs,
    async run(ctx, _wake, log, stopping) {
      if (Date.now() - failedAt < intervalMs) return 0;
      // Each step and each item on its own: one the PSP keeps refusing holds back nothing else.
      const failures: string[] = [];
      const step = async (name: string, work: () => Promise<unknown>) => {
        stopping?.throwIfAborted();
        await work().catch((error: unknown) => {
          failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
        });
      };
      const url = await s.webhookUrl().catch(() => null);
      if (url !== null && registered !== url) {
        await step('webhook registration', async () => {
          await connector.client.putWebhook(s.receiverKey, url);
          registered = url;
        });
      }
      await step('received Pix', () => reconcileReceived(ctx, connector, s.installationId, intervalMs, log, stopping));
      stopping?.throwIfAborted();
      await eachDue(failures, 'refund', dueRefunds(ctx, connector, intervalMs), (r) => pollRefund(ctx, connector, s.installationId, r), stopping);
      await eachDue(failures, 'cancelled charge', dueCharges(ctx, connector), (r) => removeCharge(ctx, connector, r), stopping);
      if (failures.length > 0) {
        failedAt = Date.now();
        throw new Error(`PIX reconciliation, retried in ${s.reconcileSeconds} s: ${failures.join('; ')}`);
      }
      // Paced by the interval, not by a backlog: the runner waits a whole interval before the next run.
      return 0;
    },
  };
}

async function eachDue<T>(failures: string[], what: string, due: Promise<T[]>, work: (item: T) => Promise<void>, stopping?: AbortSignal) {
  let items: T[];
  try {
    items = await due;
  } catch (error) {
    failures.push(`${what}s: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  for (const item of items) {
    stopping?.throwIfAborted();
    await work(item).catch((error: unknown) => {
      failures.push(`${what} ${JSON.stringify(item)}: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
}

/** Lists the Pix received since just before the last window ended, and applies what each says (once per fact). */
export async function reconcileReceived(
  ctx: AppContext,
  connector: ApiPixConnector,
  installationId: string,
  overlapMs: number,
  log?: JobLog,
  stopping?: AbortSignal,
): Promise<number> {
  const fim = ctx.clock.now();
  const state = maybeOne(await run<{ reconciled_until: Date }>(ctx.db, sql`SELECT reconciled_until FROM pix_rail_state`));
  const inicio = new Date((state?.reconciled_until.getTime() ?? fim.getTime() - first_window_ms) - overlapMs);
  let count = 0;
  for await (const pix of connector.client.allPix({ inicio, fim })) {
    // Cut short, the window is not recorded as reconciled: the next round lists it again (each fact applies once).
    stopping?.throwIfAborted();
    for (const fact of await receivedPixFacts(connector.client, pix, installationId, connector.account.id)) {
      const applied = await applyProviderFact(ctx, fact);
      if (applied.state === 'needs_operator')
        log?.error({ identity: fact.identity, kind: fact.fact.kind, reason: applied.reason }, 'provider event needs the operator');
    }
    count++;
  }
  await run(
    ctx.db,
    sql`INSERT INTO pix_rail_state (id, reconciled_until) VALUES (true, ${fim})
        ON CONFLICT (id) DO UPDATE SET reconciled_until = greatest(pix_rail_state.reconciled_until, EXCLUDED.reconciled_until)`,
  );
  return count;
}

/** PIX refunds the PSP accepted but whose outcome no callback brought: asked for (GET of the devolução). */
async function dueRefunds(ctx: AppContext, connector: ApiPixConnector, olderThanMs: number): Promise<{ id: number; e2e: string }[]> {
  const r = await run<{ id: number; e2e: string }>(
    ctx.db,
    sql`SELECT r.id, t.pix_end_to_end_id AS e2e FROM refunds r JOIN transactions t ON t.id = r.transaction_id
        WHERE r.status = 'PENDING' AND r.provider_ref IS NOT NULL AND t.payment_method = 'PIX' AND ${ofAccount(connector.account, 't')} AND t.pix_end_to_end_id IS NOT NULL
          AND r.created_at < ${new Date(ctx.clock.now().getTime() - olderThanMs)}
        ORDER BY r.id LIMIT ${batch}`,
  );
  return r.rows.map((x) => ({ id: Number(x.id), e2e: x.e2e }));
}

async function pollRefund(ctx: AppContext, connector: ApiPixConnector, installationId: string, r: { id: number; e2e: string }): Promise<void> {
  const devolucaoId = refundDevolucaoId(installationId, r.id);
  const devolucao = await connector.client.getDevolucao(r.e2e, devolucaoId).catch(async (error: unknown) => {
    // Sent before installation ids, under its old id.
    if ((error as { status?: number }).status !== 404) throw error;
    return connector.client.getDevolucao(r.e2e, `rf${r.id}`);
  });
  const fact = devolucaoFact(r.e2e, devolucao, installationId);
  if (fact) await applyProviderFact(ctx, fact);
}

/** Charges of cancelled or expired sales, removed at the PSP so that no payer can still pay them. */
async function dueCharges(ctx: AppContext, connector: ApiPixConnector): Promise<{ id: number; txid: string }[]> {
  const r = await run<{ id: number; pix_txid: string }>(
    ctx.db,
    sql`SELECT id, pix_txid FROM transactions WHERE pix_charge = 'ACTIVE' AND status = 'CANCELADO' AND ${ofAccount(connector.account)} ORDER BY id LIMIT ${batch}`,
  );
  return r.rows.map((x) => ({ id: Number(x.id), txid: x.pix_txid }));
}

async function removeCharge(ctx: AppContext, connector: ApiPixConnector, sale: { id: number; txid: string }): Promise<void> {
  // Refused (already paid or removed at the PSP): nothing left to remove; a Pix it took is returned.
  await connector.removeCharge(sale.txid);
  await run(ctx.db, sql`UPDATE transactions SET pix_charge = 'REMOVED' WHERE id = ${sale.id}`);
}
