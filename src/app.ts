import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { DestinationStream } from 'pino';
import type { AppContext } from './context.ts';
import { ApiError, errorBody } from './domain/errors.ts';
import { handleError } from './http/errors.ts';
import { operatorAuth, sellerAuth } from './http/auth.ts';
import { registerMetrics } from './http/metrics.ts';
import { healthRoutes } from './http/health-routes.ts';
import { sellerAdminRoutes } from './sellers/admin-routes.ts';
import { balanceRoutes } from './ledger/balance-routes.ts';
import { ledgerAdminRoutes } from './ledger/admin-routes.ts';
import { saleRoutes } from './sales/routes.ts';
import { cashoutAdminRoutes, cashoutRoutes } from './cashouts/routes.ts';
import { notificationRoutes } from './notifications/routes.ts';
import { feeSettingsRoutes } from './fees/fee-settings.ts';
import { statementRoutes } from './ledger/statement-routes.ts';
import { transactionRoutes } from './transactions/routes.ts';
import { transactionAdminRoutes } from './transactions/admin-routes.ts';

const body_limit_bytes = 1024 * 1024;

export const log_redact_paths = [
  'req.headers.authorization', 'req.headers["x-api-private-key"]',
  'headers.authorization', 'headers["x-api-private-key"]',
  'card', '*.card', '*.*.card', 'cvv', '*.cvv', 'cardNumber', '*.cardNumber',
];

/** The dotted path of the first string (value or key) holding U+0000, or null. Iterative: no depth overflows it. */
function nulField(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') { if (v.includes('\0')) return path || 'body'; }
    else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const childPath = path ? `${path}.${k}` : k;
        if (k.includes('\0')) return childPath;
        stack.push([child, childPath]);
      }
    }
  }
  return null;
}

export interface AppOptions { logStream?: DestinationStream }

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, for the shared authentication tests and the docs. */
    routeList: { method: string; url: string }[];
  }
}

/** Seller routes plug in here; later features add theirs to the lists. */
export async function buildApp(ctx: AppContext, options: AppOptions = {}): Promise<App> {
  const app = Fastify({
    logger: {
      level: ctx.config.logLevel,
      redact: { paths: log_redact_paths, censor: '[redacted]' },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    bodyLimit: body_limit_bytes,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    ajv: { customOptions: { coerceTypes: false, allErrors: true, removeAdditional: false, useDefaults: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const routeList: { method: string; url: string }[] = [];
  app.decorate('routeList', routeList);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routeList.push({ method, url: route.url });
  });
  // Only JSON bodies: text/plain would otherwise reach validation as a string.
  app.removeContentTypeParser('text/plain');
  // PostgreSQL text cannot hold U+0000: refuse it at the door, for every field at once, as a 400.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    jsonParser(request, body as string, (err, parsed) => {
      const field = !err && (body as string).includes('\\u0000') ? nulField(parsed) : null;
      if (field) {
        done(new ApiError('VALIDATION_ERROR', `Invalid ${field}: must not contain a NUL character (\\u0000)`, [{ field, message: 'must not contain a NUL character (\\u0000)' }]), undefined);
        return;
      }
      done(err, parsed);
    });
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    const { status, body } = errorBody('NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`);
    void reply.status(status).send(body);
  });
  app.addHook('onSend', async (request, reply) => { void reply.header('x-request-id', request.id); });
  const metrics = registerMetrics(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Payment gateway API', version: '1.0.0', description: 'PIX, cards, boleto, cashout and notifications for Brazilian sellers' },
      components: {
        securitySchemes: {
          publicKey: { type: 'apiKey', in: 'header', name: 'X-Api-Public-Key' },
          privateKey: { type: 'apiKey', in: 'header', name: 'X-Api-Private-Key' },
          operator: { type: 'http', scheme: 'bearer' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await app.register(async (open) => healthRoutes(open, ctx, metrics, operatorAuth(ctx.config.adminToken)));
  await app.register(async (seller) => {
    seller.addHook('onRequest', sellerAuth(ctx.authenticator));
    await balanceRoutes(seller, ctx);
    await statementRoutes(seller, ctx);
    await cashoutRoutes(seller, ctx);
    await notificationRoutes(seller, ctx);
    await saleRoutes(seller, ctx);
    await transactionRoutes(seller, ctx);
  });
  await app.register(async (operator) => {
    operator.addHook('onRequest', operatorAuth(ctx.config.adminToken));
    await sellerAdminRoutes(operator, ctx);
    await ledgerAdminRoutes(operator, ctx);
    await transactionAdminRoutes(operator, ctx);
    await feeSettingsRoutes(operator, ctx);
    await cashoutAdminRoutes(operator, ctx);
  });
  return app;
}
