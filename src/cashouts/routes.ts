import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { CashoutBody } from '../domain/cashout-request.ts';
import { CASHOUT_EVENTS } from '../domain/cashout-states.ts';
import { ApiError } from '../domain/errors.ts';
import { sendAnswer } from '../http/idempotency.ts';
import { parsePathId } from '../http/ids.ts';
import { errorResponses, Fields, operatorSecurity, PathId, type Router, StringEnum, sellerSecurity } from '../http/router.ts';
import { Cashout, cashoutView } from './cashout-view.ts';
import { findCashout } from './cashouts-repo.ts';
import { requestCashout } from './request-cashout.ts';
import { moveCashout } from './transitions.ts';

export async function cashoutRoutes(app: Router, ctx: AppContext): Promise<void> {
  const common = { tags: ['cashout'], security: sellerSecurity };

  app.post(
    '/api/public/cashout',
    {
      schema: {
        ...common,
        summary: 'Pay out available balance to a PIX key',
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        body: CashoutBody,
        response: { 201: Cashout, ...errorResponses },
      },
      // requestCashout checks CashoutBody inside the idempotent request, in CONTRACT §8's order
      // (the body, then the key, then the seller), so that a 400 is stored and replayed like a 422.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const answer = await requestCashout(ctx, {
        sellerId: request.sellerId,
        body: request.body,
        idempotencyKey: typeof key === 'string' ? key : undefined,
        channel: 'API',
        now: ctx.clock.now(),
      });
      return sendAnswer(reply, answer);
    },
  );

  app.get(
    '/api/public/cashout/:id',
    {
      schema: { ...common, summary: 'Read one cashout', params: PathId, response: { 200: Cashout, ...errorResponses } },
    },
    async (request) => {
      const row = await findCashout(ctx.db, parsePathId(request.params.id));
      if (!row) throw new ApiError('NOT_FOUND', 'Cashout not found');
      if (row.seller_id !== request.sellerId) throw new ApiError('FORBIDDEN', 'This cashout belongs to another account');
      return cashoutView(row);
    },
  );
}

export async function cashoutAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/admin/cashouts/:id/events',
    {
      schema: {
        tags: ['operator'],
        security: operatorSecurity,
        summary: 'Apply a payout provider/operator event to a cashout (CONTRACT §6)',
        params: PathId,
        body: Fields({ event: StringEnum(CASHOUT_EVENTS) }),
        response: { 200: Cashout, ...errorResponses },
      },
    },
    async (request) => {
      const id = parsePathId(request.params.id);
      const result = await ctx.db.tx((q) => moveCashout(q, id, request.body.event, ctx.clock.now()));
      if (result.kind === 'not_found') throw new ApiError('NOT_FOUND', 'Cashout not found');
      if (result.kind === 'refused')
        throw new ApiError('INVALID_TRANSITION', `Cannot apply ${request.body.event} to a ${result.row.status} cashout: ${result.reason}`);
      return cashoutView(result.row);
    },
  );
}
