import type { Dispatcher } from 'undici';
import { AnswerError, readProblema } from './api-pix-answers.ts';
import { ApiPixError, describeProblem } from './api-pix-error.ts';
import type { TokenSource } from './oauth.ts';
import { type Answer, type ApiPixLogger, exchange, transportError } from './transport.ts';

/** One operation of the API Pix, as the client asks for it. */
export interface CallSpec<T> {
  method: 'GET' | 'PUT' | 'PATCH' | 'POST';
  /** The file's name of the operation, e.g. "PUT /cob/{txid}". */
  operation: string;
  /** The path under the base URL, ids already checked and encoded. */
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  /**
   * Whether sending it twice is harmless: GETs and the PUTs whose ids are ours. Only those are sent
   * again after a network error, a timeout, a 429 or a 5xx.
   */
  idempotent: boolean;
  /** Reads a 2xx answer (its parsed JSON, undefined when empty); throws AnswerError when it lacks what we need. */
  read: (body: unknown) => T;
  /** The 2xx answer has no body the gateway reads (PUT /webhook/{chave}): whatever it holds is ignored. */
  bodyless?: boolean;
}

export interface CallerOptions {
  baseUrl: URL;
  agent: Dispatcher;
  tokens: TokenSource;
  requestMs: number;
  maxAttempts: number;
  logger?: ApiPixLogger;
  random?: () => number;
}

export type Call = <T>(spec: CallSpec<T>) => Promise<T>;

const backoff_base_ms = 100;
// A retry is not started with less than this left of the call's deadline: it could not finish.
const min_attempt_ms = 50;

/** The result of a 2xx, or the ApiPixError of any other answer. */
function settle<T>(spec: CallSpec<T>, answer: Answer): T {
  const { operation } = spec;
  if (answer.status >= 200 && answer.status <= 299) {
    if (answer.json === 'not-json' && !spec.bodyless)
      throw new ApiPixError({ kind: 'invalid-answer', operation, status: answer.status, reason: 'answer is not JSON' });
    try {
      return spec.read(answer.body);
    } catch (err) {
      if (!(err instanceof AnswerError)) throw err;
      throw new ApiPixError({ kind: 'invalid-answer', operation, status: answer.status, reason: `answer lacks what we need: ${err.message}` });
    }
  }
  const problem = readProblema(answer.body);
  const said = problem ? `: ${describeProblem(problem)}` : '';
  throw new ApiPixError({ kind: 'http', operation, status: answer.status, problem, reason: `HTTP ${answer.status}${said}` });
}

function transient(e: ApiPixError): boolean {
  if (e.kind === 'network' || e.kind === 'timeout') return true;
  return e.kind === 'http' && e.status !== undefined && (e.status === 429 || e.status >= 500);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

type Outcome<T> =
  | { value: T }
  | { failure: ApiPixError; retryAfterMs?: number; apiReached: boolean }
  // The PSP refused the token: get a new one and send again.
  | 'refresh';

/** A failure to get a token, reported as the call's (the token operation named in the reason). */
function tokenFailure(err: unknown, operation: string): ApiPixError {
  const e = err instanceof ApiPixError ? err : transportError(err, 'token');
  return new ApiPixError({ kind: e.kind, operation, status: e.status, reason: `token request (${e.operation}): ${e.reason}`, cause: err });
}

interface Attempt {
  url: URL;
  body: string | undefined;
  deadline: number;
  /** Whether a 401 has already been answered by a new token (then a 401 is final). */
  refreshed: boolean;
}

async function once<T>(o: CallerOptions, spec: CallSpec<T>, a: Attempt): Promise<Outcome<T>> {
  let token: string;
  try {
    token = await o.tokens.get(a.deadline);
  } catch (err) {
    return { failure: tokenFailure(err, spec.operation), apiReached: false };
  }
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (a.body !== undefined) headers['content-type'] = 'application/json';
  let answer: Answer;
  try {
    answer = await exchange(o.agent, { method: spec.method, url: a.url, headers, body: a.body, operation: spec.operation, deadline: a.deadline });
  } catch (err) {
    return { failure: transportError(err, spec.operation), apiReached: true };
  }
  if (answer.status === 401 && !a.refreshed) {
    o.tokens.invalidate(token);
    return 'refresh';
  }
  try {
    return { value: settle(spec, answer) };
  } catch (err) {
    if (!(err instanceof ApiPixError)) throw err;
    return { failure: err, retryAfterMs: answer.retryAfterMs, apiReached: true };
  }
}

/**
 * The call loop: token, request, answer. A 401 drops the token and sends the call once more with
 * a fresh one (the PSP refused it before doing anything, so even a PATCH may go again). Transient
 * failures of idempotent calls are retried with full-jitter exponential backoff, within the
 * attempt budget and the call's one deadline; a failure to get a token is retried whatever the
 * call, since the API was not reached.
 */
export function createCaller(o: CallerOptions): Call {
  const random = o.random ?? Math.random;
  const basePath = o.baseUrl.pathname.replace(/\/+$/, '');

  /** How long to wait before the next attempt, or null when the failure is final. */
  function nextDelay(e: ApiPixError, mayRepeat: boolean, tries: number, deadline: number, retryAfterMs?: number): number | null {
    if (!transient(e) || !mayRepeat || tries >= o.maxAttempts) return null;
    const wait = Math.max(random() * backoff_base_ms * 2 ** (tries - 1), retryAfterMs ?? 0);
    return performance.now() + wait + min_attempt_ms <= deadline ? wait : null;
  }

  return async function call<T>(spec: CallSpec<T>): Promise<T> {
    const url = new URL(o.baseUrl.origin);
    url.pathname = `${basePath}${spec.path}`;
    if (spec.query) url.search = spec.query.toString();
    const a: Attempt = {
      url,
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      deadline: performance.now() + o.requestMs,
      refreshed: false,
    };
    for (let tries = 1; ; tries++) {
      const outcome = await once(o, spec, a);
      if (outcome === 'refresh') {
        a.refreshed = true;
        tries--;
        o.logger?.warn({ operation: spec.operation }, 'API Pix refused the access token (401); getting a new one');
        continue;
      }
      if ('value' in outcome) return outcome.value;
      const { failure } = outcome;
      const delay = nextDelay(failure, spec.idempotent || !outcome.apiReached, tries, a.deadline, outcome.retryAfterMs);
      if (delay === null) throw failure.withAttempts(tries + (a.refreshed ? 1 : 0), undefined, outcome.retryAfterMs);
      o.logger?.warn(
        { operation: spec.operation, attempt: tries, kind: failure.kind, status: failure.status, delayMs: Math.round(delay) },
        'API Pix call failed; retrying',
      );
      await sleep(delay);
    }
  };
}
