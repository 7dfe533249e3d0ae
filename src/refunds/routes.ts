import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { BOLETO_MAX_AMOUNT_CENTS } from '../domain/boleto.ts';
import { sendAnswer } from '../http/idempotency.ts';
import { parsePathId } from '../http/ids.ts';
import { errorResponses, Fields, PathId, type Router, sellerSecurity } from '../http/router.ts';
import { ownTransaction } from '../transactions/own-transaction.ts';
import { refundSale } from './refund-sale.ts';
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
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        body: RefundBody,
        response: { 201: Refund, ...errorResponses },
      },
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const answer = await refundSale(
        ctx,
        {
          sellerId: request.sellerId,
          transactionId: parsePathId(request.params.id),
          amount: request.body.amount ?? null,
          idempotencyKey: typeof key === 'string' ? key : undefined,
          channel: 'API',
        },
        request.log,
      );
      return sendAnswer(reply, answer);
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
      const row = await ownTransaction(ctx, request.sellerId, parsePathId(request.params.id));
      return { data: (await refundsOf(ctx.db, row.id)).map(refundView) };
    },
  );
}
