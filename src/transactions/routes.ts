import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { PAYMENT_METHODS, TRANSACTION_STATUSES } from '../domain/transaction-states.ts';
import { parsePathId } from '../http/ids.ts';
import { BODY_ERRORS, NO_FIELDS, owned, PAGE_ERRORS, responses, SELLER_ERRORS } from '../http/openapi.ts';
import { PageQuery, pageAnswer, pageOf, pageRequest } from '../http/paging.ts';
import { NoBody, PathId, type Router, StringEnum, sellerSecurity } from '../http/router.ts';
import { applyEvent } from './apply-event.ts';
import { ownTransaction, withItems } from './own-transaction.ts';
import { Transaction, transactionView } from './transaction-view.ts';
import { itemsOf, listTransactions } from './transactions-repo.ts';

const ListQuery = Type.Object({
  status: Type.Optional(StringEnum(TRANSACTION_STATUSES)),
  paymentMethod: Type.Optional(StringEnum(PAYMENT_METHODS)),
  ...PageQuery,
});

export async function transactionRoutes(app: Router, ctx: AppContext): Promise<void> {
  const common = { tags: ['transactions'], security: sellerSecurity };

  app.get(
    '/api/transactions/:id',
    {
      schema: {
        ...common,
        operationId: 'getTransaction',
        summary: 'Read one transaction (money in cents)',
        params: PathId,
        response: responses({ 200: Transaction }, [...SELLER_ERRORS, ...owned('transaction')]),
      },
    },
    async (request) => withItems(ctx, await ownTransaction(ctx, request.sellerId, parsePathId(request.params.id))),
  );

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

  app.post(
    '/api/transactions/:id/cancel',
    {
      schema: {
        ...common,
        operationId: 'cancelTransaction',
        summary: 'Cancel a pending or failed transaction (→ CANCELADO)',
        description: 'PENDENTE or FALHA → CANCELADO; nothing is charged. Repeating a cancel that succeeded answers 200 and changes nothing.',
        params: PathId,
        body: NoBody,
        response: responses({ 200: Transaction }, [
          ...SELLER_ERRORS,
          ...BODY_ERRORS,
          ...NO_FIELDS,
          ...owned('transaction'),
          ['INVALID_TRANSITION', 'the transaction is neither PENDENTE nor FALHA'],
        ]),
      },
    },
    async (request) => applyEvent(ctx, parsePathId(request.params.id), 'CANCELLED', request.sellerId),
  );
}
