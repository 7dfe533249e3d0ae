import { Type } from 'typebox';
import { maybeOne, one } from '../db/sql.ts';
import type { AppContext } from '../context.ts';
import { ApiError, validationError } from '../domain/errors.ts';
import { parsePathId } from '../http/ids.ts';
import { errorResponses, iso, PathId, sellerSecurity, StringEnum, type Router } from '../http/router.ts';
import { PageQuery, pageAnswer, pageOf, pageRequest } from '../http/paging.ts';
import { url_max_length } from '../domain/limits.ts';
import { notificationUrlProblem } from './target-url.ts';
import { NOTIFICATIONS_CHANNEL } from './outbox.ts';

const webhooks_per_seller_max = 20;
const WEBHOOK_TYPES = ['TRANSACTION', 'WITHDRAWAL'] as const;

const Webhook = Type.Object({ id: Type.Integer(), url: Type.String(), types: Type.Array(StringEnum(WEBHOOK_TYPES)), createdAt: Type.String({ format: 'date-time' }) });
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

interface NotificationRow {
  id: number; kind: 'TRANSACTION_WEBHOOK'; url: string; transaction_id: number | null; cashout_id: number | null; event_status: string;
  status: 'PENDING'; attempts: number; last_response_status: number | null; next_attempt_at: Date; created_at: Date;
}

function notificationView(n: NotificationRow) {
  return {
    id: n.id, kind: n.kind, url: n.url, resourceId: (n.transaction_id ?? n.cashout_id)!, eventStatus: n.event_status, status: n.status,
    attempts: n.attempts, lastResponseStatus: n.last_response_status,
    nextAttemptAt: n.status === 'PENDING' ? iso(n.next_attempt_at) : null, createdAt: n.created_at.toISOString(),
  };
}

export async function notificationRoutes(app: Router, ctx: AppContext): Promise<void> {
  const common = { tags: ['notifications'], security: sellerSecurity };

  app.get('/api/webhooks', {
    schema: { ...common, summary: 'List permanent webhooks', response: { 200: Type.Object({ data: Type.Array(Webhook) }), ...errorResponses } },
  }, async (request) => {
    const r = await ctx.db.query<{ id: number; url: string; types: ('TRANSACTION' | 'WITHDRAWAL')[]; created_at: Date }>(
      'SELECT id, url, types, created_at FROM webhooks WHERE seller_id = $1 AND deleted_at IS NULL ORDER BY id', [request.sellerId]);
    return { data: r.rows.map((w) => ({ id: w.id, url: w.url, types: w.types, createdAt: w.created_at.toISOString() })) };
  });

  app.post('/api/webhooks', {
    schema: {
      ...common, summary: 'Add a permanent webhook (the panel\'s "add webhook")',
      body: Type.Object({ url: Type.String({ minLength: 1, maxLength: url_max_length }), types: Type.Array(StringEnum(WEBHOOK_TYPES), { minItems: 1, maxItems: 2, uniqueItems: true }) }),
      response: { 201: Webhook, ...errorResponses },
    },
  }, async (request, reply) => {
    const problem = await notificationUrlProblem(request.body.url, ctx.config.webhookAllowPrivate);
    if (problem) throw validationError([{ field: 'url', message: problem }]);
    const row = await ctx.db.tx(async (q) => {
      await q.query('SELECT 1 FROM sellers WHERE id = $1 FOR UPDATE', [request.sellerId]);
      const count = one(await q.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks WHERE seller_id = $1 AND deleted_at IS NULL', [request.sellerId])).n;
      if (count >= webhooks_per_seller_max) throw validationError([{ field: 'url', message: `at most ${webhooks_per_seller_max} webhooks per account` }]);
      return one(await q.query<{ id: number; created_at: Date }>('INSERT INTO webhooks (seller_id, url, types) VALUES ($1, $2, $3) RETURNING id, created_at',
        [request.sellerId, request.body.url, request.body.types]));
    });
    return reply.status(201).send({ id: row.id, url: request.body.url, types: request.body.types, createdAt: row.created_at.toISOString() });
  });

  app.delete('/api/webhooks/:id', {
    schema: { ...common, summary: 'Remove a permanent webhook', params: PathId, response: { 204: Type.Null(), ...errorResponses } },
  }, async (request, reply) => {
    const id = parsePathId(request.params.id);
    const row = maybeOne(await ctx.db.query<{ seller_id: number }>('SELECT seller_id FROM webhooks WHERE id = $1 AND deleted_at IS NULL', [id]));
    if (!row) throw new ApiError('NOT_FOUND', 'Webhook not found');
    if (row.seller_id !== request.sellerId) throw new ApiError('FORBIDDEN', 'This webhook belongs to another account');
    await ctx.db.query('UPDATE webhooks SET deleted_at = now() WHERE id = $1', [id]);
    return reply.status(204).send(null);
  });

  app.get('/api/notifications', {
    schema: {
      ...common, summary: 'The delivery log, newest first',
      querystring: Type.Object(PageQuery),
      response: { 200: pageOf(Notification), ...errorResponses },
    },
  }, async (request) => {
    const { limit, fetch, beforeId } = pageRequest(request.query);
    const r = await ctx.db.query<NotificationRow>(`
      SELECT id, kind, url, transaction_id, cashout_id, event_status, status, attempts, last_response_status, next_attempt_at, created_at
      FROM notifications WHERE seller_id = $1 AND ($2::bigint IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`, [request.sellerId, beforeId, fetch]);
    return pageAnswer(r.rows, limit, (page) => page.map(notificationView));
  });

  app.post('/api/notifications/:id/resend', {
    schema: { ...common, summary: 'One more attempt now, whatever its status (same X-Event-Id)', params: PathId, response: { 202: Notification, ...errorResponses } },
  }, async (request, reply) => {
    const id = parsePathId(request.params.id);
    const row = await ctx.db.tx(async (q) => {
      const found = maybeOne(await q.query<NotificationRow & { seller_id: number }>('SELECT * FROM notifications WHERE id = $1 FOR UPDATE', [id]));
      if (!found) throw new ApiError('NOT_FOUND', 'Notification not found');
      if (found.seller_id !== request.sellerId) throw new ApiError('FORBIDDEN', 'This notification belongs to another account');
      const updated = one(await q.query<NotificationRow>(`
        UPDATE notifications SET resend_prior_status = status, status = 'PENDING', next_attempt_at = $2, locked_until = NULL
        WHERE id = $1 RETURNING *`, [id, ctx.clock.now()]));
      await q.query('SELECT pg_notify($1, $2)', [NOTIFICATIONS_CHANNEL, '']);
      return updated;
    });
    return reply.status(202).send(notificationView(row));
  });
}
