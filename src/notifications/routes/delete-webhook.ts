import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { refusalError } from '../../domain/result.ts';
import { parsePathId } from '../../http/ids.ts';
import { BODY_ERRORS, owned, responses, SELLER_ERRORS } from '../../http/openapi.ts';
import { PathId, type Router } from '../../http/router.ts';
import { removeWebhook } from '../webhooks.ts';
import { common } from './common.ts';

export function deleteWebhookRoute(app: Router, ctx: AppContext): void {
  app.delete(
    '/api/webhooks/:id',
    {
      schema: {
        ...common,
        operationId: 'deleteWebhook',
        summary: 'Remove a permanent webhook',
        params: PathId,
        response: responses({ 204: Type.Null() }, [...SELLER_ERRORS, ...BODY_ERRORS, ...owned('webhook')]),
      },
    },
    async (request, reply) => {
      const removed = await removeWebhook(ctx.db, request.sellerId, parsePathId(request.params.id));
      if (!removed.ok) throw refusalError(removed.refusal);
      return reply.status(204).send(null);
    },
  );
}
