/**
 * What the Adyen connector owes when a process failed half-way (CONTRACT §11.2): card sales left
 * PENDENTE by a crash before Adyen's answer was recorded are told as a failed answer through the
 * apply step (FALHA; a late AUTHORISATION still pays them). A sale Adyen answered by asking for its
 * shopper (3-D Secure) is not stale while it waits. Captures and reversals owed are the
 * provider-event store's followups, sent again by its job until done.
 */
import type { AppContext } from '../../context.ts';
import { run, sql } from '../../db/sql.ts';
import type { Job } from '../../workers/job.ts';
import { ofAccount } from '../accounts.ts';
import { applyProviderFact } from '../events/apply-fact.ts';
import type { AdyenConnector } from './connector.ts';

const batch_size = 20;

export function createAdyenFollowupJob(adyen: AdyenConnector): Job {
  return {
    name: 'adyen-followups',
    idle_interval_ms: 5_000,
    async run(ctx, _wake, _log, stopping) {
      // Longer than a sale request can take (a payment asked twice, then a cancel, each at the
      // timeout): a sale still PENDENTE after that was never answered.
      const before = new Date(ctx.clock.now().getTime() - 4 * adyen.connection.timeoutMs - 30_000);
      const stale = await staleSales(ctx, adyen, before);
      for (const id of stale) {
        stopping?.throwIfAborted();
        await applyProviderFact(ctx, {
          provider: 'adyen',
          identity: `${adyen.keys.payment(id)}:answer`,
          externalReference: String(id),
          fact: {
            kind: 'CARD_ANSWER',
            sale: { ids: [], saleId: id, referenceSuffices: true },
            paymentId: null,
            result: 'ERROR',
            captureByGateway: adyen.connection.capture === 'manual',
            data: { error: 'no answer from Adyen was recorded' },
          },
        });
      }
      return stale.length;
    },
  };
}

async function staleSales(ctx: AppContext, adyen: AdyenConnector, before: Date): Promise<number[]> {
  const stale = await run<{ id: number }>(
    ctx.db,
    sql`SELECT id FROM transactions
        WHERE status = 'PENDENTE' AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') AND ${ofAccount(adyen.account)} AND created_at < ${before}
          -- Answered, but waiting for its shopper (3-D Secure): the return moves it, or the expiry job cancels it.
          AND NOT EXISTS (SELECT 1 FROM card_authentications a WHERE a.transaction_id = transactions.id AND a.action IS NOT NULL AND a.returned_at IS NULL)
        ORDER BY id LIMIT ${batch_size}`,
  );
  return stale.rows.map((r) => Number(r.id));
}
