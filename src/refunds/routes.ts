import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { BOLETO_MAX_AMOUNT_CENTS } from '../domain/boleto.ts';
import { ApiError } from '../domain/errors.ts';
import { parsePathId } from '../http/ids.ts';
import { errorResponses, Fields, PathId, type Router, sellerSecurity } from '../http/router.ts';
import { findTransaction } from '../transactions/transactions-repo.ts';
import { dispatchRefund } from './dispatch-refund.ts';
import { requestRefund } from './refund-moves.ts';
import { Refund, refundView } from './refund-view.ts';
import { refundsOf } from './refunds-repo.ts';

const RefundBody = Fields({
  amount: Type.Optional(
    Type.Integer({ minimum: 1, maximum: BOLETO_MAX_AMOUNT_CENTS, description: 'an integer of cents from 1 (default: all not yet refunded)' }),
  ),
});

export async function refundRoutes(app: Router, ctx: AppContext): Promise<void> {
  const common = { tags: ['transactions'], security: sellerSecurity };

  app.post(
    '/api/transactions/:id/refund',
    {
      schema: {
        ...common,
        summary: 'Refund a paid transaction, in full or in part (CONTRACT §5a)',
        description:
          'Answers 201 with the Refund: SUCCEEDED at once for providers that refund synchronously; PENDING for a PIX devolução until the PSP reports it. The sale moves to ESTORNADO when its refunds reach its amount.',
        params: PathId,
        body: RefundBody,
        response: { 201: Refund, ...errorResponses },
      },
    },
    async (request, reply) => {
      const id = parsePathId(request.params.id);
      const refund = await requestRefund(
        ctx.db,
        id,
        { amount: request.body.amount ?? null, requestedBy: 'SELLER', sellerId: request.sellerId },
        ctx.clock.now(),
      );
      const sent = await dispatchRefund(ctx, refund).catch((error: unknown) => {
        // Recorded and its cents blocked: the refund job sends it again, so the seller sees it PENDING.
        request.log.warn({ err: error, refundId: refund.id }, 'refund not sent to its provider; will retry');
        return refund;
      });
      return reply.code(201).send(refundView(sent));
    },
  );

  app.get(
    '/api/transactions/:id/refunds',
    {
      schema: {
        ...common,
        summary: "A transaction's refunds, oldest first",
        params: PathId,
        response: { 200: Type.Object({ data: Type.Array(Refund) }), ...errorResponses },
      },
    },
    async (request) => {
      const row = await findTransaction(ctx.db, parsePathId(request.params.id));
      if (!row) throw new ApiError('NOT_FOUND', 'Transaction not found');
      if (row.seller_id !== request.sellerId) throw new ApiError('FORBIDDEN', 'This transaction belongs to another account');
      return { data: (await refundsOf(ctx.db, row.id)).map(refundView) };
    },
  );
}
