import type { AppContext } from '../../context.ts';
import { refusalError } from '../../domain/result.ts';
import { parsePathId } from '../../http/ids.ts';
import { BODY_ERRORS, NO_FIELDS, owned, responses, SELLER_ERRORS } from '../../http/openapi.ts';
import { NoBody, PathId, type Router, sellerSecurity } from '../../http/router.ts';
import { applyEvent } from '../apply-event.ts';
import { Transaction } from '../transaction-view.ts';

/** `POST /api/transactions/{id}/cancel` (CONTRACT §3): PENDENTE or FALHA → CANCELADO. */
export function cancelTransactionRoute(app: Router, ctx: AppContext): void {
  const common = { tags: ['transactions'], security: sellerSecurity };
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
    async (request) => {
      const moved = await applyEvent(ctx, parsePathId(request.params.id), 'CANCELLED', request.sellerId);
      if (!moved.ok) throw refusalError(moved.refusal);
      return moved.value;
    },
  );
}
