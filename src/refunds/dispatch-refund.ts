import type { AppContext } from '../context.ts';
import { AccountNotConfigured } from '../providers/ports.ts';
import { portOfSale } from '../providers/registry.ts';
import { settleRefund } from '../transactions/refund-moves.ts';
import { findRefund, markRefundTried, type RefundRow, setProviderRef, unsentRefunds } from '../transactions/refunds-repo.ts';
import { findTransaction } from '../transactions/transactions-repo.ts';
import type { Job } from '../workers/job.ts';

/**
 * Hands a PENDING refund to the provider of its sale, outside any database transaction, and records
 * the answer: settled now, or accepted (its reference kept; the provider reports the outcome later).
 * Throws when the provider cannot be reached: the refund stays PENDING without a reference and the
 * job sends it again.
 */
export async function dispatchRefund(ctx: AppContext, refund: RefundRow): Promise<RefundRow> {
  const sale = await findTransaction(ctx.db, Number(refund.transaction_id));
  if (!sale) throw new Error(`refund ${refund.id}: its transaction is gone`);
  let port: ReturnType<typeof portOfSale>;
  try {
    // The sale's own account, whatever is configured today (CONTRACT §11).
    port = portOfSale(ctx.providers, { account: refund.account ?? sale.account, provider: sale.provider, payment_method: sale.payment_method });
  } catch (error) {
    if (!(error instanceof AccountNotConfigured)) throw error;
    return settleRefund(ctx.db, Number(refund.id), { status: 'FAILED', reason: error.message }, ctx.clock.now());
  }
  const outcome = await port.refund({
    refundId: Number(refund.id),
    amountCents: Number(refund.amount),
    transactionId: sale.id,
    paymentMethod: sale.payment_method,
    externalTransactionId: sale.external_transaction_id,
    pixEndToEndId: sale.pix_end_to_end_id,
  });
  if (outcome.status === 'PENDING') {
    await setProviderRef(ctx.db, Number(refund.id), outcome.providerRef);
    return (await findRefund(ctx.db, Number(refund.id))) ?? refund;
  }
  if (outcome.status === 'SUCCEEDED' && outcome.providerRef) await setProviderRef(ctx.db, Number(refund.id), outcome.providerRef);
  return settleRefund(ctx.db, Number(refund.id), outcome, ctx.clock.now());
}

// A refund younger than this may still be in its request's hands.
const unsent_grace_ms = 10_000;
// After a failed round the runner calls again within a second; a provider that is down is asked again only this much later.
const retry_after_failure_ms = 30_000;
const batch_size = 50;

/** Sends again the refunds a crash or a provider outage left PENDING without the provider's word. */
export function createRefundDispatchJob(): Job {
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    name: 'refund-dispatch',
    idle_interval_ms: 5_000,
    async run(ctx, _wake, log, stopping) {
      const now = ctx.clock.now().getTime();
      if (now - failedAt < retry_after_failure_ms) return 0;
      const due = await unsentRefunds(ctx.db, new Date(now - unsent_grace_ms), batch_size);
      // One refund's provider failing must not hold back the others: each is tried, the failures
      // reported together, and a failed one goes behind the rest for the next round.
      const failures: string[] = [];
      for (const refund of due) {
        if (stopping?.aborted) {
          // The round ends here; what failed before the stop is still said.
          if (failures.length > 0) log?.warn({ failures }, 'refunds not sent before the stop; sent by the next process');
          stopping.throwIfAborted();
        }
        await dispatchRefund(ctx, refund).catch(async (error: unknown) => {
          failures.push(`refund ${refund.id}: ${error instanceof Error ? error.message : String(error)}`);
          await markRefundTried(ctx.db, Number(refund.id), new Date(now)).catch(() => {});
        });
      }
      if (failures.length > 0) {
        failedAt = now;
        throw new Error(`refunds not sent, will retry: ${failures.join('; ')}`);
      }
      return due.length;
    },
  };
}
