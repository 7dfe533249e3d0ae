import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { DatabaseUnavailableError } from '../db/db.ts';
import { run, sql } from '../db/sql.ts';
import { errorBody } from './error-bodies.ts';
import { unavailable_retry_after_s } from './errors.ts';
import type { Router } from './router.ts';

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export async function healthRoutes(app: Router, ctx: AppContext, metrics: Registry, operatorHook: Hook): Promise<void> {
  // While the database is known to be away this answers at once, without a query.
  app.get('/health', { schema: { hide: true } }, async (request, reply) => {
    try {
      if (!ctx.db.available) throw new DatabaseUnavailableError('database unreachable', false);
      await run(ctx.db, sql`SELECT 1`);
      return { status: 'ok' };
    } catch (err) {
      request.log.warn({ err }, 'health check: database unreachable');
      const { status, body } = errorBody('SERVICE_UNAVAILABLE', 'Database unreachable');
      return reply.status(status).header('retry-after', String(unavailable_retry_after_s)).send(body);
    }
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/metrics', { schema: { hide: true }, onRequest: operatorHook }, async (_request, reply) => {
    void reply.header('content-type', metrics.contentType);
    return metrics.metrics();
  });
}
