/**
 * Saques: the cashout form, a review page with the fees and the net before anything moves, and the
 * list (CONTRACT §12). The confirmation goes through the API's use case with an Idempotency-Key
 * the review page carries, so a form sent twice makes one cashout.
 */
import type { FastifyReply } from 'fastify';
import { listCashouts } from '../cashouts/cashouts-repo.ts';
import { previewCashout, quoteCashout, requestCashout } from '../cashouts/request-cashout.ts';
import type { AppContext } from '../context.ts';
import { PIX_KEY_TYPES } from '../domain/pix-keys.ts';
import { page_limit_default } from '../http/paging.ts';
import type { Router } from '../http/router.ts';
import { readBalance } from '../ledger/balances.ts';
import { type FormErrors, onField, onForm, placed } from './form-errors.ts';
import { formatPixKey, reais, reaisTyped, whenSaoPaulo } from './format.ts';
import { cashout_statuses, labelOf, pix_key_types, psp_statuses } from './labels.ts';
import {
  attempt,
  attemptResult,
  type Current,
  cursorOf,
  Form,
  field,
  formExpired,
  formSession,
  ListPage,
  newOrder,
  orderOf,
  page,
  pageSession,
  refusalOf,
} from './session.ts';

// The API's default page: a seller sees in the panel what a default API call lists.
const page_size = page_limit_default;
// The form's inputs of the use case's fields.
const cashout_inputs = { amount: 'valor', pixKey: 'chave', pixKeyType: 'tipo' };

/** The PSP's outcome and reason, and money returned after the payout, in words; null when the PSP said nothing yet. */
function pspDetail(c: { provider_data: Record<string, unknown> | null; failure_reason: string | null; returned_amount: number }): string | null {
  const said = typeof c.provider_data?.status === 'string' ? labelOf(psp_statuses, c.provider_data.status) : null;
  const parts = [said, c.failure_reason, c.returned_amount > 0 ? `devolvido ${reais(c.returned_amount)}` : null].filter(Boolean);
  return parts.length > 0 ? parts.join(' — ') : null;
}

interface Typed {
  valor: string;
  tipo: string;
  chave: string;
}

const typedOf = (body: unknown): Typed => ({ valor: field(body, 'valor'), tipo: field(body, 'tipo'), chave: field(body, 'chave') });

/** The form as the API's cashout body; the amount as people type reais, in words when it is not one. */
function cashoutBody(typed: Typed): { body: Record<string, string> } | { errors: FormErrors } {
  const amount = reaisTyped(typed.valor);
  if (amount === null) return { errors: onField('valor', 'Escreva um valor em reais, como 150,00.') };
  return { body: { amount, pixKey: typed.chave.trim(), pixKeyType: typed.tipo } };
}

export function cashoutPages(app: Router, ctx: AppContext): void {
  app.get('/painel/saques', { schema: { hide: true, querystring: ListPage } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    const notice = request.query.feito === 'saque' ? 'Saque pedido. Ele aparece na lista abaixo com o seu status.' : undefined;
    return cashoutsPage(ctx, current, reply, { notice, before: cursorOf(request.query.antes) });
  });

  app.post('/painel/saques/revisar', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const typed = typedOf(request.body);
    const asked = cashoutBody(typed);
    if ('errors' in asked) return cashoutsPage(ctx, current, reply, { status: 400, errors: asked.errors, typed });
    const preview = await attemptResult(() => previewCashout(ctx, current.session.sellerId, asked.body, 'PANEL'));
    if (!preview.ok) return cashoutsPage(ctx, current, reply, { status: preview.status, errors: placed(preview, cashout_inputs), typed });
    const { request: ask, fees, available } = preview.value;
    return page(reply, 200, 'saque-revisar.eta', {
      title: 'Confirme o saque',
      page: 'saques',
      session: current.session,
      typed,
      order: newOrder(),
      fees: fees.total,
      shown: {
        amount: reais(ask.amount),
        fixed: reais(fees.fixed),
        variable: reais(fees.variable),
        total: reais(fees.total),
        net: reais(fees.net),
        availableAfter: reais(available - ask.amount),
        key: formatPixKey(ask.pixKeyType, ask.pixKey),
        keyType: labelOf(pix_key_types, ask.pixKeyType),
      },
    });
  });

  app.post('/painel/saques', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const typed = typedOf(request.body);
    const asked = cashoutBody(typed);
    if ('errors' in asked) return cashoutsPage(ctx, current, reply, { status: 400, errors: asked.errors, typed });
    const order = orderOf(request.body);
    if (!order) return page(reply, 403, 'mensagem.eta', formExpired());
    // The fees shown on the review are the fees charged: a schedule changed since then sends the seller back.
    const quote = await attemptResult(() => quoteCashout(ctx, current.session.sellerId, asked.body, 'PANEL'));
    if (quote.ok && String(quote.value.fees.total) !== field(request.body, 'tarifas'))
      return cashoutsPage(ctx, current, reply, { status: 409, errors: onForm('As tarifas mudaram desde a revisão. Revise o saque de novo.'), typed });
    const ask = { sellerId: current.session.sellerId, body: asked.body, idempotencyKey: order, channel: 'PANEL', now: ctx.clock.now() } as const;
    const refused = refusalOf(await attempt(() => requestCashout(ctx, ask)));
    if (refused) return cashoutsPage(ctx, current, reply, { status: refused.status, errors: placed(refused, cashout_inputs), typed });
    return reply.redirect('/painel/saques?feito=saque', 303);
  });
}

async function cashoutsPage(
  ctx: AppContext,
  current: Current,
  reply: FastifyReply,
  shown: { status?: number; errors?: FormErrors; notice?: string; typed?: Typed; before?: number | null },
) {
  const sellerId = current.session.sellerId;
  const balance = await readBalance(ctx.db, sellerId);
  const rows = await listCashouts(ctx.db, sellerId, shown.before ?? null, page_size + 1);
  const listed = rows.slice(0, page_size);
  return page(reply, shown.status ?? 200, 'saques.eta', {
    title: 'Saques',
    page: 'saques',
    session: current.session,
    errors: shown.errors,
    notice: shown.notice,
    typed: shown.typed ?? { valor: '', tipo: 'CPF', chave: '' },
    available: reais(balance.available),
    keyTypes: PIX_KEY_TYPES.map((t) => ({ value: t, name: pix_key_types[t] })),
    next: rows.length > page_size ? `/painel/saques?antes=${listed.at(-1)!.id}` : null,
    cashouts: listed.map((c) => ({
      id: c.id,
      when: whenSaoPaulo(c.created_at),
      key: `${labelOf(pix_key_types, c.pix_key_type)}: ${formatPixKey(c.pix_key_type, c.pix_key)}`,
      amount: reais(c.amount),
      fees: reais(c.fee_total),
      net: reais(c.net_amount),
      status: labelOf(cashout_statuses, c.status),
      psp: pspDetail(c),
    })),
  });
}
