import type { AppContext } from '../../context.ts';
import { refusalError } from '../../domain/result.ts';
import { parsePathId } from '../../http/ids.ts';
import { owned, responses, SELLER_ERRORS } from '../../http/openapi.ts';
import { PathId, type Router, sellerSecurity } from '../../http/router.ts';
import { ownTransaction, withItems } from '../own-transaction.ts';
import { Transaction } from '../transaction-view.ts';

/** `GET /api/transactions/{id}` (spec). */
export function getTransactionRoute(app: Router, ctx: AppContext): void {
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
    async (request) => {
      const own = await ownTransaction(ctx, request.sellerId, parsePathId(request.params.id));
      if (!own.ok) throw refusalError(own.refusal);
      return withItems(ctx, own.value);
    },
  );
}
