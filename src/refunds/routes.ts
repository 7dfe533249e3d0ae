import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { refusalError } from '../domain/result.ts';
import { sendAnswer } from '../http/idempotency.ts';
import { parsePathId } from '../http/ids.ts';
import { BODY_ERRORS, IDEMPOTENCY_ERRORS, owned, responses, SELLER_ERRORS } from '../http/openapi.ts';
import { IdempotencyHeaders, PathId, type Router, sellerSecurity } from '../http/router.ts';
import { ownTransaction } from '../transactions/own-transaction.ts';
import { refundsOf } from '../transactions/refunds-repo.ts';
import { RefundBody, refundSale } from './refund-sale.ts';
import { Refund, refundView } from './refund-view.ts';

export async function refundRoutes(app: Router, ctx: AppContext): Promise<void> {
  const common = { tags: ['transactions'], security: sellerSecurity };

  app.post(
    '/api/transactions/:id/refund',
    {
      schema: {
        ...common,
        operationId: 'refundTransaction',
        summary: 'Refund a paid transaction, in full or in part',
        description:
          'Answers 201 with the Refund: SUCCEEDED at once for providers that refund synchronously; PENDING for a PIX devolução until the PSP reports it. The sale moves to ESTORNADO when its refunds reach its amount.',
        params: PathId,
        headers: IdempotencyHeaders,
        body: RefundBody,
        bodyExamples: {
          full: { summary: 'All that is not yet refunded', value: {} },
          partial: { summary: 'Part of it: R$ 50,00', value: { amount: 5000 } },
        },
        response: responses({ 201: Refund }, [
          ...SELLER_ERRORS,
          ...BODY_ERRORS,
          'VALIDATION_ERROR',
          ...owned('transaction'),
          ['INVALID_TRANSITION', 'the transaction is not PAGO, or a refund of it is still PENDING'],
          'REFUND_EXCEEDS_AMOUNT',
          ...IDEMPOTENCY_ERRORS,
        ]),
      },
      // refundSale checks RefundBody inside the keyed request, so that a 400 is kept and replayed like a 409.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const answer = await refundSale(
        ctx,
        {
          sellerId: request.sellerId,
          transactionId: parsePathId(request.params.id),
          body: request.body,
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
        operationId: 'listRefunds',
        summary: "A transaction's refunds, oldest first",
        params: PathId,
        response: responses({ 200: Type.Object({ data: Type.Array(Refund) }, { title: 'RefundList' }) }, [...SELLER_ERRORS, ...owned('transaction')]),
      },
    },
    async (request) => {
      const own = await ownTransaction(ctx, request.sellerId, parsePathId(request.params.id));
      if (!own.ok) throw refusalError(own.refusal);
      const row = own.value;
      return { data: (await refundsOf(ctx.db, row.id)).map(refundView) };
    },
  );
}
