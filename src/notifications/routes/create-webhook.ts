import type { AppContext } from '../../context.ts';
import { refusalError } from '../../domain/result.ts';
import { BODY_ERRORS, responses, SELLER_ERRORS } from '../../http/openapi.ts';
import type { Router } from '../../http/router.ts';
import { addWebhook } from '../webhooks.ts';
import { common, Webhook, WebhookRequest, webhookExamples, webhookView } from './common.ts';

/** The spec's panel "add webhook", as API (CONTRACT §3). */
export function createWebhookRoute(app: Router, ctx: AppContext): void {
  app.post(
    '/api/webhooks',
    {
      schema: {
        ...common,
        operationId: 'createWebhook',
        summary: 'Add a permanent webhook (the panel\'s "add webhook")',
        description:
          'An http(s) URL without credentials, at most 20 per account. TRANSACTION webhooks receive the status changes of every sale, ' +
          'WITHDRAWAL webhooks those of cashouts; each notification carries the Standard Webhooks signature headers.',
        body: WebhookRequest,
        bodyExamples: webhookExamples,
        response: responses({ 201: Webhook }, [
          ...SELLER_ERRORS,
          ...BODY_ERRORS,
          [
            'VALIDATION_ERROR',
            'a field breaks its rule or is unknown, the URL is not http(s) or carries credentials, or the account has 20 webhooks already',
          ],
        ]),
      },
    },
    async (request, reply) => {
      const added = await addWebhook(ctx, request.sellerId, request.body.url, request.body.types);
      if (!added.ok) throw refusalError(added.refusal);
      return reply.status(201).send(webhookView(added.value));
    },
  );
}
