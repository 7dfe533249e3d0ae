import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { url_max_length } from '../domain/limits.ts';
import { parsePathId } from '../http/ids.ts';
import { BODY_ERRORS, type BodyExample, NO_FIELDS, owned, PAGE_ERRORS, responses, SELLER_ERRORS } from '../http/openapi.ts';
import { PageQuery, pageAnswer, pageOf, pageRequest } from '../http/paging.ts';
import { Fields, NoBody, PathId, type Router, StringEnum, sellerSecurity } from '../http/router.ts';
import { listNotifications, resendNotification } from './delivery-log.ts';
import { Notification, notificationView } from './notification-view.ts';
import { sendTestNotification } from './webhook-test.ts';
import { addWebhook, listWebhooks, removeWebhook, WEBHOOK_TYPES, type WebhookRecord } from './webhooks.ts';

const Webhook = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String(),
    types: Type.Array(StringEnum(WEBHOOK_TYPES), { description: 'TRANSACTION: status changes of sales; WITHDRAWAL: of cashouts' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Webhook' },
);
const WebhookRequest = Fields(
  {
    url: Type.String({ minLength: 1, maxLength: url_max_length }),
    types: Type.Array(StringEnum(WEBHOOK_TYPES), { minItems: 1, maxItems: 2, uniqueItems: true }),
  },
  { title: 'WebhookRequest' },
);
const webhookExamples: Record<string, BodyExample> = {
  transactions: { summary: 'Status changes of sales', value: { url: 'https://loja.example.com/webhooks/vendas', types: ['TRANSACTION'] } },
  withdrawals: {
    summary: 'Status changes of cashouts ("notify withdrawals")',
    value: { url: 'https://loja.example.com/webhooks/saques', types: ['WITHDRAWAL'] },
  },
  both: { summary: 'Both, to one URL', value: { url: 'https://loja.example.com/webhooks', types: ['TRANSACTION', 'WITHDRAWAL'] } },
};
const common = { tags: ['notifications'], security: sellerSecurity };

const webhookView = (w: WebhookRecord) => ({ id: w.id, url: w.url, types: w.types, createdAt: w.createdAt.toISOString() });

export async function notificationRoutes(app: Router, ctx: AppContext): Promise<void> {
  webhookRoutes(app, ctx);
  deliveryLogRoutes(app, ctx);
}

/** The spec's panel "add webhook", as API (CONTRACT §3). */
function webhookRoutes(app: Router, ctx: AppContext): void {
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
    async (request, reply) => reply.status(201).send(webhookView(await addWebhook(ctx, request.sellerId, request.body.url, request.body.types))),
  );

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
      await removeWebhook(ctx.db, request.sellerId, parsePathId(request.params.id));
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/webhooks/:id/test',
    {
      schema: {
        ...common,
        operationId: 'testWebhook',
        summary: 'Send one test notification (the panel\'s "Enviar teste")',
        description:
          "One notification of the webhook's type with a fixed sample body (a TRANSACTION sample for a webhook of both types), " +
          'in the shape of the real one, marked by the header X-Test-Event: true; queued and delivered like any other, ' +
          'listed in the delivery log with `test: true` and `resourceId: null`, resendable.',
        params: PathId,
        body: NoBody,
        response: responses({ 202: Notification }, [
          ...SELLER_ERRORS,
          ...BODY_ERRORS,
          ...NO_FIELDS,
          ...owned('webhook'),
          ['RATE_LIMITED', 'more than 10 test notifications in the last minute'],
        ]),
      },
    },
    async (request, reply) => {
      const view = await sendTestNotification(ctx, request.sellerId, parsePathId(request.params.id), ctx.clock.now());
      return reply.status(202).send(view);
    },
  );
}

/** The delivery log and its resend (CONTRACT §3). */
function deliveryLogRoutes(app: Router, ctx: AppContext): void {
  app.get(
    '/api/notifications',
    {
      schema: {
        ...common,
        operationId: 'listNotifications',
        summary: 'The delivery log, newest first',
        querystring: Type.Object(PageQuery),
        response: responses({ 200: pageOf(Notification, 'NotificationPage') }, [...SELLER_ERRORS, ...PAGE_ERRORS]),
      },
    },
    async (request) => {
      const { limit, fetch, beforeId } = pageRequest(request.query);
      const rows = await listNotifications(ctx.db, request.sellerId, beforeId, fetch);
      return pageAnswer(rows, limit, (page) => page.map(notificationView));
    },
  );

  app.post(
    '/api/notifications/:id/resend',
    {
      schema: {
        ...common,
        operationId: 'resendNotification',
        summary: 'One more attempt now, whatever its status (same X-Event-Id)',
        params: PathId,
        body: NoBody,
        response: responses({ 202: Notification }, [...SELLER_ERRORS, ...BODY_ERRORS, ...NO_FIELDS, ...owned('notification')]),
      },
    },
    async (request, reply) => {
      const row = await resendNotification(ctx.db, request.sellerId, parsePathId(request.params.id), ctx.clock.now());
      return reply.status(202).send(notificationView(row));
    },
  );
}
