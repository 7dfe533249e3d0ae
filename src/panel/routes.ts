/**
 * The seller panel at /painel (CONTRACT §12): server-rendered HTML in Portuguese, every action a
 * plain form (no client-side JavaScript), sessions in an HttpOnly cookie, a CSRF token on every form.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import type { RateLimits } from '../http/rate-limit.ts';
import type { Router } from '../http/router.ts';
import { accountPages } from './account-pages.ts';
import { acceptInvite, csrfMatches, endSession, login, openInvite, password_min_length, startSession } from './accounts.ts';
import { saleStatusLabel } from './authentication.ts';
import { cashoutPages } from './cashout-pages.ts';
import { salesChartSvg } from './chart.ts';
import { panelError } from './error-page.ts';
import { favicon_ico, favicon_svg } from './favicon.ts';
import { onField, onForm } from './form-errors.ts';
import { reais, whenSaoPaulo } from './format.ts';
import { homeOf } from './home.ts';
import { integrationPages } from './integration-pages.ts';
import { keyPages } from './key-pages.ts';
import { payment_methods } from './labels.ts';
import { PasswordHasher } from './passwords.ts';
import { salesPages } from './sales-pages.ts';
import { Form, field, formExpired, formSession, page, pageHeaders, pageSession, sessionCookie, setSession } from './session.ts';
import { statementPages } from './statement-pages.ts';

const views = fileURLToPath(new URL('./views/', import.meta.url));
const stylesheet = readFileSync(fileURLToPath(new URL('./estilo.css', import.meta.url)), 'utf8');
const login_csrf_cookie = 'painel_csrf';
const eta = new Eta({ views, cache: true });

/** An unknown /painel address: a page, as the panel answers everything (the API's 404 is JSON). */
export function panelNotFound(reply: FastifyReply) {
  const html = eta.render('./mensagem', {
    title: 'Página não encontrada',
    message: 'Este endereço não existe no painel.',
    link: { href: '/painel', text: 'Ir ao início' },
    session: null,
  });
  return pageHeaders(reply.code(404)).type('text/html; charset=utf-8').send(html);
}

export async function panelRoutes(app: Router, ctx: AppContext, limits: RateLimits): Promise<void> {
  // One pool per process: every password hashed or checked by the panel waits its turn here.
  const hasher = new PasswordHasher();
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  await app.register(view, { engine: { eta }, templates: views });
  app.setErrorHandler(panelError);

  app.get('/painel/estilo.css', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(stylesheet),
  );
  // The icon: linked from every page as SVG, and at /favicon.ico where a browser looks on its own.
  app.get('/painel/favicon.svg', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(favicon_svg),
  );
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(favicon_ico),
  );
  loginRoutes(app, ctx, hasher, limits);
  inviteRoutes(app, ctx, hasher);
  homeRoutes(app, ctx);
  salesPages(app, ctx);
  cashoutPages(app, ctx);
  statementPages(app, ctx);
  integrationPages(app, ctx);
  keyPages(app, ctx);
  accountPages(app, ctx, hasher);
}

/**
 * Log in (a CSRF token in a cookie of its own until there is a session). Three limits, each holding
 * under concurrency: failed logins per client address (the bucket the API's failed authentications
 * use, a token taken before the check and given back on success), password checks per account
 * (accounts.ts), and the hashing pool (passwords.ts).
 */
function loginRoutes(app: Router, ctx: AppContext, hasher: PasswordHasher, limits: RateLimits): void {
  app.get('/painel/entrar', { schema: { hide: true } }, async (request, reply) => {
    const csrf = request.cookies[login_csrf_cookie] ?? randomBytes(24).toString('base64url');
    void reply.setCookie(login_csrf_cookie, csrf, { httpOnly: true, sameSite: 'strict', path: '/painel', secure: request.protocol === 'https' });
    return page(reply, 200, 'entrar.eta', { title: 'Entrar', csrf, session: null });
  });

  app.post('/painel/entrar', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const csrf = request.cookies[login_csrf_cookie];
    if (!csrf || !csrfMatches(field(request.body, 'csrf'), csrf)) return page(reply, 403, 'mensagem.eta', formExpired());
    const email = field(request.body, 'email');
    const again = { title: 'Entrar', csrf, email, session: null };
    const tooMany = (seconds: number, error: string) => {
      void reply.header('retry-after', String(seconds));
      return page(reply, 429, 'entrar.eta', { ...again, errors: onForm(error) });
    };
    const addressWait = limits.authFailures.take(request.ip);
    if (addressWait > 0) return tooMany(addressWait, `Muitas tentativas erradas deste endereço. Tente de novo em ${addressWait} s.`);
    const outcome = await login(ctx.db, hasher, email, field(request.body, 'senha'), ctx.clock.now());
    if (outcome.kind === 'locked')
      return tooMany(outcome.retryAfterSeconds, `Muitas tentativas erradas. Tente de novo em ${Math.ceil(outcome.retryAfterSeconds / 60)} min.`);
    if (outcome.kind === 'busy') return tooMany(outcome.retryAfterSeconds, 'Muitos acessos ao mesmo tempo. Tente de novo em instantes.');
    if (outcome.kind === 'wrong') return page(reply, 401, 'entrar.eta', { ...again, errors: onForm('E-mail ou senha incorretos.') });
    limits.authFailures.giveBack(request.ip);
    const started = await startSession(ctx.db, outcome.sellerId, ctx.clock.now());
    setSession(request, reply, started.id);
    return reply.redirect('/painel', 303);
  });
}

/** An invite's page: the seller sets the password, then is logged in. */
function inviteRoutes(app: Router, ctx: AppContext, hasher: PasswordHasher): void {
  app.get(
    '/painel/convite/:token',
    { schema: { hide: true, params: Type.Object({ token: Type.String({ maxLength: 64 }) }) } },
    async (request, reply) => {
      const invite = await openInvite(ctx.db, request.params.token, ctx.clock.now());
      if (!invite) return page(reply, 404, 'mensagem.eta', inviteGone());
      return page(reply, 200, 'convite.eta', {
        title: 'Crie sua senha',
        email: invite.email,
        token: request.params.token,
        minLength: password_min_length,
        session: null,
      });
    },
  );

  app.post(
    '/painel/convite/:token',
    { schema: { hide: true, params: Type.Object({ token: Type.String({ maxLength: 64 }) }), body: Form } },
    async (request, reply) => {
      const { token } = request.params;
      const invite = await openInvite(ctx.db, token, ctx.clock.now());
      if (!invite) return page(reply, 404, 'mensagem.eta', inviteGone());
      const senha = field(request.body, 'senha');
      const again = { title: 'Crie sua senha', email: invite.email, token, minLength: password_min_length, session: null };
      if ([...senha].length < password_min_length)
        return page(reply, 400, 'convite.eta', {
          ...again,
          errors: onField('senha', `A senha precisa ter pelo menos ${password_min_length} caracteres.`),
        });
      if (senha !== field(request.body, 'confirmacao'))
        return page(reply, 400, 'convite.eta', { ...again, errors: onField('confirmacao', 'As duas senhas não são iguais.') });
      const sellerId = await acceptInvite(ctx.db, token, await hasher.hash(senha), ctx.clock.now());
      if (sellerId === null) return page(reply, 409, 'mensagem.eta', inviteGone());
      const started = await startSession(ctx.db, sellerId, ctx.clock.now());
      setSession(request, reply, started.id);
      return reply.redirect('/painel', 303);
    },
  );
}

function homeRoutes(app: Router, ctx: AppContext): void {
  app.get('/painel', { schema: { hide: true } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    const home = await homeOf(ctx.db, current.session.sellerId, ctx.clock.now());
    return page(reply, 200, 'inicio.eta', {
      title: 'Início',
      page: 'inicio',
      session: current.session,
      balance: { available: reais(home.balance.available), blocked: reais(home.balance.blocked), total: reais(home.balance.total) },
      chart: salesChartSvg(home.days),
      latest: home.latest.map((s) => ({
        id: s.id,
        when: whenSaoPaulo(s.created_at),
        method: payment_methods[s.payment_method],
        status: saleStatusLabel(s.status, home.awaiting.has(Number(s.id)), home.refunded.get(Number(s.id))),
        amount: reais(s.amount),
      })),
    });
  });

  app.post('/painel/sair', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const current = await formSession(ctx, request, reply);
    if (!current) return reply;
    await endSession(ctx.db, current.id, ctx.clock.now());
    void reply.clearCookie(sessionCookie(request), { path: '/' });
    return reply.redirect('/painel/entrar', 303);
  });
}

const inviteGone = () => ({
  title: 'Convite inválido',
  message: 'Este convite já foi usado ou expirou. Peça um novo à plataforma.',
  link: { href: '/painel/entrar', text: 'Entrar' },
  session: null,
});
