import type { AppContext } from '../context.ts';
import { validationError } from '../domain/errors.ts';
import { refusalError } from '../domain/result.ts';
import { validateSaleRequest } from '../domain/sale-request.ts';
import { SaleBody } from '../domain/sale-schema.ts';
import { idempotent, sendAnswer } from '../http/idempotency.ts';
import { BODY_ERRORS, IDEMPOTENCY_ERRORS, responses, SELLER_ERRORS } from '../http/openapi.ts';
import { IdempotencyHeaders, type Router, sellerSecurity } from '../http/router.ts';
import { notificationUrlProblem } from '../notifications/target-url.ts';
import { submitCardSale } from './card-payment.ts';
import { createSale, prepareCharge } from './create-sale.ts';
import { saleExamples } from './sale-examples.ts';
import { SaleCreated, saleCreatedView } from './sale-view.ts';

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
      const now = ctx.clock.now();
      const key = request.headers['idempotency-key'];
      const parsed = validateSaleRequest(request.body, now);
      const answer = await idempotent(
        {
          db: ctx.db,
          fingerprintKey: ctx.requestFingerprintKey,
          sellerId: request.sellerId,
          endpoint: 'POST /api/sales',
          key: typeof key === 'string' ? key : undefined,
          body: request.body,
          now,
          singleStatement: true,
        },
        async (q, prepared) => {
          if (!parsed.ok) throw refusalError(parsed.refusal);
          if (prepared?.postbackProblem) throw validationError([{ field: 'postbackUrl', message: prepared.postbackProblem }]);
          const created = await createSale(q, ctx, request.sellerId, parsed.value, now, prepared?.charge ?? null);
          return { status: 201, body: saleCreatedView(created) };
        },
        // Before the sale is written and outside its transaction: the postback URL's check (DNS) and
        // the PIX charge (a call to the PSP), made only for a valid sale.
        parsed.ok
          ? async () => {
              const url = parsed.value.postbackUrl;
              const postbackProblem = url ? await notificationUrlProblem(url, ctx.config.webhookAllowPrivate) : null;
              return { postbackProblem, charge: postbackProblem ? null : await prepareCharge(ctx, parsed.value) };
            }
          : undefined,
      );
      // After the sale is written and outside its transaction: a processor that decides over the
      // network gets the card now (CONTRACT §11.2). A replay sends nothing again.
      if (parsed.ok && answer.status === 201 && !answer.replayed) {
        const saleId = (answer.body as { sale: { id: number } }).sale.id;
        await submitCardSale(ctx, saleId, parsed.value, cvvOf(request.body), request.log);
      }
      return sendAnswer(reply, answer);
    },
  );
}

/** The CVV, which the validated sale never carries (it may be logged or stored): read from the body once, for the processor. */
function cvvOf(body: unknown): string {
  const cvv = (body as { card?: { cvv?: unknown } } | null)?.card?.cvv;
  return typeof cvv === 'string' ? cvv : '';
}
