import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { PageQuery, pageAnswer, pageOf, pageRequest } from '../http/paging.ts';
import { errorResponses, type Router, StringEnum, sellerSecurity } from '../http/router.ts';
import { statementLines } from './statement.ts';

const Line = Type.Object({
  id: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  bucket: StringEnum(['available', 'blocked'] as const),
  amount: Type.Integer({ description: 'signed cents' }),
  kind: Type.String({ description: 'what moved the money, e.g. FIRST_PAYMENT, REFUND, MED_OPENED, CASHOUT_CREATED' }),
  transactionId: Type.Union([Type.Integer(), Type.Null()]),
  cashoutId: Type.Union([Type.Integer(), Type.Null()]),
});

/** The extrato: the seller's own journal lines, newest first (CONTRACT §3). */
export async function statementRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/api/public/statement',
    {
      schema: {
        summary: "The seller's journal lines (extrato), newest first",
        tags: ['balance'],
        security: sellerSecurity,
        querystring: Type.Object(PageQuery),
        response: { 200: pageOf(Line), ...errorResponses },
      },
    },
    async (request) => {
      const { limit, fetch, beforeId } = pageRequest(request.query);
      const rows = await statementLines(ctx.db, request.sellerId, beforeId, fetch);
      return pageAnswer(rows, limit, (page) =>
        page.map((l) => ({
          id: l.id,
          createdAt: l.created_at.toISOString(),
          bucket: l.account,
          amount: l.amount,
          kind: l.kind,
          transactionId: l.transaction_id,
          cashoutId: l.cashout_id,
        })),
      );
    },
  );
}
