/**
 * Integrações: the spec's "add webhook" (URL, "Transações", "Notificar saques"), "Enviar teste",
 * and the delivery log with "Reenviar" (CONTRACT §12), through the API's own use cases. Removing a
 * webhook asks first, on a page of its own.
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
import { confirmationPage, confirmed, toConfirmation } from './confirm.ts';
import { type FormErrors, onField, placed } from './form-errors.ts';
import { whenSaoPaulo } from './format.ts';
import { announcedStatus, deliveryInWords, labelOf, notification_kinds, webhook_types } from './labels.ts';
import { attemptResult, type Current, Done, Form, field, fields, formSession, page, pageSession } from './session.ts';

const log_size = 30;
const IdPath = Type.Object({ id: Type.String({ maxLength: 20 }) });
// The add form's inputs of the use case's fields.
const webhook_inputs = { url: 'url', types: 'tipos' };
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
      return integrationsPage(ctx, current, reply, {
        status: 400,
        errors: onField('tipos', 'Marque ao menos um: Transações ou Notificar saques.'),
        typed,
      });
    const added = await attemptResult(() => addWebhook(ctx, current.session.sellerId, url, types));
    if (!added.ok) return integrationsPage(ctx, current, reply, { status: added.status, errors: placed(added, webhook_inputs), typed });
    return reply.redirect('/painel/integracoes?feito=webhook', 303);
  });

  removal(app, ctx);
  webhookActions(app, ctx);
}

/** "Remover": a page that says what stops, then the API's use case. */
function removal(app: Router, ctx: AppContext): void {
  app.get('/painel/integracoes/:id/remover', { schema: { hide: true, params: IdPath } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    const hook = (await listWebhooks(ctx.db, current.session.sellerId)).find((w) => String(w.id) === request.params.id);
    if (!hook) return page(reply, 404, 'mensagem.eta', gone(current));
    return confirmationPage(reply, current, {
      title: 'Remover este webhook?',
      page: 'integracoes',
      facts: [
        { term: 'URL', value: hook.url },
        { term: 'Notifica', value: hook.types.map((t) => webhook_types[t]).join(', ') },
      ],
      warnings: [
        'Este endereço deixa de receber as notificações a partir de agora: se o seu sistema depende delas para saber de pagamentos ou saques, ele para de sabê-los.',
        'As entregas já feitas continuam no registro de entregas. Para voltar a receber, adicione o webhook de novo.',
      ],
      action: `/painel/integracoes/${hook.id}/remover`,
      button: 'Remover webhook',
      cancel: { href: '/painel/integracoes', text: 'Cancelar e manter o webhook' },
    });
  });
}

const gone = (current: Current) => ({
  title: 'Webhook não encontrado',
  message: 'Este webhook não existe nesta conta ou já foi removido.',
  link: { href: '/painel/integracoes', text: 'Voltar às integrações' },
  session: current.session,
});

/** Remove (once confirmed), send a test, resend: each a button, each the API's use case. */
function webhookActions(app: Router, ctx: AppContext): void {
  const action = (path: string, run: (current: Current, id: number) => Promise<Result<unknown>>, doneWord: string, confirm?: string) =>
    app.post(path, { schema: { hide: true, params: IdPath, body: Form } }, async (request, reply) => {
      const current = await formSession(ctx, request, reply);
      if (!current) return reply;
      if (confirm && !confirmed(request.body)) return toConfirmation(reply, confirm.replace(':id', encodeURIComponent(request.params.id)));
      const outcome = await attemptResult(() => run(current, parsePathId(request.params.id)));
      if (!outcome.ok) return integrationsPage(ctx, current, reply, { status: outcome.status, alert: outcome.error });
      return reply.redirect(`/painel/integracoes?feito=${doneWord}`, 303);
    });
  const removePath = '/painel/integracoes/:id/remover';
  action(removePath, (c, id) => removeWebhook(ctx.db, c.session.sellerId, id), 'removido', removePath);
  action('/painel/integracoes/:id/teste', (c, id) => sendTestNotification(ctx, c.session.sellerId, id, ctx.clock.now()), 'teste');
  action('/painel/notificacoes/:id/reenviar', (c, id) => resendNotification(ctx.db, c.session.sellerId, id, ctx.clock.now()), 'reenvio');
}

async function integrationsPage(
  ctx: AppContext,
  current: Current,
  reply: FastifyReply,
  shown: { status?: number; errors?: FormErrors; alert?: string; notice?: string; typed?: { url: string; types: WebhookType[] } },
) {
  const sellerId = current.session.sellerId;
  const webhooks = await listWebhooks(ctx.db, sellerId);
  const log = (await listNotifications(ctx.db, sellerId, null, log_size)).map(notificationView);
  return page(reply, shown.status ?? 200, 'integracoes.eta', {
    title: 'Integrações',
    page: 'integracoes',
    session: current.session,
    errors: shown.errors,
    alert: shown.alert,
    notice: shown.notice,
    typed: shown.typed ?? { url: '', types: ['TRANSACTION'] },
    typeNames: webhook_types,
    webhooks: webhooks.map((w) => ({
      id: w.id,
      url: w.url,
      types: w.types.map((t) => webhook_types[t]).join(', '),
      created: whenSaoPaulo(w.createdAt),
    })),
    log: log.map((n) => ({
      id: n.id,
      when: whenSaoPaulo(new Date(n.createdAt)),
      kind: `${labelOf(notification_kinds, n.kind)}${n.test ? ' (teste)' : ''}`,
      url: n.url,
      resource: n.resourceId === null ? null : n.kind === 'WITHDRAWAL_WEBHOOK' ? `Saque #${n.resourceId}` : `Venda #${n.resourceId}`,
      sale: n.kind === 'WITHDRAWAL_WEBHOOK' ? null : n.resourceId,
      event: announcedStatus(n.kind, n.eventStatus),
      delivery: deliveryInWords(n.status, n.attempts, n.lastResponseStatus),
    })),
  });
}
