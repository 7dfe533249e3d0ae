// The transport under openapi-fetch: every attempt has a time limit, and a request that got a 5xx
// or a 429, or no answer, is sent again unchanged (same Idempotency-Key), a bounded number of times
// with exponential backoff and jitter — a POST the gateway does not deduplicate only when it cannot
// have acted. Any other answer, 4xx included, is returned as it is.
import { randomUUID } from 'node:crypto';
import { GatewayNetworkError, GatewayTimeoutError, retryAfterSeconds } from './errors.ts';

export interface RetryPolicy {
  /** Longest one attempt may take, connection, headers and body included (ms). Default 30 000. */
  timeoutMs?: number;
  /** Attempts after the first (0 = never retry). Default 3. */
  retries?: number;
  /** First backoff (ms), doubled at each retry, with jitter. Default 250. */
  retryBaseDelayMs?: number;
  /** Longest backoff between two attempts (ms). Default 5 000. */
  retryMaxDelayMs?: number;
  /** Longest `Retry-After` the client waits for (ms); an answer asking for more is returned as it is. Default 60 000. */
  maxRetryAfterMs?: number;
}

/** Per call: an AbortSignal, and any retry/timeout setting to change for this call only. */
export interface CallOptions extends RetryPolicy {
  signal?: AbortSignal;
}

/** Per POST: also the Idempotency-Key (default: a random UUID, the same on every retry). */
export interface PostOptions extends CallOptions {
  idempotencyKey?: string;
  /**
   * Whether to retry after a failure that leaves it unknown whether the gateway acted (a timeout, a
   * connection lost after the request went out, a 5xx). Default: true for the POSTs the gateway
   * deduplicates by Idempotency-Key (createSale, createCashout, refundTransaction,
   * rotateSigningSecret), false for the others, which a retry could repeat. GET, PATCH and DELETE
   * are always retried.
   */
  retryAmbiguous?: boolean;
}

export type Fetch = (input: Request) => Promise<Response>;

interface Resolved {
  timeoutMs: number;
  retries: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  maxRetryAfterMs: number;
}

export const DEFAULT_POLICY: Readonly<Resolved> = {
  timeoutMs: 30_000,
  retries: 3,
  retryBaseDelayMs: 250,
  retryMaxDelayMs: 5_000,
  maxRetryAfterMs: 60_000,
};

/** The policy with `override`'s defined fields on top, checked. */
export function resolvePolicy(base: RetryPolicy, override: RetryPolicy = {}): Resolved {
  const merged = { ...DEFAULT_POLICY };
  for (const p of [base, override])
    for (const [k, v] of Object.entries(p) as [keyof Resolved, number | undefined][]) if (v !== undefined) merged[k] = v;
  for (const [k, v] of Object.entries(merged)) if (!Number.isFinite(v) || v < 0) throw new RangeError(`${k} must be a finite number ≥ 0, got ${v}`);
  if (!Number.isInteger(merged.retries)) throw new RangeError(`retries must be an integer, got ${merged.retries}`);
  if (merged.timeoutMs === 0) throw new RangeError('timeoutMs must be above 0');
  return merged;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

class Timeout extends Error {}

/** Sleeps `ms`, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Exponential backoff with "equal jitter": half the capped delay, plus up to as much at random. */
export function backoffMs(retry: number, policy: Resolved, random: () => number = Math.random): number {
  const capped = Math.min(policy.retryMaxDelayMs, policy.retryBaseDelayMs * 2 ** (retry - 1));
  return capped / 2 + random() * (capped / 2);
}

/** One attempt under the time limit, the body read whole within it; the caller's abort wins over the timeout. */
async function attempt(base: Fetch, url: string, init: RequestInit, timeoutMs: number, caller: AbortSignal): Promise<Response> {
  caller.throwIfAborted();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Timeout(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
  const onAbort = () => controller.abort(caller.reason);
  caller.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await base(new Request(url, { ...init, signal: controller.signal }));
    const body = NULL_BODY_STATUSES.has(res.status) ? null : await res.arrayBuffer();
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  } catch (error) {
    // The reason tells a timeout (ours) from a caller's abort from a network failure.
    if (controller.signal.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    caller.removeEventListener('abort', onAbort);
  }
}

/** The wait before the next attempt for an answer that may be retried, or null when it may not. */
function retryDelay(res: Response, retry: number, policy: Resolved, ambiguousOk: boolean): number | null {
  // A 5xx may come from a proxy after the gateway acted: only a request safe to repeat is retried.
  if (res.status !== 429 && (res.status < 500 || !ambiguousOk)) return null;
  const after = retryAfterSeconds(res.headers.get('retry-after'));
  if (after === undefined) return backoffMs(retry, policy);
  const ms = after * 1000;
  return ms > policy.maxRetryAfterMs ? null : ms;
}

// Failures before the request went out: retrying them cannot repeat anything.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Whether a fetch failure happened before any byte of the request reached the server. */
export function neverSent(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  const causes = cause instanceof AggregateError ? cause.errors : [cause];
  return causes.length > 0 && causes.every((c) => c instanceof Error && NOT_SENT_CODES.has((c as NodeJS.ErrnoException).code ?? ''));
}

export interface TransportHooks {
  /** Set to the number of attempts made, as they are made. */
  stats?: { attempts: number };
  /** Retry a POST after a failure that leaves it unknown whether the gateway acted (see PostOptions). Default false. */
  retryAmbiguousPost?: boolean;
}

/**
 * A fetch that adds an `Idempotency-Key` (a random UUID) to a POST that has none, bounds each
 * attempt by `timeoutMs`, and retries network failures, timeouts, 5xx and 429 (after its
 * `Retry-After`) up to `retries` times with the same request (a POST after an ambiguous failure
 * only with `retryAmbiguousPost`). Throws GatewayNetworkError (or GatewayTimeoutError) when no
 * attempt got an answer; rethrows a caller's abort at once.
 */
export function retryingFetch(policyIn: RetryPolicy, base: Fetch = globalThis.fetch, hooks: TransportHooks = {}): Fetch {
  const policy = resolvePolicy(policyIn);
  return async (request: Request) => {
    const headers = new Headers(request.headers);
    if (request.method === 'POST' && !headers.has('idempotency-key')) headers.set('idempotency-key', randomUUID());
    const idempotencyKey = headers.get('idempotency-key') ?? undefined;
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const init: RequestInit = { method: request.method, headers, redirect: request.redirect, ...(body === undefined ? {} : { body }) };
    const caller = request.signal;
    // GET and DELETE are idempotent and the gateway's PATCHes set fields to the values sent: always
    // retried. A 429 means the gateway did not act, so every POST is retried on it; after a 5xx (a
    // proxy may answer one after the gateway committed), a timeout or a lost connection only the
    // POSTs the gateway deduplicates are (or when the caller says so).
    const ambiguousOk = request.method !== 'POST' || hooks.retryAmbiguousPost === true;
    let lastError: unknown;
    let n = 1;
    for (; ; n++) {
      if (hooks.stats) hooks.stats.attempts = n;
      let wait: number | null;
      try {
        const res = await attempt(base, request.url, init, policy.timeoutMs, caller);
        wait = n <= policy.retries ? retryDelay(res, n, policy, ambiguousOk) : null;
        if (wait === null) return res;
      } catch (error) {
        if (caller.aborted) throw caller.reason ?? error;
        lastError = error;
        if (n > policy.retries || !(ambiguousOk || neverSent(error))) break;
        wait = backoffMs(n, policy);
      }
      await sleep(wait, caller);
    }
    throw networkError(request, lastError, { idempotencyKey, attempts: n, timeoutMs: policy.timeoutMs, gaveUp: n <= policy.retries });
  };
}

function networkError(
  request: Request,
  cause: unknown,
  o: { idempotencyKey: string | undefined; attempts: number; timeoutMs: number; gaveUp: boolean },
) {
  const timedOut = cause instanceof Timeout;
  const info = { method: request.method, url: request.url, idempotencyKey: o.idempotencyKey, attempts: o.attempts, timedOut, cause };
  const what = timedOut ? `timed out (${o.timeoutMs} ms)` : `failed: ${describe(cause)}`;
  const why = o.gaveUp ? '; not retried: the gateway may have acted on it and does not deduplicate it (retryAmbiguous)' : '';
  const message = `${request.method} ${request.url} ${what} after ${o.attempts} attempt${o.attempts === 1 ? '' : 's'}${why}`;
  return timedOut ? new GatewayTimeoutError(message, info) : new GatewayNetworkError(message, info);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${(error.cause as NodeJS.ErrnoException).code ?? error.cause.message})` : '';
  return `${error.message}${cause}`;
}
