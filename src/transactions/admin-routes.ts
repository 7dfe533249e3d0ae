import type { AppContext } from '../context.ts';
import { TRANSACTION_EVENTS } from '../domain/transaction-states.ts';
import { parsePathId } from '../http/ids.ts';
import { errorResponses, Fields, operatorSecurity, PathId, type Router, StringEnum } from '../http/router.ts';
import { applyEvent } from './apply-event.ts';
import { Transaction } from './transaction-view.ts';

export async function transactionAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/admin/transactions/:id/events',
    {
      schema: {
        tags: ['operator'],
        security: operatorSecurity,
        summary: 'Apply a processor/operator event to a transaction (CONTRACT §6)',
        params: PathId,
        body: Fields({ event: StringEnum(TRANSACTION_EVENTS) }),
        response: { 200: Transaction, ...errorResponses },
      },
    },
    async (request) => applyEvent(ctx, parsePathId(request.params.id), request.body.event),
  );
}
