import type { Problema } from './api-pix-types.ts';

/**
 * Why a call to the API Pix failed:
 * - `timeout`: the PSP did not answer within the call's deadline (or could not be connected to in time);
 * - `network`: no HTTP answer at all (refused, reset, TLS handshake refused, e.g. a missing client certificate);
 * - `http`: an HTTP answer outside 2xx (`status`, and `problem` when the body was problem+json);
 * - `invalid-answer`: a 2xx whose body is not JSON or lacks what the gateway needs.
 */
export type ApiPixErrorKind = 'timeout' | 'network' | 'http' | 'invalid-answer';

export interface ApiPixErrorInit {
  kind: ApiPixErrorKind;
  /** The operation as the official file names it, e.g. "PUT /cob/{txid}" (never the concrete ids). */
  operation: string;
  /** What went wrong, for an operator log: never a secret, a token or a request body. */
  reason: string;
  status?: number;
  problem?: Problema;
  attempts?: number;
  /** The PSP's Retry-After (429, 503), in ms. */
  retryAfterMs?: number;
  cause?: unknown;
}

export class ApiPixError extends Error {
  override readonly name = 'ApiPixError';
  readonly kind: ApiPixErrorKind;
  readonly operation: string;
  readonly reason: string;
  readonly status?: number;
  readonly problem?: Problema;
  /** Requests sent for this call, the 401 refresh included. */
  readonly attempts: number;
  readonly retryAfterMs?: number;

  constructor(init: ApiPixErrorInit) {
    const attempts = init.attempts ?? 1;
    const tries = attempts > 1 ? ` (after ${attempts} attempts)` : '';
    super(`API Pix ${init.operation}: ${init.reason}${tries}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.operation = init.operation;
    this.reason = init.reason;
    if (init.status !== undefined) this.status = init.status;
    if (init.problem !== undefined) this.problem = init.problem;
    this.attempts = attempts;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
  }

  /** The same failure, as the outcome of a call that took `attempts` requests and reports as `operation`. */
  withAttempts(attempts: number, operation = this.operation, retryAfterMs = this.retryAfterMs): ApiPixError {
    return new ApiPixError({
      retryAfterMs,
      kind: this.kind,
      operation,
      reason: this.reason,
      status: this.status,
      problem: this.problem,
      attempts,
      cause: this.cause,
    });
  }
}

const problem_text_max = 300;

/** A short line out of a problem+json body: type's last segment, title, detail and the violated properties (not their values, which may be personal data). */
export function describeProblem(problem: Problema): string {
  const type = problem.type?.split('/').pop();
  const parts = [type, problem.title, problem.detail, problem.nome, problem.mensagem].filter(
    (p): p is string => typeof p === 'string' && p.length > 0,
  );
  const violated = (problem.violacoes ?? []).map((v) => [v.propriedade, v.razao].filter(Boolean).join(': ')).filter((v) => v.length > 0);
  if (violated.length > 0) parts.push(`violações: ${violated.join('; ')}`);
  const text = [...new Set(parts)].join(' — ');
  return text.length > problem_text_max ? `${text.slice(0, problem_text_max)}…` : text;
}

/** A 4xx other than 429: the PSP refuses this for good (sending it again would be refused again). */
export function isRefusal(error: unknown): error is ApiPixError {
  return error instanceof ApiPixError && error.kind === 'http' && error.status !== undefined && error.status < 500 && error.status !== 429;
}
