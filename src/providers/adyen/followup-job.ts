/**
 * What the Adyen connector owes when a call or a process failed half-way (CONTRACT §11.2): captures
 * not sent after an authorised payment (manual capture), and card sales left PENDENTE by a crash
 * before Adyen was asked, which become FALHA (a late AUTHORISATION still pays them). Reversals and
 * captures owed because of a notification are the provider-event store's followups.
 */
import type { AppContext } from '../../context.ts';
import { run, sql } from '../../db/sql.ts';
import { moveTransaction } from '../../transactions/transitions.ts';
import type { Job } from '../../workers/job.ts';
import { operation } from '../ports.ts';
import type { AdyenConnector } from './connector.ts';

const batch_size = 20;
// A capture younger than this may still be in its request's or notification's hands.
const capture_grace_ms = 10_000;
// A failed round waits this long before asking Adyen again.
const retry_after_failure_ms = 30_000;

export function createAdyenFollowupJob(adyen: AdyenConnector): Job {
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    name: 'adyen-followups',
    idle_interval_ms: 5_000,
    async run(ctx, _wake, _log, stopping) {
      const now = ctx.clock.now().getTime();
      if (now - failedAt < retry_after_failure_ms) return 0;
      const failures: string[] = [];
      // Longer than a sale request can take (a payment asked twice, then a capture or a cancel, each at
      // the timeout): a sale still PENDENTE after that was never handed over.
      let done = await sweepStale(ctx, new Date(now - 4 * adyen.connection.timeoutMs - 30_000));
      const captures = adyen.connection.capture === 'manual' ? await capturesDue(ctx, new Date(now - capture_grace_ms)) : [];
      for (const sale of captures) {
        stopping?.throwIfAborted();
        await operation(
          adyen,
          'capture',
        )({ saleId: sale.id, paymentId: sale.psp, amountCents: Number(sale.amount) })
          .then((c) => (c.status === 'DONE' ? c.detail : `refused: ${c.detail}`))
          .then((ref) =>
            run(
              ctx.db,
              sql`UPDATE transactions SET provider_data = provider_data || jsonb_build_object('captureRef', ${ref}::text) WHERE id = ${sale.id}`,
            ),
          )
          .then(
            () => done++,
            (error: unknown) => failures.push(`capture of sale ${sale.id}: ${error instanceof Error ? error.message : String(error)}`),
          );
      }
      if (failures.length > 0) {
        failedAt = now;
        throw new Error(`Adyen follow-ups not done, will retry: ${failures.join('; ')}`);
      }
      return done;
    },
  };
}

const adyen_card = sql`provider = 'adyen' AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD')`;

async function sweepStale(ctx: AppContext, before: Date): Promise<number> {
  const stale = await run<{ id: number }>(
    ctx.db,
    sql`SELECT id FROM transactions WHERE status = 'PENDENTE' AND ${adyen_card} AND created_at < ${before} ORDER BY id LIMIT ${batch_size}`,
  );
  for (const { id } of stale.rows) await moveTransaction(ctx.db, id, 'PROCESSING_ERROR', ctx.clock.now());
  return stale.rowCount;
}

async function capturesDue(ctx: AppContext, before: Date) {
  const due = await run<{ id: number; psp: string; amount: number }>(
    ctx.db,
    sql`SELECT id, external_transaction_id AS psp, amount FROM transactions
        WHERE status IN ('EM_PROCESSAMENTO', 'FALHA') AND ${adyen_card} AND provider_data->>'authorised' = 'true'
          AND provider_data->>'captureRef' IS NULL AND updated_at < ${before} ORDER BY id LIMIT ${batch_size}`,
  );
  return due.rows;
}
