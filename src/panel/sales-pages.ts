/** Vendas: the seller's sales with filters, a sale's page, and its refund and cancel (CONTRACT §12). */
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { saoPauloMidnight } from '../domain/calendar.ts';
import { parseReaisToCents } from '../domain/money.ts';
import { PAYMENT_METHODS, type PaymentMethod, TRANSACTION_STATUSES, type TransactionStatus } from '../domain/transaction-states.ts';
import { parsePathId } from '../http/ids.ts';
import { page_limit_default } from '../http/paging.ts';
import type { Router } from '../http/router.ts';
import { defendMed } from '../med/defend.ts';
import { refundSale } from '../refunds/refund-sale.ts';
import { applyEvent } from '../transactions/apply-event.ts';
import { listTransactions } from '../transactions/transactions-repo.ts';
import { awaitingAuthentication, refundedBy, saleStatusLabel } from './authentication.ts';
import { type FormErrors, onField, onForm, placed } from './form-errors.ts';
import { reais, reaisTyped, whenSaoPaulo } from './format.ts';
import { labelOf, med_words, payment_methods, sale_statuses } from './labels.ts';
import { saleDetail } from './sale-detail.ts';
import { defenseOutcome, justificationOf } from './sale-med.ts';
import { saleView } from './sale-view.ts';
import {
  attempt,
  attemptResult,
  type Current,
  cursorOf,
  Done,
  Form,
  field,
  formExpired,
  formSession,
  newOrder,
  orderOf,
  page,
  pageSession,
  refusalOf,
} from './session.ts';

// The API's default page: a seller sees in the panel what a default API call lists.
const page_size = page_limit_default;
const SalePath = Type.Object({ id: Type.String({ maxLength: 20 }) });
const ListQuery = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 20 })),
  metodo: Type.Optional(Type.String({ maxLength: 20 })),
  de: Type.Optional(Type.String({ maxLength: 10 })),
  ate: Type.Optional(Type.String({ maxLength: 10 })),
  antes: Type.Optional(Type.String({ maxLength: 20 })),
});
type ListQuery = { status?: string; metodo?: string; de?: string; ate?: string; antes?: string };

// The refund form's input of the use case's field; the MED defence form's.
const refund_inputs = { amount: 'valor' };
const defense_inputs = { justification: 'justification' };

const done: Record<string, string> = {
  estorno: 'Estorno pedido. Ele aparece abaixo com o seu status.',
  cancelada: 'Venda cancelada.',
};

/** The filters as the list's query understands them; an unknown value is ignored, as a link may be old. */
function filterOf(q: ListQuery) {
  const status = (TRANSACTION_STATUSES as readonly string[]).includes(q.status ?? '') ? (q.status as TransactionStatus) : undefined;
  const paymentMethod = (PAYMENT_METHODS as readonly string[]).includes(q.metodo ?? '') ? (q.metodo as PaymentMethod) : undefined;
  const from = q.de ? (saoPauloMidnight(q.de) ?? undefined) : undefined;
  const lastDay = q.ate ? saoPauloMidnight(q.ate) : null;
  const until = lastDay ? new Date(lastDay.getTime() + 86_400_000) : undefined;
  return { status, paymentMethod, from, until, beforeId: cursorOf(q.antes) };
}

export function salesPages(app: Router, ctx: AppContext): void {
  app.get('/painel/vendas', { schema: { hide: true, querystring: ListQuery } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    const filter = filterOf(request.query);
    const rows = await listTransactions(ctx.db, { sellerId: current.session.sellerId, ...filter, limit: page_size + 1 });
    const shown = rows.slice(0, page_size);
    // A card sale whose shopper has not passed 3-D Secure yet reads so, in place of "Pendente".
    const awaiting = await awaitingAuthentication(ctx.db, shown.map(idOf));
    const refunded = await refundedBy(ctx.db, shown.map(idOf));
    const next = rows.length > page_size ? new URLSearchParams({ ...cleanQuery(request.query), antes: String(shown.at(-1)!.id) }) : null;
    return page(reply, 200, 'vendas.eta', {
      title: 'Vendas',
      page: 'vendas',
      session: current.session,
      query: request.query,
      statuses: TRANSACTION_STATUSES.map((s) => ({ value: s, name: sale_statuses[s] })),
      methods: PAYMENT_METHODS.map((m) => ({ value: m, name: payment_methods[m] })),
      sales: shown.map((s) => ({
        id: s.id,
        when: whenSaoPaulo(s.created_at),
        method: labelOf(payment_methods, s.payment_method),
        status: saleStatusLabel(s.status, awaiting.has(Number(s.id)), refunded.get(Number(s.id))),
        customer: s.customer_name,
        amount: reais(s.amount),
      })),
      next: next && `/painel/vendas?${next}`,
    });
  });

  app.get('/painel/vendas/:id', { schema: { hide: true, params: SalePath, querystring: Done } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    return salePage(ctx, current, request.params.id, reply, { done: request.query.feito });
  });

  saleActions(app, ctx);
  medDefense(app, ctx);
}

const idOf = (s: { id: number }) => s.id;

const cleanQuery = (q: ListQuery) =>
  Object.fromEntries(Object.entries(q).filter(([k, v]) => k !== 'antes' && typeof v === 'string' && v !== '')) as Record<string, string>;

/** The refund and the cancel: the API's use cases, their refusals shown on the sale's page. */
function saleActions(app: Router, ctx: AppContext): void {
  app.post('/painel/vendas/:id/estorno', { schema: { hide: true, params: SalePath, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const order = orderOf(request.body);
    if (!order) return page(reply, 403, 'mensagem.eta', formExpired());
    const typed = field(request.body, 'valor').trim();
    const text = typed === '' ? null : reaisTyped(typed);
    const cents = text === null ? null : parseReaisToCents(text);
    if (typed !== '' && !cents?.ok)
      return salePage(ctx, current, request.params.id, reply, {
        status: 400,
        errors: onField('valor', 'Escreva um valor em reais, como 50,00.'),
        typed,
      });
    const ask = {
      sellerId: current.session.sellerId,
      body: cents?.ok ? { amount: cents.value } : {},
      idempotencyKey: order,
      channel: 'PANEL',
    } as const;
    const outcome = await attempt(async () => refundSale(ctx, { ...ask, transactionId: parsePathId(request.params.id) }, request.log));
    const refused = refusalOf(outcome);
    if (refused) return salePage(ctx, current, request.params.id, reply, { status: refused.status, errors: placed(refused, refund_inputs), typed });
    return reply.redirect(`/painel/vendas/${request.params.id}?feito=estorno`, 303);
  });

  app.post('/painel/vendas/:id/cancelar', { schema: { hide: true, params: SalePath, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const outcome = await attemptResult(async () => applyEvent(ctx, parsePathId(request.params.id), 'CANCELLED', current.session.sellerId));
    if (!outcome.ok) return salePage(ctx, current, request.params.id, reply, { status: outcome.status, errors: placed(outcome, {}) });
    return reply.redirect(`/painel/vendas/${request.params.id}?feito=cancelada`, 303);
  });
}

/**
 * The MED defence (CONTRACT §11.5): the API's use case, its order the Idempotency-Key; its refusals on
 * the sale's page, a field's beside the field. Sent, the page tells what the PSP answered.
 */
function medDefense(app: Router, ctx: AppContext): void {
  app.post('/painel/vendas/:id/med', { schema: { hide: true, params: SalePath, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const order = orderOf(request.body);
    if (!order) return page(reply, 403, 'mensagem.eta', formExpired());
    const typed = field(request.body, 'justification');
    const justification = justificationOf(typed);
    if (!justification.ok)
      return salePage(ctx, current, request.params.id, reply, { status: 400, errors: onField('justification', justification.error), defense: typed });
    const ask = {
      sellerId: current.session.sellerId,
      body: { justification: justification.text },
      idempotencyKey: order,
      channel: 'PANEL',
    } as const;
    const outcome = await attempt(async () => defendMed(ctx, { ...ask, transactionId: parsePathId(request.params.id) }, request.log));
    const refused = refusalOf(outcome);
    if (refused) {
      const errors = refused.code === 'INVALID_TRANSITION' ? onForm(med_words.notDefensible) : placed(refused, defense_inputs);
      return salePage(ctx, current, request.params.id, reply, { status: refused.status, errors, defense: typed });
    }
    return reply.redirect(`/painel/vendas/${request.params.id}?feito=defesa`, 303);
  });
}

async function salePage(
  ctx: AppContext,
  current: Current,
  rawId: string,
  reply: Parameters<typeof page>[0],
  shown: { status?: number; errors?: FormErrors; done?: string; typed?: string; defense?: string },
) {
  const found = await attemptResult(async () => saleDetail(ctx, current.session.sellerId, parsePathId(rawId)));
  if (!found.ok) {
    const title = found.status === 403 ? 'Venda de outra conta' : found.status === 404 ? 'Venda não encontrada' : 'Endereço inválido';
    return page(reply, found.status, 'mensagem.eta', {
      title,
      message: found.error,
      link: { href: '/painel/vendas', text: 'Voltar às vendas' },
      session: current.session,
    });
  }
  // An error of no field of a form (a cancel refused…) stands under the title: the form may be gone.
  const errors = shown.errors ?? { fields: {} };
  // After the defence form, what the PSP answered (read from the sale, never from the URL).
  const said = shown.done === 'defesa' ? defenseOutcome(found.value.sale.med) : { notice: done[shown.done ?? ''] };
  return page(reply, shown.status ?? 200, 'venda.eta', {
    ...saleView(found.value),
    title: `Venda #${found.value.row.id}`,
    page: 'vendas',
    session: current.session,
    errors: { fields: errors.fields },
    alert: errors.form ?? said.alert,
    notice: said.notice,
    typed: shown.typed ?? '',
    defenseTyped: shown.defense ?? '',
    order: newOrder(),
  });
}
