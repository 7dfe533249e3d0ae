import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { errorResponses, type Router, sellerSecurity } from '../http/router.ts';
import { readBalance } from './balances.ts';

const Balance = Type.Object({
  available: Type.Integer({ description: 'cents usable for cashout' }),
  blocked: Type.Integer({ description: 'cents reserved: pending cashouts, open MEDs, reserves' }),
  total: Type.Integer({ description: 'cents; available + blocked' }),
});

export async function balanceRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/api/public/balance',
    {
      schema: {
        summary: 'Read the balance, in cents',
        tags: ['balance'],
        security: sellerSecurity,
        response: { 200: Balance, ...errorResponses },
      },
    },
    async (request) => readBalance(ctx.db, request.sellerId),
  );
}
