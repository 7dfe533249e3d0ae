/**
 * Integrações: the spec's "add webhook" (URL, "Transações", "Notificar saques"), "Enviar teste",
 * and the delivery log with "Reenviar" (CONTRACT §12), through the API's own use cases.
 */
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import type { Result } from '../domain/result.ts';
import { parsePathId } from '../http/ids.ts';
import type { Router } from '../http/router.ts';
import { listNotifications, resendNotification } from '../notifications/delivery-log.ts';
import { notificationView } from '../notifications/notification-view.ts';
import { sendTestNotification } from '../notifications/webhook-test.ts';
import { addWebhook, listWebhooks, removeWebhook, WEBHOOK_TYPES, type WebhookType } from '../notifications/webhooks.ts';
import { whenSaoPaulo } from './format.ts';
import { attemptResult, type Current, Done, Form, field, fields, formSession, page, pageSession } from './session.ts';

const log_size = 30;
const IdPath = Type.Object({ id: Type.String({ maxLength: 20 }) });
const type_names: Record<WebhookType, string> = { TRANSACTION: 'Transações', WITHDRAWAL: 'Notificar saques' };
const delivery_names: Record<string, string> = { PENDING: 'Pendente', DELIVERED: 'Entregue', FAILED: 'Falhou' };
const kind_names: Record<string, string> = {
  TRANSACTION_WEBHOOK: 'Transação',
  TRANSACTION_POSTBACK: 'Postback',
  WITHDRAWAL_WEBHOOK: 'Saque',
};
const done: Record<string, string> = {
  webhook: 'Webhook adicionado.',
  removido: 'Webhook removido.',
  teste: 'Notificação de teste enviada. Ela aparece no registro de entregas.',
  reenvio: 'Reenvio pedido. O resultado aparece no registro de entregas.',
};

export function integrationPages(app: Router, ctx: AppContext): void {
  app.get('/painel/integracoes', { schema: { hide: true, querystring: Done } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    return integrationsPage(ctx, current, reply, { notice: done[request.query.feito ?? ''] });
  });

  app.post('/painel/integracoes', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const url = field(request.body, 'url').trim();
    const types = WEBHOOK_TYPES.filter((t) => fields(request.body, 'tipos').includes(t));
    const typed = { url, types };
    if (types.length === 0)
      return integrationsPage(ctx, current, reply, { status: 400, error: 'Marque ao menos um tipo: Transações ou Notificar saques.', typed });
    const added = await attemptResult(() => addWebhook(ctx, current.session.sellerId, url, types));
    if (!added.ok) return integrationsPage(ctx, current, reply, { status: added.status, error: added.error, typed });
    return reply.redirect('/painel/integracoes?feito=webhook', 303);
  });

  webhookActions(app, ctx);
}

/** Remove, send a test, resend: each a button, each the API's use case. */
function webhookActions(app: Router, ctx: AppContext): void {
  const action = (path: string, run: (current: Current, id: number) => Promise<Result<unknown>>, doneWord: string) =>
    app.post(path, { schema: { hide: true, params: IdPath, body: Form } }, async (request, reply) => {
      const current = await formSession(ctx, request, reply);
      if (!current) return reply;
      const outcome = await attemptResult(() => run(current, parsePathId(request.params.id)));
      if (!outcome.ok) return integrationsPage(ctx, current, reply, { status: outcome.status, error: outcome.error });
      return reply.redirect(`/painel/integracoes?feito=${doneWord}`, 303);
    });
  action('/painel/integracoes/:id/remover', (c, id) => removeWebhook(ctx.db, c.session.sellerId, id), 'removido');
  action('/painel/integracoes/:id/teste', (c, id) => sendTestNotification(ctx, c.session.sellerId, id, ctx.clock.now()), 'teste');
  action('/painel/notificacoes/:id/reenviar', (c, id) => resendNotification(ctx.db, c.session.sellerId, id, ctx.clock.now()), 'reenvio');
}

async function integrationsPage(
  ctx: AppContext,
  current: Current,
  reply: FastifyReply,
  shown: { status?: number; error?: string; notice?: string; typed?: { url: string; types: WebhookType[] } },
) {
  const sellerId = current.session.sellerId;
  const webhooks = await listWebhooks(ctx.db, sellerId);
  const log = (await listNotifications(ctx.db, sellerId, null, log_size)).map(notificationView);
  return page(reply, shown.status ?? 200, 'integracoes.eta', {
    title: 'Integrações',
    page: 'integracoes',
    session: current.session,
    error: shown.error,
    notice: shown.notice,
    typed: shown.typed ?? { url: '', types: ['TRANSACTION'] },
    typeNames: type_names,
    webhooks: webhooks.map((w) => ({
      id: w.id,
      url: w.url,
      types: w.types.map((t) => type_names[t]).join(', '),
      created: whenSaoPaulo(w.createdAt),
    })),
    log: log.map((n) => ({
      id: n.id,
      when: whenSaoPaulo(new Date(n.createdAt)),
      kind: n.test ? `${kind_names[n.kind]} (teste)` : kind_names[n.kind],
      url: n.url,
      resource: n.resourceId === null ? null : n.kind === 'WITHDRAWAL_WEBHOOK' ? `Saque #${n.resourceId}` : `Venda #${n.resourceId}`,
      sale: n.kind === 'WITHDRAWAL_WEBHOOK' ? null : n.resourceId,
      event: n.eventStatus,
      status: delivery_names[n.status] ?? n.status,
      attempts: n.attempts,
      http: n.lastResponseStatus,
    })),
  });
}
