/**
 * Every provider's calls to the gateway, one way (CONTRACT §14): the endpoint's own credential
 * checked before the body is read, the message turned into facts by its connector, each fact stored
 * and applied by the one apply step, then the answer the provider expects. A fact that could not be
 * stored (the database away) fails the request, so the provider sends it again.
 */
import type { AppContext } from '../context.ts';
import { refusalError } from '../domain/result.ts';
import type { Router } from '../http/router.ts';
import { applyProviderFact } from './events/apply-fact.ts';
import type { InboundEndpoint } from './ports.ts';

export async function inboundRoutes(app: Router, ctx: AppContext): Promise<void> {
  for (const endpoint of ctx.providers.inbound) {
    if (!endpoint.form) {
      inboundRoute(app, ctx, endpoint);
      continue;
    }
    // A provider that posts a form (Efí's charge notifications): parsed in this endpoint's own scope.
    await app.register(async (scoped) => {
      scoped.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      inboundRoute(scoped, ctx, endpoint);
    });
  }
}

function inboundRoute(app: Router, ctx: AppContext, endpoint: InboundEndpoint): void {
  app.post(
    endpoint.url,
    {
      schema: { hide: true, body: endpoint.body },
      onRequest: async (request, reply) => {
        const denied = endpoint.authenticate({ params: request.params as Record<string, string>, headers: request.headers });
        if (!denied) return;
        for (const [name, value] of Object.entries(denied.headers ?? {})) void reply.header(name, value);
        throw refusalError(denied.refusal);
      },
    },
    async (request, reply) => {
      const read = await endpoint.read({
        params: request.params as Record<string, string>,
        headers: request.headers,
        body: request.body,
        log: request.log,
      });
      for (const fact of read.ok ? read.value : 'confirmed' in read ? read.confirmed : []) {
        const applied = await applyProviderFact(ctx, fact);
        const said = { provider: fact.provider, identity: fact.identity, kind: fact.fact.kind, state: applied.state, reason: applied.reason };
        if (applied.state === 'needs_operator') request.log.error(said, 'provider event needs the operator');
        else if (applied.state === 'held') request.log.warn(said, 'provider event held until its sale can move');
        else request.log.info(said, 'provider event');
      }
      if (!read.ok) throw refusalError(read.refusal);
      const { contentType, body } = endpoint.answer(request.body);
      return reply.type(contentType).send(body);
    },
  );
}
