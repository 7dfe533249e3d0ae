/** Chaves de API: the seller's key pairs; a new private key shown once; revoke at once (CONTRACT §12). */
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import type { Router } from '../http/router.ts';
import { revokeSellerKey } from '../sellers/api-keys.ts';
import { issueKey, listKeys } from '../sellers/sellers-repo.ts';
import { whenSaoPaulo } from './format.ts';
import { attempt, type Current, Done, Form, formSession, page, pageSession } from './session.ts';

const KeyPath = Type.Object({ publicKey: Type.String({ maxLength: 64 }) });

export function keyPages(app: Router, ctx: AppContext): void {
  app.get('/painel/chaves', { schema: { hide: true, querystring: Done } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    const notice = request.query.feito === 'revogada' ? 'Chave revogada: a API já não a aceita.' : undefined;
    return keysPage(ctx, current, reply, { notice });
  });

  app.post('/painel/chaves', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const issued = await issueKey(ctx.db, current.session.sellerId);
    // Shown in this answer only: the private key is kept as a digest and cannot be shown again.
    return keysPage(ctx, current, reply, { status: 201, issued: { publicKey: issued.publicKey, privateKey: issued.privateKey } });
  });

  app.post('/painel/chaves/:publicKey/revogar', { schema: { hide: true, params: KeyPath, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const revoked = await attempt(() => revokeSellerKey(ctx, current.session.sellerId, request.params.publicKey));
    if (!revoked.ok) return keysPage(ctx, current, reply, { status: revoked.status, error: revoked.error });
    return reply.redirect('/painel/chaves?feito=revogada', 303);
  });
}

async function keysPage(
  ctx: AppContext,
  current: Current,
  reply: FastifyReply,
  shown: { status?: number; error?: string; notice?: string; issued?: { publicKey: string; privateKey: string } },
) {
  const keys = await listKeys(ctx.db, current.session.sellerId);
  return page(reply, shown.status ?? 200, 'chaves.eta', {
    title: 'Chaves de API',
    page: 'chaves',
    session: current.session,
    error: shown.error,
    notice: shown.notice,
    issued: shown.issued,
    keys: keys.map((k) => ({
      publicKey: k.publicKey,
      created: whenSaoPaulo(k.createdAt),
      revoked: k.revokedAt && whenSaoPaulo(k.revokedAt),
    })),
  });
}
