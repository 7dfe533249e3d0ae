import type { FastifyBaseLogger } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { objectChecker } from '../domain/body-schema.ts';
import { BOLETO_MAX_AMOUNT_CENTS } from '../domain/boleto.ts';
import { ok, type Result } from '../domain/result.ts';
import { answerOf, finalAnswer, idempotent, type StoredResponse } from '../http/idempotency.ts';
import { Fields } from '../http/router.ts';
import { requestRefund } from '../transactions/refund-moves.ts';
import type { RefundRow } from '../transactions/refunds-repo.ts';
import { dispatchRefund } from './dispatch-refund.ts';
import { refundView } from './refund-view.ts';

/** The body of a refund: the one schema that checks it and documents it. */
export const RefundBody = Fields(
  {
    amount: Type.Optional(
      Type.Integer({ minimum: 1, maximum: BOLETO_MAX_AMOUNT_CENTS, description: 'an integer of cents from 1 (default: all not yet refunded)' }),
    ),
  },
  { title: 'RefundRequest' },
);

const checkRefundBody = objectChecker(RefundBody, { depth: 1, maxItems: 0 });

/** The cents asked for (null: all that is left), or the 400 naming each field. */
function parseRefundBody(body: unknown): Result<number | null> {
  const checked = checkRefundBody(body);
  return checked.ok ? ok(checked.value.amount ?? null) : checked;
}

export interface RefundAsk {
  sellerId: number;
  transactionId: number;
  /** `{ amount? }` as sent: checked inside the keyed request, so that a 400 is kept and replayed like any refusal. */
  body: unknown;
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
  const amount = parseRefundBody(ask.body);
  const request = {
    db: ctx.db,
    fingerprintKey: ctx.requestFingerprintKey,
    sellerId: ask.sellerId,
    endpoint: endpoints[ask.channel],
    key: ask.idempotencyKey,
    // A valid body's fingerprint is its amount (as before bodies were checked here); a refused one's, the body itself.
    body: amount.ok ? { transactionId: ask.transactionId, amount: amount.value } : { transactionId: ask.transactionId, body: ask.body },
    now: ctx.clock.now(),
    // The move is one guarded statement after its read (optimistic): no transaction needed without a key.
    singleStatement: true,
  };
  const answer = await idempotent(request, async (q) => {
    if (!amount.ok) return amount;
    const requested = await requestRefund(
      q,
      ask.transactionId,
      { amount: amount.value, requestedBy: 'SELLER', sellerId: ask.sellerId },
      ctx.clock.now(),
    );
    if (!requested.ok) return requested;
    made.refund = requested.value;
    return { made: refundView(made.refund) };
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
  return { ...answerOf({ made: body }), replayed: false };
}
