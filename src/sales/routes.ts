import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { validationError } from '../domain/errors.ts';
import { validateSaleRequest } from '../domain/sale-request.ts';
import { idempotent, sendAnswer } from '../http/idempotency.ts';
import { StringEnum, errorResponses, sellerSecurity, type Router } from '../http/router.ts';
import { createSale } from './create-sale.ts';
import { notificationUrlProblem } from '../notifications/target-url.ts';
import { SaleCreated, saleCreatedView } from './sale-view.ts';

// For the OpenAPI document only: the body is checked by validateSaleRequest, which knows the
// conditional rules (card only for cards, shipping when tangible, amount = items + shipping).
const SaleBodyDoc = Type.Object({
  amount: Type.Integer({ minimum: 100, description: 'cents' }),
  paymentMethod: StringEnum(['PIX', 'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO']),
  customer: Type.Object({ name: Type.String(), email: Type.String(), document: Type.Optional(Type.String()), phone: Type.Optional(Type.String()) }),
  items: Type.Array(Type.Object({ title: Type.String(), unitPrice: Type.Integer(), quantity: Type.Integer(), tangible: Type.Boolean() })),
  postbackUrl: Type.Optional(Type.String()),
  installments: Type.Optional(Type.Integer({ minimum: 1, maximum: 12 })),
  card: Type.Optional(Type.Object({ number: Type.String(), holderName: Type.String(), expirationMonth: Type.Integer(), expirationYear: Type.Integer(), cvv: Type.String() })),
  shipping: Type.Optional(Type.Object({})),
  pix: Type.Optional(Type.Object({ expiresInSeconds: Type.Union([Type.Integer(), Type.Null()]) })),
  boleto: Type.Optional(Type.Object({ dueDate: Type.String({ format: 'date' }) })),
});

export async function saleRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post('/api/sales', {
    schema: {
      summary: 'Create a sale (PIX, card or boleto)', tags: ['sales'], security: sellerSecurity,
      headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
      body: SaleBodyDoc, response: { 201: SaleCreated, ...errorResponses },
    },
    validatorCompiler: () => () => true,
  }, async (request, reply) => {
    const now = ctx.clock.now();
    const key = request.headers['idempotency-key'];
    const answer = await idempotent(
      { db: ctx.db, fingerprintKey: ctx.requestFingerprintKey, sellerId: request.sellerId, endpoint: 'POST /api/sales', key: typeof key === 'string' ? key : undefined, body: request.body, now, singleStatement: true },
      async (q) => {
        const parsed = validateSaleRequest(request.body, now);
        if (!parsed.ok) throw validationError(parsed.errors);
        const postbackProblem = parsed.sale.postbackUrl && await notificationUrlProblem(parsed.sale.postbackUrl, ctx.config.webhookAllowPrivate);
        if (postbackProblem) throw validationError([{ field: 'postbackUrl', message: postbackProblem }]);
        const created = await createSale(q, ctx, request.sellerId, parsed.sale, now);
        return { status: 201, body: saleCreatedView(created) };
      });
    return sendAnswer(reply, answer);
  });
}
