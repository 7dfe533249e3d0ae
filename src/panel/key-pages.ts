/**
 * Chaves de API: the seller's key pairs (a new private key shown once; revoke at once, CONTRACT §12)
 * and the secret that signs its notifications (Standard Webhooks, CONTRACT §13), with its rotation.
 * Revoking and rotating each ask first, on a page that says what they break.
 */
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { refusalError } from '../domain/result.ts';
import type { Router } from '../http/router.ts';
import { rotateOnce } from '../notifications/signing-secret-routes.ts';
import { currentSigningSecret } from '../notifications/signing-secrets.ts';
import { revokeSellerKey } from '../sellers/api-keys.ts';
import { issueKey, listKeys } from '../sellers/sellers-repo.ts';
import { confirmed, toConfirmation } from './confirm.ts';
import { whenSaoPaulo } from './format.ts';
import { revokeConfirmation, rotateConfirmation } from './key-confirmations.ts';
import { attempt, attemptResult, type Current, Done, Form, formSession, newOrder, orderOf, page, pageSession, refusalOf } from './session.ts';

const KeyPath = Type.Object({ publicKey: Type.String({ maxLength: 64 }) });
const rotate_path = '/painel/chaves/segredo/trocar';
const notices: Record<string, string> = {
  revogada: 'Chave revogada: a API já não a aceita.',
  segredo: 'Segredo trocado: o anterior ainda assina as notificações por 24 horas.',
};

export function keyPages(app: Router, ctx: AppContext): void {
  app.get('/painel/chaves', { schema: { hide: true, querystring: Done } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    const notice = notices[request.query.feito ?? ''];
    return keysPage(ctx, current, reply, { notice });
  });

  app.post('/painel/chaves', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const issued = await issueKey(ctx.db, current.session.sellerId);
    // Shown in this answer only: the private key is kept as a digest and cannot be shown again.
    return keysPage(ctx, current, reply, { status: 201, issued: { publicKey: issued.publicKey, privateKey: issued.privateKey } });
  });

  revocation(app, ctx);
  rotation(app, ctx);
}

function revocation(app: Router, ctx: AppContext): void {
  app.get('/painel/chaves/:publicKey/revogar', { schema: { hide: true, params: KeyPath } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    return revokeConfirmation(ctx, current, reply, request.params.publicKey);
  });

  app.post('/painel/chaves/:publicKey/revogar', { schema: { hide: true, params: KeyPath, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    if (!confirmed(request.body)) return toConfirmation(reply, `/painel/chaves/${encodeURIComponent(request.params.publicKey)}/revogar`);
    const revoked = await attemptResult(() => revokeSellerKey(ctx, current.session.sellerId, request.params.publicKey));
    if (!revoked.ok) return keysPage(ctx, current, reply, { status: revoked.status, alert: revoked.error });
    return reply.redirect('/painel/chaves?feito=revogada', 303);
  });
}

function rotation(app: Router, ctx: AppContext): void {
  app.get(rotate_path, { schema: { hide: true } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    return rotateConfirmation(ctx, current, reply, newOrder());
  });

  app.post(rotate_path, { schema: { hide: true, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    if (!confirmed(request.body)) return toConfirmation(reply, rotate_path);
    // The form's order id is the rotation's Idempotency-Key: a double click rotates once, so the
    // secret the receivers hold is not retired at once by a second rotation.
    const order = orderOf(request.body);
    if (!order) return keysPage(ctx, current, reply, { status: 400, alert: 'Formulário antigo: abra a página de novo.' });
    const refused = refusalOf(await attempt(() => rotateOnce(ctx, current.session.sellerId, order)));
    if (refused) return keysPage(ctx, current, reply, { status: refused.status, alert: refused.error });
    return reply.redirect('/painel/chaves?feito=segredo', 303);
  });
}

async function keysPage(
  ctx: AppContext,
  current: Current,
  reply: FastifyReply,
  shown: { status?: number; alert?: string; notice?: string; issued?: { publicKey: string; privateKey: string } },
) {
  const keys = await listKeys(ctx.db, current.session.sellerId);
  const secret = await currentSigningSecret(ctx.db, current.session.sellerId, ctx.clock.now());
  // No secret is a broken invariant (a 500): the panel's error page, not words beside a form.
  if (!secret.ok) throw refusalError(secret.refusal);
  const signing = secret.value;
  return page(reply, shown.status ?? 200, 'chaves.eta', {
    title: 'Chaves de API',
    page: 'chaves',
    session: current.session,
    alert: shown.alert,
    notice: shown.notice,
    issued: shown.issued,
    signing: {
      secret: signing.secret,
      created: whenSaoPaulo(signing.createdAt),
      previousUntil: signing.previousSecretExpiresAt && whenSaoPaulo(signing.previousSecretExpiresAt),
    },
    keys: keys.map((k) => ({
      publicKey: k.publicKey,
      created: whenSaoPaulo(k.createdAt),
      revoked: k.revokedAt && whenSaoPaulo(k.revokedAt),
    })),
  });
}
