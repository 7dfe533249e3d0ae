import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { responses, SELLER_ERRORS } from '../../http/openapi.ts';
import type { Router } from '../../http/router.ts';
import { listWebhooks } from '../webhooks.ts';
import { common, Webhook, webhookView } from './common.ts';

export function listWebhooksRoute(app: Router, ctx: AppContext): void {
  app.get(
    '/api/webhooks',
    {
      schema: {
        ...common,
        operationId: 'listWebhooks',
        summary: 'List permanent webhooks',
        response: responses({ 200: Type.Object({ data: Type.Array(Webhook) }, { title: 'WebhookList' }) }, SELLER_ERRORS),
      },
    },
    async (request) => ({ data: (await listWebhooks(ctx.db, request.sellerId)).map(webhookView) }),
  );
}
