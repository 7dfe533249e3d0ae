/**
 * What every panel page shares: the session cookie, the page answer (its security headers), the
 * CSRF check of every form, and a refusal of a use case shown in words.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { ApiError, type FieldError, type PublicErrorCode } from '../domain/errors.ts';
import { type Result, refusalError } from '../domain/result.ts';
import { csrfMatches, resumeSession, type Session, session_absolute_ms } from './accounts.ts';
import { type FormErrors, invalidAttributes, no_errors } from './form-errors.ts';
import { inWords, storedInWords } from './messages.ts';

// Pages answer only to this site: no framing, no outside scripts, forms post back here.
const page_policy = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** After an action the page says what was done: a fixed word, never text from the URL. */
export const Done = Type.Object({ feito: Type.Optional(Type.String({ maxLength: 20 })) });

/** A list page's query: what was done, and where the page starts (`antes`: below this id). */
export const ListPage = Type.Object({ ...Done.properties, antes: Type.Optional(Type.String({ maxLength: 20 })) });

/** `antes` as an id, or null (first page): an old or mangled link shows the first page. */
export const cursorOf = (antes: string | undefined): number | null => (antes && /^[1-9]\d{0,15}$/.test(antes) ? Number(antes) : null);

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

/** The headers of every panel page. */
export function pageHeaders(reply: FastifyReply): FastifyReply {
  return (
    reply
      .header('content-security-policy', page_policy)
      .header('cache-control', 'no-store')
      // An invite's address holds its token: never sent on as a Referer.
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
  );
}

/** A page; its form errors (none by default) and the attributes that tie an input to its error go to every template. */
export function page(reply: FastifyReply, status: number, template: string, data: Record<string, unknown>) {
  const errors = (data.errors as FormErrors | undefined) ?? no_errors;
  return pageHeaders(reply.code(status)).view(template, { ...data, errors, invalid: invalidAttributes(errors) });
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

/** A use case's refusal in words, with what placing it beside a field needs (its code and field details). */
export interface Refused {
  status: number;
  error: string;
  code: PublicErrorCode;
  details?: FieldError[];
}

export type Attempted<T> = { ok: true; value: T } | ({ ok: false } & Refused);

/**
 * Runs a use case for a form; its refusal (the API's error) comes back in words, with the API's
 * status, for the page to show beside the form. Anything else is thrown on, to the error handler.
 */
export async function attempt<T>(run: () => Promise<T>): Promise<Attempted<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return inWordsOrThrown(error);
  }
}

/** `attempt` for a use case that returns its refusal (a Result) rather than throwing it: the page shows both alike. */
export async function attemptResult<T>(run: () => Promise<Result<T>>): Promise<Attempted<T>> {
  const outcome = await attempt(run);
  if (!outcome.ok) return outcome;
  return outcome.value.ok ? { ok: true, value: outcome.value.value } : inWordsOrThrown(refusalError(outcome.value.refusal));
}

/** A refusal in words; one the API answers with a 5xx is no refusal of the form's, and goes to the error handler. */
function inWordsOrThrown(error: ApiError): Attempted<never> {
  const words = inWords(error.code, error.details);
  if (words.status >= 500) throw error;
  return { ok: false, status: words.status, error: words.text, code: error.code, ...(error.details ? { details: error.details } : {}) };
}

/**
 * A form's order id, sent as the use case's Idempotency-Key: the same form sent twice (a double
 * click, a reload) does the thing once. Null when the form has none (an old page): refused.
 */
export function orderOf(body: unknown): string | null {
  const order = field(body, 'pedido');
  return /^[A-Za-z0-9_-]{16,64}$/.test(order) ? order : null;
}

/**
 * What a form shows after an idempotent use case: null when it was done (now, earlier, or by the
 * same order still running), else the refusal in words, whether thrown now or replayed as stored.
 */
export function refusalOf(outcome: Attempted<{ status: number; body: unknown }>): Refused | null {
  if (!outcome.ok) return outcome.code === 'IDEMPOTENCY_KEY_IN_USE' ? null : outcome;
  if (outcome.value.status < 400) return null;
  const { text, ...stored } = storedInWords(outcome.value.status, outcome.value.body);
  return { ...stored, error: text };
}

/** A new order id for a form that moves money. */
export const newOrder = () => randomBytes(18).toString('base64url');
