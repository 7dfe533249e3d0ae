import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { PAYMENT_METHODS, TRANSACTION_STATUSES } from '../../domain/transaction-states.ts';
import { PAGE_ERRORS, responses, SELLER_ERRORS } from '../../http/openapi.ts';
import { PageQuery, pageAnswer, pageOf, pageRequest } from '../../http/paging.ts';
import { type Router, StringEnum, sellerSecurity } from '../../http/router.ts';
import { Transaction, transactionView } from '../transaction-view.ts';
import { itemsOf, listTransactions } from '../transactions-repo.ts';

const ListQuery = Type.Object({
  status: Type.Optional(StringEnum(TRANSACTION_STATUSES)),
  paymentMethod: Type.Optional(StringEnum(PAYMENT_METHODS)),
  ...PageQuery,
});

/** `GET /api/transactions` (CONTRACT §3): the seller's transactions, newest first. */
export function listTransactionsRoute(app: Router, ctx: AppContext): void {
  const common = { tags: ['transactions'], security: sellerSecurity };
  app.get(
    '/api/transactions',
    {
      schema: {
        ...common,
        operationId: 'listTransactions',
        summary: "List the seller's transactions, newest first",
        querystring: ListQuery,
        response: responses({ 200: pageOf(Transaction, 'TransactionPage') }, [
          ...SELLER_ERRORS,
          ...PAGE_ERRORS,
          ['VALIDATION_ERROR', '`status` or `paymentMethod` is not one of its values'],
        ]),
      },
    },
    async (request) => {
      const { limit, fetch, beforeId } = pageRequest(request.query);
      const rows = await listTransactions(ctx.db, {
        sellerId: request.sellerId,
        status: request.query.status,
        paymentMethod: request.query.paymentMethod,
        beforeId,
        limit: fetch,
      });
      const items = await itemsOf(
        ctx.db,
        rows.slice(0, limit).map((r) => r.id),
      );
      return pageAnswer(rows, limit, (page) => page.map((r) => transactionView(r, items.get(r.id) ?? [])));
    },
  );
}
