import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Registry } from 'prom-client';
import { cashoutAdminRoutes, cashoutRoutes } from './cashouts/routes.ts';
import { checkoutRoutes } from './checkout/routes.ts';
import type { AppContext } from './context.ts';
import { feeSettingsRoutes } from './fees/fee-settings.ts';
import { operatorAuth, sellerAuth } from './http/auth.ts';
import { registerBodyParsers } from './http/body-parsing.ts';
import { errorBody } from './http/error-bodies.ts';
import { clientError, frameworkError, handleError } from './http/errors.ts';
import { healthRoutes } from './http/health-routes.ts';
import { registerMetrics } from './http/metrics.ts';
import { swaggerOptions } from './http/openapi-document.ts';
import { createRateLimits, type MsClock } from './http/rate-limit.ts';
import { ledgerAdminRoutes } from './ledger/admin-routes.ts';
import { balanceRoutes } from './ledger/balance-routes.ts';
import { statementRoutes } from './ledger/statement-routes.ts';
import { medRoutes } from './med/routes.ts';
import { sandboxMedRoutes } from './med/sandbox-routes.ts';
import { notificationRoutes } from './notifications/routes.ts';
import { signingSecretRoutes } from './notifications/signing-secret-routes.ts';
import { panelAdminRoutes } from './panel/admin-routes.ts';
import { panelNotFound, panelRoutes } from './panel/routes.ts';
import { pixAdminRoutes } from './providers/api-pix/returns-routes.ts';
import { listProviderEventsRoute } from './providers/events/list-route.ts';
import { registerProviderEventsGauge } from './providers/events/metrics.ts';
import { resolveProviderEventRoute } from './providers/events/resolve-route.ts';
import { inboundRoutes } from './providers/inbound-routes.ts';
import { sandboxBoletoRoutes, sandboxPixRoutes, sandboxSaleRoutes } from './providers/sandbox/routes.ts';
import { registerReconciliationGauges } from './reconciliation/metrics.ts';
import { reconciliationRoutes } from './reconciliation/routes.ts';
import { refundRoutes } from './refunds/routes.ts';
import { saleRoutes } from './sales/routes.ts';
import { sellerAdminRoutes } from './sellers/admin-routes.ts';
import { transactionAdminRoutes } from './transactions/admin-routes.ts';
import { transactionRoutes } from './transactions/routes.ts';

const body_limit_bytes = 1024 * 1024;
// An idle keep-alive connection is closed after this; a client that comes back reconnects.
const keep_alive_timeout_ms = 10_000;
// Headers are small: whoever has not sent them in this time is stalling (capped by the request timeout).
const max_headers_timeout_ms = 10_000;
// Node enforces request and headers timeouts only when it sweeps its connections (30 s by default).
const connections_checking_interval_ms = 1000;

export const log_redact_paths = [
  'req.headers.authorization',
  'req.headers["x-api-private-key"]',
  'headers.authorization',
  'headers["x-api-private-key"]',
  'card',
  '*.card',
  '*.*.card',
  'cvv',
  '*.cvv',
  'cardNumber',
  '*.cardNumber',
];

export interface AppOptions {
  logStream?: DestinationStream;
  /** The rate limiters' clock (monotonic milliseconds); tests move it by hand. */
  rateLimitClock?: MsClock;
}

/**
 * Timeouts of the Node server Fastify creates, so that slow or stalled clients are cut. Node only
 * cuts a slow body when headersTimeout is no longer than requestTimeout, hence the min().
 */
function serverOptions(config: AppContext['config']) {
  const requestTimeout = config.httpRequestTimeoutMs;
  const headersTimeout = Math.min(max_headers_timeout_ms, requestTimeout);
  return {
    requestTimeout,
    // The socket's inactivity timeout: requestTimeout ends once the request is in, so this is what
    // cuts a client that stops reading its answer.
    connectionTimeout: config.httpIdleTimeoutMs,
    keepAliveTimeout: keep_alive_timeout_ms,
    // request.ip and request.protocol from X-Forwarded-For / -Proto, when a trusted proxy sent them.
    trustProxy: config.trustProxy,
    // Fastify sets requestTimeout again after creating the server; Node's constructor wants both
    // timeouts together to check headersTimeout ≤ requestTimeout.
    http: { requestTimeout, headersTimeout, connectionsCheckingInterval: connections_checking_interval_ms },
  };
}

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, for the shared authentication tests and the docs. */
    routeList: { method: string; url: string }[];
  }
}

/** Fastify's request log fields, with the PSP's callback path (it holds PIX_WEBHOOK_SECRET) masked. */
function requestForLog(req: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) {
  return {
    method: req.method,
    // Secrets that travel in paths: the PSP callback's and a panel invite's.
    url: req.url
      .replace(/^\/providers\/pix\/[^/?]+/, '/providers/pix/[redacted]')
      .replace(/^\/painel\/convite\/[^/?]+/, '/painel/convite/[redacted]'),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

const info_or_finer = new Set(['info', 'debug', 'trace']);

/** Fastify's two lines per request give way to the one onResponse writes; its error lines stay. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(...args: Parameters<LogController['requestCompleted']>): void {
    if (args[0]) super.requestCompleted(...args);
  }
}

/** Seller routes plug in here; later features add theirs to the lists. */
export async function buildApp(ctx: AppContext, options: AppOptions = {}): Promise<App> {
  const app = Fastify({
    logger: {
      level: ctx.config.logLevel,
      redact: { paths: log_redact_paths, censor: '[redacted]' },
      serializers: { req: requestForLog },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    // One line per request, written by the onResponse hook below, instead of Fastify's two.
    logController: new OneLinePerRequest(),
    bodyLimit: body_limit_bytes,
    ...serverOptions(ctx.config),
    genReqId: () => randomUUID(),
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
    requestIdHeader: false,
    // verbose: each error carries its schema, whose description words the message (http/field-errors.ts).
    ajv: { customOptions: { coerceTypes: false, allErrors: true, removeAdditional: false, useDefaults: false, verbose: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Node destroys connections accepted beyond this at once, so a flood cannot starve the process.
  app.server.maxConnections = ctx.config.httpMaxConnections;
  installHandlers(app);
  const metrics = registerMetrics(app);
  registerProviderEventsGauge(metrics, ctx);
  registerReconciliationGauges(metrics, ctx);
  await app.register(swagger, swaggerOptions);
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await registerRoutes(app, ctx, metrics, createRateLimits(ctx.config, options.rateLimitClock));
  return app;
}

/** The route list, the error and not-found handlers, the request id on every answer. */
function installHandlers(app: App): void {
  const routeList: { method: string; url: string }[] = [];
  app.decorate('routeList', routeList);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routeList.push({ method, url: route.url });
  });
  registerBodyParsers(app);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    if (/^\/painel(\/|$|\?)/.test(request.url)) return panelNotFound(reply);
    const { status, body } = errorBody('NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`);
    void reply.status(status).send(body);
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    done(null, payload);
  });
  // One line per request at info: method, route (a pattern: no id, no secret of a path), status,
  // time, request id. The whole request is serialised only when an error is logged. The line holds
  // none of the fields redaction looks for, so it skips that pass (about half of the line's cost in a
  // profile of balance reads).
  const requestLines = app.log.child({}, { level: 'info', redact: { paths: [] } });
  app.addHook('onResponse', (request, reply, done) => {
    if (info_or_finer.has(request.log.level)) {
      const route = request.routeOptions.url ?? requestForLog(request).url.split('?')[0];
      requestLines.info(
        { reqId: request.id, method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
        'request',
      );
    }
    done();
  });
}

/** Every route group with its credentials. The limits are per app, hence per process (CONTRACT §2). */
async function registerRoutes(app: App, ctx: AppContext, metrics: Registry, limits: ReturnType<typeof createRateLimits>): Promise<void> {
  const operatorHook = operatorAuth(ctx.config.adminToken, limits);
  await app.register(async (open) => healthRoutes(open, ctx, metrics, operatorHook));
  await app.register(async (seller) => {
    seller.addHook('onRequest', sellerAuth(ctx.authenticator, limits));
    await balanceRoutes(seller, ctx);
    await statementRoutes(seller, ctx);
    await cashoutRoutes(seller, ctx);
    await notificationRoutes(seller, ctx);
    await saleRoutes(seller, ctx);
    await transactionRoutes(seller, ctx);
    await refundRoutes(seller, ctx);
    await medRoutes(seller, ctx);
    await signingSecretRoutes(seller, ctx);
  });
  // The seller panel: its own session cookie, forms and HTML (CONTRACT §12).
  await app.register(async (panel) => panelRoutes(panel, ctx, limits));
  // The shopper's 3-D Secure pages: the token in the path is the only credential (CONTRACT §11.2).
  await app.register(async (shopper) => checkoutRoutes(shopper, ctx));
  // The payment providers' calls: each endpoint's own credential, no API keys.
  await app.register(async (providers) => inboundRoutes(providers, ctx));
  await app.register(async (operator) => {
    operator.addHook('onRequest', operatorHook);
    await sandboxPixRoutes(operator, ctx);
    await sandboxBoletoRoutes(operator, ctx);
    await sandboxSaleRoutes(operator, ctx);
    await sandboxMedRoutes(operator, ctx);
    await pixAdminRoutes(operator, ctx);
    await panelAdminRoutes(operator, ctx);
    await sellerAdminRoutes(operator, ctx);
    await ledgerAdminRoutes(operator, ctx);
    await transactionAdminRoutes(operator, ctx);
    await feeSettingsRoutes(operator, ctx);
    await cashoutAdminRoutes(operator, ctx);
    await listProviderEventsRoute(operator, ctx);
    await resolveProviderEventRoute(operator, ctx);
    await reconciliationRoutes(operator, ctx);
  });
}
