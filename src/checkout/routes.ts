/**
 * `GET /checkout/3ds/{token}` and `GET|POST /checkout/3ds/{token}/return` (CONTRACT §11.2): the
 * shopper's browser, sent by the seller's page, leaves for its issuer here and comes back here.
 * No credentials: the token is the capability. The sandbox issuer's page is served beside them.
 */
import formbody from '@fastify/formbody';
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Router } from '../http/router.ts';
import { reais } from '../panel/format.ts';
import { sandbox_card_account, sandbox_redirect_results } from '../providers/sandbox/processors.ts';
import { issuerFormPage, messagePage, pagePolicy, sandboxIssuerPage } from './pages.ts';
import { forward, sandboxSale, shopperReturned } from './three-d-secure.ts';

function html(reply: FastifyReply, status: number, body: string, policy = pagePolicy(null)) {
  return reply
    .code(status)
    .header('content-security-policy', policy)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(body);
}

const gone = (reply: FastifyReply) =>
  html(reply, 404, messagePage('Link expirado', 'Este link de autenticação não vale mais. Volte à loja e confira o pedido.'));

const redirect = (reply: FastifyReply, url: string) =>
  reply.code(303).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(url, 303);

export async function checkoutRoutes(app: Router, ctx: AppContext): Promise<void> {
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  const params = { type: 'object', properties: { token: { type: 'string', maxLength: 64 } }, required: ['token'] } as const;

  app.get<{ Params: { token: string } }>('/checkout/3ds/:token', { schema: { hide: true, params } }, async (request, reply) => {
    const next = await forward(ctx, request.params.token);
    switch (next.kind) {
      case 'gone':
        return gone(reply);
      case 'back':
        return redirect(reply, next.url);
      case 'wait':
        return html(reply, 409, messagePage('Um momento', 'O pagamento ainda está sendo preparado. Atualize esta página em alguns segundos.'));
      case 'issuer':
        if (next.action.method === 'GET') return redirect(reply, next.action.url);
        // A browser holds the redirects that follow a form post to form-action too, and an issuer's page
        // may hand the shopper on (to its access control server, back to us): https targets, and the issuer's own origin.
        return html(reply, 200, issuerFormPage(next.action), pagePolicy(`${new URL(next.action.url).origin} https:`, true));
    }
  });

  const back = async (token: string, redirectResult: unknown, reply: FastifyReply, log: { warn(o: object, m: string): void }) => {
    const result = typeof redirectResult === 'string' ? redirectResult : null;
    const returned = await shopperReturned(ctx, token, result, log);
    if (returned.kind === 'gone') return gone(reply);
    if (returned.kind === 'no-result')
      return html(reply, 400, messagePage('Retorno incompleto', 'O banco não informou o resultado da autenticação. Volte à loja e tente de novo.'));
    return redirect(reply, returned.url);
  };
  app.get<{ Params: { token: string }; Querystring: { redirectResult?: string } }>(
    '/checkout/3ds/:token/return',
    { schema: { hide: true, params } },
    async (request, reply) => back(request.params.token, request.query.redirectResult, reply, request.log),
  );
  app.post<{ Params: { token: string }; Body: { redirectResult?: string } | undefined }>(
    '/checkout/3ds/:token/return',
    { schema: { hide: true, params } },
    async (request, reply) => back(request.params.token, request.body?.redirectResult, reply, request.log),
  );

  // The sandbox card processor's issuer: only for a sale it plays, while its shopper may still authenticate.
  app.get<{ Params: { token: string } }>('/sandbox/3ds/:token', { schema: { hide: true, params } }, async (request, reply) => {
    const sale = await sandboxSale(ctx, request.params.token, sandbox_card_account.id);
    if (!sale) return gone(reply);
    const returnUrl = `/checkout/3ds/${request.params.token}/return`;
    // The buttons post to our return, which redirects to the seller's page: a browser holds that redirect to form-action too.
    const policy = pagePolicy(`'self' ${new URL(sale.returnUrl).origin}`);
    return html(reply, 200, sandboxIssuerPage(returnUrl, sandbox_redirect_results, reais(sale.amount)), policy);
  });
}
