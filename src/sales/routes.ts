import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { validationError } from '../domain/errors.ts';
import { refusalError } from '../domain/result.ts';
import { validateSaleRequest } from '../domain/sale-request.ts';
import { SaleBody } from '../domain/sale-schema.ts';
import { idempotent, sendAnswer } from '../http/idempotency.ts';
import { errorResponses, type Router, sellerSecurity } from '../http/router.ts';
import { notificationUrlProblem } from '../notifications/target-url.ts';
import { createSale } from './create-sale.ts';
import { SaleCreated, saleCreatedView } from './sale-view.ts';

export async function saleRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/api/sales',
    {
      schema: {
        summary: 'Create a sale (PIX, card or boleto)',
        tags: ['sales'],
        security: sellerSecurity,
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        body: SaleBody,
        response: { 201: SaleCreated, ...errorResponses },
      },
      // validateSaleRequest runs SaleBody inside the idempotent request, so that a 400 is stored and
      // replayed under its Idempotency-Key like every other refusal.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const now = ctx.clock.now();
      const key = request.headers['idempotency-key'];
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
        async (q) => {
          const parsed = validateSaleRequest(request.body, now);
          if (!parsed.ok) throw refusalError(parsed.refusal);
          const sale = parsed.value;
          const postbackProblem = sale.postbackUrl && (await notificationUrlProblem(sale.postbackUrl, ctx.config.webhookAllowPrivate));
          if (postbackProblem) throw validationError([{ field: 'postbackUrl', message: postbackProblem }]);
          const created = await createSale(q, ctx, request.sellerId, sale, now);
          return { status: 201, body: saleCreatedView(created) };
        },
      );
      return sendAnswer(reply, answer);
    },
  );
}
