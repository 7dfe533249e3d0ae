import type { AppContext } from '../context.ts';
import { moveTransaction } from '../transactions/transitions.ts';
import type { Job } from '../workers/job.ts';
import type { AdyenRail } from './adyen-rail.ts';
import { capturePayment } from './card-processor.ts';
import { AdyenError } from './client.ts';
import { type OwedReversal, sendReversal } from './notifications.ts';

const batch_size = 20;
// A capture younger than this may still be in its request's or notification's hands.
const capture_grace_ms = 10_000;
// A failed round waits this long before asking Adyen again.
const retry_after_failure_ms = 30_000;

/**
 * What the gateway owes Adyen and itself when a call or a process failed half-way (CONTRACT §11.2):
 * captures not sent (manual capture), reversals of money a sale could not take, and card sales
 * left PENDENTE by a crash before Adyen was asked, which become FALHA (a late AUTHORISATION still pays them).
 */
export function createAdyenFollowupJob(rail: AdyenRail): Job {
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    name: 'adyen-followups',
    idle_interval_ms: 5_000,
    async run(ctx) {
      const now = ctx.clock.now().getTime();
      if (now - failedAt < retry_after_failure_ms) return 0;
      const failures: string[] = [];
      const note = (what: string) => (error: unknown) => {
        failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      };
      // Longer than a sale request can take (a payment asked twice, then a capture or a cancel, each at
      // the timeout): a sale still PENDENTE after that was never handed over.
      let done = await sweepStale(ctx, new Date(now - 4 * rail.connection.timeoutMs - 30_000));
      const captures = rail.connection.capture === 'manual' ? await capturesDue(ctx, new Date(now - capture_grace_ms)) : [];
      for (const sale of captures) {
        await capturePayment(rail.client, rail.connection, sale.id, sale.psp, Number(sale.amount))
          .then((c) => c.pspReference, refusedForGood)
          .then((ref) =>
            ctx.db.query(`UPDATE transactions SET provider_data = provider_data || jsonb_build_object('captureRef', $2::text) WHERE id = $1`, [
              sale.id,
              ref,
            ]),
          )
          .then(() => done++, note(`capture of sale ${sale.id}`));
      }
      const owed = await ctx.db.query<OwedReversal>(
        'SELECT psp_reference, original_reference, event_code, success FROM adyen_notifications WHERE followup IS NOT NULL AND followup_done_at IS NULL ORDER BY received_at LIMIT $1',
        [batch_size],
      );
      for (const row of owed.rows) await sendReversal(ctx, rail, row).then(() => done++, note(`reversal of ${row.psp_reference}`));
      if (failures.length > 0) {
        failedAt = now;
        throw new Error(`Adyen follow-ups not done, will retry: ${failures.join('; ')}`);
      }
      return done;
    },
  };
}

/** A capture Adyen refuses (4xx) is not asked again: recorded as refused, for the operator; a CAPTURE_FAILED may follow. */
function refusedForGood(error: unknown): string {
  if (error instanceof AdyenError && !error.retryable) return `refused: ${error.message.slice(0, 200)}`;
  throw error;
}

const adyen_card = `payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') AND provider_data->>'provider' = 'adyen'`;

async function sweepStale(ctx: AppContext, before: Date): Promise<number> {
  const stale = await ctx.db.query<{ id: number }>(
    `SELECT id FROM transactions WHERE status = 'PENDENTE' AND ${adyen_card} AND created_at < $1 ORDER BY id LIMIT $2`,
    [before, batch_size],
  );
  for (const { id } of stale.rows) await moveTransaction(ctx.db, id, 'PROCESSING_ERROR', ctx.clock.now());
  return stale.rowCount;
}

async function capturesDue(ctx: AppContext, before: Date) {
  const due = await ctx.db.query<{ id: number; psp: string; amount: number }>(
    `SELECT id, external_transaction_id AS psp, amount FROM transactions
     WHERE status IN ('EM_PROCESSAMENTO', 'FALHA') AND ${adyen_card} AND provider_data->>'authorised' = 'true'
       AND provider_data->>'captureRef' IS NULL AND updated_at < $1 ORDER BY id LIMIT $2`,
    [before, batch_size],
  );
  return due.rows;
}
