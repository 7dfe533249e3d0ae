/**
 * What every panel page shares: the session cookie, the page answer (its security headers), the
 * CSRF check of every form, and a refusal of a use case shown in words.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { ApiError } from '../domain/errors.ts';
import { csrfMatches, resumeSession, type Session, session_absolute_ms } from './accounts.ts';
import { inWords } from './messages.ts';

// Pages answer only to this site: no framing, no outside scripts, forms post back here.
const page_policy = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** After an action the page says what was done: a fixed word, never text from the URL. */
export const Done = Type.Object({ feito: Type.Optional(Type.String({ maxLength: 20 })) });

/** Every panel form: fields of text (checkboxes repeat a name, hence arrays too). */
export const Form = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));

export interface Current {
  id: string;
  session: Session;
}

/** `__Host-` and Secure over HTTPS (CONTRACT §12); a plain name over http (a browser refuses `__Host-` there). */
export const sessionCookie = (request: FastifyRequest) => (request.protocol === 'https' ? '__Host-painel_sessao' : 'painel_sessao');

export async function sessionOf(ctx: AppContext, request: FastifyRequest): Promise<Current | null> {
  const id = request.cookies[sessionCookie(request)];
  if (!id) return null;
  const session = await resumeSession(ctx.db, id, ctx.clock.now());
  return session && { id, session };
}

export function setSession(request: FastifyRequest, reply: FastifyReply, id: string): void {
  void reply.setCookie(sessionCookie(request), id, {
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
    path: '/',
    maxAge: session_absolute_ms / 1000,
  });
}

export function page(reply: FastifyReply, status: number, template: string, data: Record<string, unknown>) {
  return reply.code(status).header('content-security-policy', page_policy).header('cache-control', 'no-store').view(template, data);
}

/** The session of a page; without one the browser is sent to log in (and null is returned). */
export async function pageSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<Current | null> {
  const current = await sessionOf(ctx, request);
  if (!current) void reply.redirect('/painel/entrar', 303);
  return current;
}

/** A form's session, its CSRF token checked; otherwise the answer is sent (login or 403) and null returned. */
export async function formSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<Current | null> {
  const current = await pageSession(ctx, request, reply);
  if (!current) return null;
  const sent = (request.body as Record<string, unknown> | undefined)?.csrf;
  if (typeof sent === 'string' && csrfMatches(sent, current.session.csrfToken)) return current;
  await page(reply, 403, 'mensagem.eta', formExpired());
  return null;
}

export const formExpired = () => ({
  title: 'Formulário expirado',
  message: 'Este formulário não pôde ser confirmado (token de segurança ausente ou inválido). Abra a página de novo e tente outra vez.',
  link: { href: '/painel', text: 'Voltar ao painel' },
  session: null,
});

/** A form field as one string ('' when absent; the first when repeated). */
export function field(body: unknown, name: string): string {
  const v = (body as Record<string, string | string[]> | undefined)?.[name];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/** Every value of a repeated field (checkboxes). */
export function fields(body: unknown, name: string): string[] {
  const v = (body as Record<string, string | string[]> | undefined)?.[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/**
 * Runs a use case for a form; its refusal (the API's error) comes back in words, with the API's
 * status, for the page to show beside the form. Anything else is thrown on, to the error handler.
 */
export async function attempt<T>(run: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; status: number; error: string }> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const words = inWords(error.code, error.details);
    if (words.status >= 500) throw error;
    return { ok: false, status: words.status, error: words.text };
  }
}
