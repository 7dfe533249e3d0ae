import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.ts';
import { dispatchRefund } from './dispatch-refund.ts';
import { requestRefund } from './refund-moves.ts';
import type { RefundRow } from './refunds-repo.ts';

/**
 * A seller's refund of one of its sales (CONTRACT §5a), for the API and the panel alike: recorded
 * with its cents blocked, then sent to the provider outside the transaction. A provider that
 * cannot be reached leaves it PENDING; the refund job sends it again.
 */
export async function refundSale(
  ctx: AppContext,
  sellerId: number,
  transactionId: number,
  amount: number | null,
  log: FastifyBaseLogger,
): Promise<RefundRow> {
  const refund = await requestRefund(ctx.db, transactionId, { amount, requestedBy: 'SELLER', sellerId }, ctx.clock.now());
  return dispatchRefund(ctx, refund).catch((error: unknown) => {
    log.warn({ err: error, refundId: refund.id }, 'refund not sent to its provider; will retry');
    return refund;
  });
}
