import type { AppContext } from '../context.ts';
import { SaleBody } from '../domain/sale-schema.ts';
import { sendAnswer } from '../http/idempotency.ts';
import { BODY_ERRORS, IDEMPOTENCY_ERRORS, responses, SELLER_ERRORS } from '../http/openapi.ts';
import { IdempotencyHeaders, type Router, sellerSecurity } from '../http/router.ts';
import { saleExamples } from './sale-examples.ts';
import { SaleCreated } from './sale-view.ts';
import { sell } from './sell.ts';

export async function saleRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/api/sales',
    {
      schema: {
        operationId: 'createSale',
        summary: 'Create a sale (PIX, card or boleto)',
        description:
          'Answers 201 with the sale, always PENDENTE: a PIX sale carries its BR Code and QR, a boleto its linha digitável and barcode. ' +
          'A card sale then moves on through the processor (the sandbox: approved, declined by 4000000000000002, failed by 4000000000000119). ' +
          'Card numbers and CVVs are never kept.',
        tags: ['sales'],
        security: sellerSecurity,
        headers: IdempotencyHeaders,
        body: SaleBody,
        bodyExamples: saleExamples,
        response: responses({ 201: SaleCreated }, [
          ...SELLER_ERRORS,
          ...BODY_ERRORS,
          [
            'VALIDATION_ERROR',
            'a field breaks its rule, the amount is not the items plus shipping, or the method does not take a part sent (unknown fields are ignored); `details` names each one',
          ],
          ...IDEMPOTENCY_ERRORS,
          ['PROVIDER_ERROR', 'the PIX provider did not create the charge; no sale was written'],
        ]),
      },
      // validateSaleRequest runs SaleBody inside the idempotent request, so that a 400 is stored and
      // replayed under its Idempotency-Key like every other refusal.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const answer = await sell(ctx, {
        sellerId: request.sellerId,
        body: request.body,
        idempotencyKey: typeof key === 'string' ? key : undefined,
        log: request.log,
      });
      return sendAnswer(reply, answer);
    },
  );
}
