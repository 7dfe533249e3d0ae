/**
 * The Efí boleto worker (CONTRACT §11.4): reads back, at growing intervals, the charges of boleto
 * sales still PENDENTE (a notification that never came still ends the sale where Efí says), and
 * cancels at Efí the charges of sales that can no longer be paid. Each sale is claimed with its next
 * check in one statement; every call is made outside any transaction.
 */
import type { AppContext } from '../../context.ts';
import { run, sql } from '../../db/sql.ts';
import type { Job, JobLog } from '../../workers/job.ts';
import { ofAccount } from '../accounts.ts';
import { applyProviderFact } from '../events/apply-fact.ts';
import type { EfiBoletoConnector } from './boleto-connector.ts';

const batch = 20;
// A boleto waits days for its payer: asked again a quarter of its age later, between the interval and this.
const max_interval_ms = 6 * 3600_000;

interface DueSale {
  id: number;
  status: string;
  external_transaction_id: string;
}

async function claimDue(ctx: AppContext, connector: EfiBoletoConnector, now: Date, intervalMs: number): Promise<DueSale[]> {
  const r = await run<DueSale>(
    ctx.db,
    sql`UPDATE transactions t SET next_check_at = CASE WHEN t.status = 'PENDENTE'
          THEN ${now}::timestamptz + least(${`${max_interval_ms} milliseconds`}::interval,
            greatest(${`${intervalMs} milliseconds`}::interval, (${now}::timestamptz - t.created_at) / 4)) END
        FROM (SELECT id FROM transactions WHERE payment_method = 'BOLETO' AND ${ofAccount(connector.account)} AND next_check_at <= ${now} ORDER BY next_check_at LIMIT ${batch} FOR UPDATE SKIP LOCKED) due
        WHERE t.id = due.id
        RETURNING t.id, t.status, t.external_transaction_id`,
  );
  return r.rows;
}

async function toCancel(ctx: AppContext, connector: EfiBoletoConnector): Promise<DueSale[]> {
  const r = await run<DueSale>(
    ctx.db,
    sql`SELECT id, status, external_transaction_id FROM transactions
        WHERE boleto_charge = 'ACTIVE' AND status = 'CANCELADO' AND ${ofAccount(connector.account)} ORDER BY id LIMIT ${batch}`,
  );
  return r.rows;
}

export function createBoletoJob(connector: EfiBoletoConnector, s: { reconcileSeconds: number }): Job {
  const intervalMs = s.reconcileSeconds * 1000;
  return {
    name: 'efi-boletos',
    idle_interval_ms: 1000,
    async run(ctx, _wake, log?: JobLog, stopping?: AbortSignal) {
      let handled = 0;
      for (const sale of await toCancel(ctx, connector)) {
        stopping?.throwIfAborted();
        const outcome = await connector.cancel(sale.external_transaction_id).catch((error: unknown) => {
          log?.warn({ saleId: sale.id, err: error }, 'Efí did not cancel the charge of a cancelled boleto sale; tried again next round');
          return null;
        });
        if (!outcome) continue;
        if (outcome.status === 'REFUSED')
          log?.warn({ saleId: sale.id, detail: outcome.detail }, 'Efí refused to cancel a boleto charge (paid meanwhile?)');
        await run(ctx.db, sql`UPDATE transactions SET boleto_charge = 'REMOVED' WHERE id = ${sale.id}`);
        handled++;
      }
      // Claimed, a batch's next checks move on: once it is taken, a stop lets it finish.
      stopping?.throwIfAborted();
      for (const sale of await claimDue(ctx, connector, ctx.clock.now(), intervalMs)) {
        if (sale.status !== 'PENDENTE') continue;
        try {
          for (const fact of await connector.sync(sale.external_transaction_id)) await applyProviderFact(ctx, fact);
          handled++;
        } catch (error) {
          log?.warn({ saleId: sale.id, err: error }, 'Efí could not be asked how a boleto stands; asked again next round');
        }
      }
      return handled;
    },
  };
}
