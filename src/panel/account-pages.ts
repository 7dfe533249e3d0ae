/** Conta: who is logged in, a password change, and logging out (CONTRACT §12). */
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Router } from '../http/router.ts';
import { findSeller } from '../sellers/sellers-repo.ts';
import { changePassword, password_min_length } from './accounts.ts';
import { type FormErrors, onField, onForm } from './form-errors.ts';
import type { PasswordHasher } from './passwords.ts';
import { type Current, Done, Form, field, formSession, page, pageSession } from './session.ts';

export function accountPages(app: Router, ctx: AppContext, hasher: PasswordHasher): void {
  app.get('/painel/conta', { schema: { hide: true, querystring: Done } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    const notice = request.query.feito === 'senha' ? 'Senha alterada. As outras sessões desta conta foram encerradas.' : undefined;
    return accountPage(ctx, current, reply, { notice });
  });

  app.post('/painel/conta/senha', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    const next = field(request.body, 'nova');
    if ([...next].length < password_min_length)
      return accountPage(ctx, current, reply, {
        status: 400,
        errors: onField('nova', `A nova senha precisa ter pelo menos ${password_min_length} caracteres.`),
      });
    if (next !== field(request.body, 'confirmacao'))
      return accountPage(ctx, current, reply, { status: 400, errors: onField('confirmacao', 'As duas senhas novas não são iguais.') });
    const outcome = await changePassword(ctx.db, hasher, current.session.sellerId, current.id, field(request.body, 'atual'), next, ctx.clock.now());
    if (outcome.kind === 'wrong') return accountPage(ctx, current, reply, { status: 400, errors: onField('atual', 'A senha atual está incorreta.') });
    if (outcome.kind === 'locked' || outcome.kind === 'busy') {
      void reply.header('retry-after', String(outcome.retryAfterSeconds));
      const minutes = Math.ceil(outcome.retryAfterSeconds / 60);
      const error =
        outcome.kind === 'busy'
          ? 'Muitos acessos ao mesmo tempo. Tente de novo em instantes.'
          : `Muitas tentativas erradas. Tente de novo em ${minutes} min.`;
      return accountPage(ctx, current, reply, { status: 429, errors: onForm(error) });
    }
    return reply.redirect('/painel/conta?feito=senha', 303);
  });
}

async function accountPage(ctx: AppContext, current: Current, reply: FastifyReply, shown: { status?: number; errors?: FormErrors; notice?: string }) {
  const seller = (await findSeller(ctx.db, current.session.sellerId))!;
  return page(reply, shown.status ?? 200, 'conta.eta', {
    title: 'Conta',
    page: 'conta',
    session: current.session,
    errors: shown.errors,
    notice: shown.notice,
    seller: { id: seller.id, name: seller.name, email: seller.email },
    minLength: password_min_length,
  });
}
