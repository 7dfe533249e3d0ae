import type { Dispatcher } from 'undici';
import { ApiPixError } from './api-pix-error.ts';
import { type ApiPixLogger, exchange } from './transport.ts';

/**
 * OAuth2 client credentials (RFC 6749 §4.4), as the API Pix's security scheme asks: the client id
 * and secret by HTTP Basic, the access token cached until shortly before it expires, and one token
 * request at a time however many calls need one.
 */
export interface TokenSourceOptions {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes, for PSPs that want them asked for (e.g. "cob.write cob.read pix.read"). */
  scope?: string;
  /** How the grant is sent: form-urlencoded (RFC 6749, the API Pix) or JSON (Efí's Cobranças API at /v1/authorize). */
  grantBody?: 'form' | 'json';
  agent: Dispatcher;
  /** Bound of one token request, as of an API call. */
  requestMs: number;
  /** Wall clock of the cache (ms); tests move it. */
  clock: () => number;
  logger?: ApiPixLogger;
}

export interface TokenSource {
  /** A valid access token; waits at most until `deadline` (performance.now()). */
  get(deadline: number): Promise<string>;
  /** Forgets `token` after the API refused it (401); a token obtained since is kept. */
  invalidate(token: string): void;
}

// When expires_in is absent (RFC 6749 only recommends it): a short life, and a 401 refreshes it anyway.
const default_expires_s = 60;
// Refresh this much before the PSP's expiry: clocks drift and a call started just before it must not arrive after it.
const early_max_ms = 60_000;
const early_fraction = 0.1;

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before Basic (a no-op for the usual letters, digits, '-', '_' and '.'). */
function basicAuth(id: string, secret: string): string {
  const form = (s: string) => new URLSearchParams({ s }).toString().slice(2);
  return `Basic ${Buffer.from(`${form(id)}:${form(secret)}`).toString('base64')}`;
}

function expiresInSeconds(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Refusals by the token endpoint name their RFC 6749 `error` code; its body is never quoted whole (a 200 one holds the token). */
function refusal(body: unknown): string {
  const error = (body as { error?: unknown } | undefined)?.error;
  return typeof error === 'string' && /^[\w.-]{1,64}$/.test(error) ? ` ${error}` : '';
}

export function createTokenSource(o: TokenSourceOptions): TokenSource {
  const url = new URL(o.tokenUrl);
  const operation = `POST ${url.pathname}`;
  const authorization = basicAuth(o.clientId, o.clientSecret);
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (o.scope) form.set('scope', o.scope);
  const json = o.grantBody === 'json';
  const grant = json ? JSON.stringify(Object.fromEntries(form)) : form.toString();
  let cached: { value: string; refreshAt: number } | null = null;
  let inFlight: Promise<string> | null = null;

  async function fetchToken(): Promise<string> {
    const startedAt = o.clock();
    const answer = await exchange(o.agent, {
      method: 'POST',
      url,
      headers: { authorization, 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: grant,
      operation,
      deadline: performance.now() + o.requestMs,
    });
    if (answer.status < 200 || answer.status > 299) {
      throw new ApiPixError({
        kind: 'http',
        operation,
        status: answer.status,
        reason: `token refused: HTTP ${answer.status}${refusal(answer.body)}`,
      });
    }
    const body = answer.body as { access_token?: unknown; token_type?: unknown; expires_in?: unknown } | undefined;
    const invalid = (reason: string) => new ApiPixError({ kind: 'invalid-answer', operation, status: answer.status, reason });
    if (typeof body?.access_token !== 'string' || body.access_token.length === 0) throw invalid('token answer has no access_token');
    if (body.token_type !== undefined && String(body.token_type).toLowerCase() !== 'bearer') throw invalid('token answer is not a Bearer token');
    const lifeMs = (expiresInSeconds(body.expires_in) ?? default_expires_s) * 1000;
    // From when the request started: the PSP's clock started no earlier.
    cached = { value: body.access_token, refreshAt: startedAt + lifeMs - Math.min(early_max_ms, lifeMs * early_fraction) };
    o.logger?.debug({ operation, expiresInSeconds: lifeMs / 1000 }, 'API Pix access token obtained');
    return body.access_token;
  }

  function shared(): Promise<string> {
    if (inFlight) return inFlight;
    const p = fetchToken();
    inFlight = p;
    // Waiters that gave up (their deadline) leave nobody to handle a rejection: it is handled here.
    p.then(
      () => {},
      () => {},
    ).finally(() => {
      if (inFlight === p) inFlight = null;
    });
    return p;
  }

  return {
    async get(deadline) {
      if (cached && o.clock() < cached.refreshAt) return cached.value;
      return untilDeadline(shared(), deadline, operation);
    },
    invalidate(token) {
      if (cached?.value === token) cached = null;
    },
  };
}

/** `p`, or a timeout error once `deadline` (performance.now()) has passed; `p` itself goes on for the others waiting on it. */
async function untilDeadline<T>(p: Promise<T>, deadline: number, operation: string): Promise<T> {
  const remaining = deadline - performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ApiPixError({ kind: 'timeout', operation, reason: 'no token within the deadline' })), Math.max(0, remaining));
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
