import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { PAGE_ERRORS, responses, SELLER_ERRORS } from '../http/openapi.ts';
import { PageQuery, pageAnswer, pageOf, pageRequest } from '../http/paging.ts';
import { type Router, StringEnum, sellerSecurity } from '../http/router.ts';
import { statementLines } from './statement.ts';

const Line = Type.Object(
  {
    id: Type.Integer(),
    createdAt: Type.String({ format: 'date-time' }),
    bucket: StringEnum(['available', 'blocked'] as const),
    amount: Type.Integer({ description: 'signed cents: positive raises the bucket' }),
    kind: Type.String({ description: 'what moved the money, e.g. FIRST_PAYMENT, RESERVE_RELEASE, REFUND_REQUESTED, MED_OPENED, CASHOUT_CREATED' }),
    transactionId: Type.Union([Type.Integer(), Type.Null()], { description: 'the sale it concerns, if any' }),
    cashoutId: Type.Union([Type.Integer(), Type.Null()], { description: 'the cashout it concerns, if any' }),
  },
  { title: 'StatementLine', description: "One line of the seller's journal." },
);

/** The extrato: the seller's own journal lines, newest first (CONTRACT §3). */
export async function statementRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/api/public/statement',
    {
      schema: {
        operationId: 'listStatement',
        summary: "The seller's journal lines (extrato), newest first",
        tags: ['balance'],
        security: sellerSecurity,
        querystring: Type.Object(PageQuery),
        response: responses({ 200: pageOf(Line, 'StatementPage') }, [...SELLER_ERRORS, ...PAGE_ERRORS]),
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
