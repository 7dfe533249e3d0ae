import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.ts';
import { finalAnswer, idempotent, type StoredResponse } from '../http/idempotency.ts';
import { requestRefund } from '../transactions/refund-moves.ts';
import type { RefundRow } from '../transactions/refunds-repo.ts';
import { dispatchRefund } from './dispatch-refund.ts';
import { refundView } from './refund-view.ts';

export interface RefundAsk {
  sellerId: number;
  transactionId: number;
  /** Cents; null: all that is left. */
  amount: number | null;
  /** The same key again replays the first answer and refunds nothing more (CONTRACT §3's rules). */
  idempotencyKey: string | undefined;
  channel: 'API' | 'PANEL';
}

const endpoints = { API: 'POST /api/transactions/{id}/refund', PANEL: 'POST /painel/vendas/{id}/estorno' } as const;

/**
 * A seller's refund of one of its sales (CONTRACT §5a), for the API and the panel alike: recorded
 * with its cents blocked, then sent to the provider outside the transaction. A provider that
 * cannot be reached leaves it PENDING; the refund job sends it again. A replayed answer sends nothing.
 */
export async function refundSale(ctx: AppContext, ask: RefundAsk, log: FastifyBaseLogger): Promise<StoredResponse> {
  const made: { refund?: RefundRow } = {};
  const request = {
    db: ctx.db,
    fingerprintKey: ctx.requestFingerprintKey,
    sellerId: ask.sellerId,
    endpoint: endpoints[ask.channel],
    key: ask.idempotencyKey,
    body: { transactionId: ask.transactionId, amount: ask.amount },
    now: ctx.clock.now(),
    // The move is one guarded statement after its read (optimistic): no transaction needed without a key.
    singleStatement: true,
  };
  const answer = await idempotent(request, async (q) => {
    const requested = await requestRefund(
      q,
      ask.transactionId,
      { amount: ask.amount, requestedBy: 'SELLER', sellerId: ask.sellerId },
      ctx.clock.now(),
    );
    if (!requested.ok) return requested;
    made.refund = requested.value;
    return { status: 201, body: refundView(made.refund) };
  });
  const { refund } = made;
  if (answer.replayed || !refund) return answer;
  const sent = await dispatchRefund(ctx, refund).catch((error: unknown) => {
    log.warn({ err: error, refundId: refund.id }, 'refund not sent to its provider; will retry');
    return refund;
  });
  const body = refundView(sent);
  // The refund is made: a replay that still reads PENDING is no reason to fail this answer.
  await finalAnswer(request, body).catch((error: unknown) => log.warn({ err: error, refundId: refund.id }, 'stored answer not updated'));
  return { status: 201, body, replayed: false };
}
