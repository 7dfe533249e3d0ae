import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { url_max_length } from '../domain/limits.ts';
import { parsePathId } from '../http/ids.ts';
import { PageQuery, pageAnswer, pageOf, pageRequest } from '../http/paging.ts';
import { errorResponses, Fields, iso, NoBody, PathId, type Router, StringEnum, sellerSecurity } from '../http/router.ts';
import { listNotifications, type NotificationRow, resendNotification } from './delivery-log.ts';
import { addWebhook, listWebhooks, removeWebhook, WEBHOOK_TYPES, type WebhookRecord } from './webhooks.ts';

const Webhook = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  types: Type.Array(StringEnum(WEBHOOK_TYPES)),
  createdAt: Type.String({ format: 'date-time' }),
});
const Notification = Type.Object({
  id: Type.Integer(),
  kind: StringEnum(['TRANSACTION_WEBHOOK', 'TRANSACTION_POSTBACK', 'WITHDRAWAL_WEBHOOK'] as const),
  url: Type.String(),
  resourceId: Type.Integer({ description: 'the transaction id or the cashout id' }),
  eventStatus: Type.String(),
  status: StringEnum(['PENDING', 'DELIVERED', 'FAILED'] as const),
  attempts: Type.Integer(),
  lastResponseStatus: Type.Union([Type.Integer(), Type.Null()]),
  nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
});

function notificationView(n: NotificationRow) {
  return {
    id: n.id,
    kind: n.kind,
    url: n.url,
    resourceId: (n.transaction_id ?? n.cashout_id)!,
    eventStatus: n.event_status,
    status: n.status,
    attempts: n.attempts,
    lastResponseStatus: n.last_response_status,
    nextAttemptAt: n.status === 'PENDING' ? iso(n.next_attempt_at) : null,
    createdAt: n.created_at.toISOString(),
  };
}

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
    { schema: { ...common, summary: 'List permanent webhooks', response: { 200: Type.Object({ data: Type.Array(Webhook) }), ...errorResponses } } },
    async (request) => ({ data: (await listWebhooks(ctx.db, request.sellerId)).map(webhookView) }),
  );

  app.post(
    '/api/webhooks',
    {
      schema: {
        ...common,
        summary: 'Add a permanent webhook (the panel\'s "add webhook")',
        body: Fields({
          url: Type.String({ minLength: 1, maxLength: url_max_length }),
          types: Type.Array(StringEnum(WEBHOOK_TYPES), { minItems: 1, maxItems: 2, uniqueItems: true }),
        }),
        response: { 201: Webhook, ...errorResponses },
      },
    },
    async (request, reply) => reply.status(201).send(webhookView(await addWebhook(ctx, request.sellerId, request.body.url, request.body.types))),
  );

  app.delete(
    '/api/webhooks/:id',
    { schema: { ...common, summary: 'Remove a permanent webhook', params: PathId, response: { 204: Type.Null(), ...errorResponses } } },
    async (request, reply) => {
      await removeWebhook(ctx.db, request.sellerId, parsePathId(request.params.id));
      return reply.status(204).send(null);
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
        summary: 'The delivery log, newest first',
        querystring: Type.Object(PageQuery),
        response: { 200: pageOf(Notification), ...errorResponses },
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
        summary: 'One more attempt now, whatever its status (same X-Event-Id)',
        params: PathId,
        body: NoBody,
        response: { 202: Notification, ...errorResponses },
      },
    },
    async (request, reply) => {
      const row = await resendNotification(ctx.db, request.sellerId, parsePathId(request.params.id), ctx.clock.now());
      return reply.status(202).send(notificationView(row));
    },
  );
}
