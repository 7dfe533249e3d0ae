import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { responses, SELLER_ERRORS } from '../http/openapi.ts';
import { type Router, sellerSecurity } from '../http/router.ts';
import { readBalanceInGroup } from './balances.ts';

const Balance = Type.Object(
  {
    available: Type.Integer({
      description: 'cents usable for cashout; negative when refunds or disputes took more than there was (the seller owes)',
    }),
    blocked: Type.Integer({ description: 'cents reserved: pending cashouts and refunds, open MEDs, reserves' }),
    total: Type.Integer({ description: 'cents; available + blocked' }),
  },
  { title: 'Balance', description: 'The balance, in integer cents (all zero for a seller with no movement).' },
);

export async function balanceRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/api/public/balance',
    {
      schema: {
        operationId: 'getBalance',
        summary: 'Read the balance, in cents',
        tags: ['balance'],
        security: sellerSecurity,
        response: responses({ 200: Balance }, SELLER_ERRORS),
      },
    },
    async (request) => readBalanceInGroup(ctx.db, request.sellerId),
  );
}
