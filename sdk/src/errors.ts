// The SDK's errors: an answer of the gateway that is not a success (GatewayError), no answer at all
// after every retry (GatewayNetworkError, GatewayTimeoutError), a notification that fails its
// signature check (WebhookVerificationError).
import type { paths } from './schema.ts';

/**
 * The machine identifiers the gateway documents (the spec's error table and CONTRACT §10), carried
 * as `errorType`. Errors without an identifier (401, 403 for another seller's resource, 404, a bad
 * id, 500) carry a short title in `error` instead.
 */
export const DOCUMENTED_ERROR_TYPES = [
  'VALIDATION_ERROR',
  'INVALID_PIX_KEY',
  'API_WITHDRAWAL_DISABLED_GLOBALLY',
  'TRANSFER_NOT_ALLOWED',
  'INVALID_TRANSITION',
  'IDEMPOTENCY_KEY_IN_USE',
  'IDEMPOTENCY_KEY_REUSED',
  'MINIMUM_VALUE',
  'MAXIMUM_VALUE',
  'INSUFFICIENT_BALANCE',
  'REFUND_EXCEEDS_AMOUNT',
  'RATE_LIMITED',
  'PROVIDER_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

type Operations = { [P in keyof paths]: paths[P][Exclude<keyof paths[P], 'parameters'>] }[keyof paths];
type ErrorBodies<Op> = Op extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 | 204 ? never : R[S] extends { content: { 'application/json': infer B } } ? B : never }[keyof R]
  : never;
/** The `errorType` literals the OpenAPI document gives its error answers (a bare `string` left out). */
type SchemaErrorType =
  ErrorBodies<Operations> extends infer B
    ? B extends { errorType?: infer E }
      ? string extends NonNullable<E>
        ? never
        : NonNullable<E>
      : never
    : never;

/** `errorType` values: the identifiers of the OpenAPI document's error answers and of the contract. */
export type ErrorType = SchemaErrorType | (typeof DOCUMENTED_ERROR_TYPES)[number];

/** One refused field of a VALIDATION_ERROR (or INVALID_PIX_KEY): `field` is a dotted path such as `customer.email`. */
export interface FieldError {
  field: string;
  message: string;
}

/** What the SDK knows about the request that failed. */
export interface RequestInfo {
  method: string;
  /** The operation's path template, e.g. `/api/transactions/{id}`. */
  path: string;
  /** The Idempotency-Key the request was sent with (every POST has one): retry later with the same key. */
  idempotencyKey?: string | undefined;
  /** How many times the request was sent. */
  attempts?: number | undefined;
}

/** The gateway answered with a status other than 2xx (after the retries of 429 and 5xx). */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  /** The HTTP status. */
  readonly status: number;
  /** The machine identifier, when the error has one (e.g. VALIDATION_ERROR, INSUFFICIENT_BALANCE). */
  readonly errorType: ErrorType | undefined;
  /** The short title of errors without an identifier (e.g. `Unauthorized`, `Not Found`). */
  readonly error: string | undefined;
  /** Field errors of a VALIDATION_ERROR; empty otherwise. */
  readonly details: FieldError[];
  /** The gateway's request id (`x-request-id` header, or `requestId` of a 500's body): quote it to support. */
  readonly requestId: string | undefined;
  /** Seconds the gateway asked to wait (`Retry-After` of a 429 or 503), when it did. */
  readonly retryAfterSeconds: number | undefined;
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  readonly attempts: number | undefined;
  /** The parsed error body as received (or its text when it was not JSON). */
  readonly body: unknown;

  constructor(status: number, body: unknown, headers: Headers, request: RequestInfo) {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
    // A body that is not the gateway's JSON (a proxy's HTML page, say) is cut to keep messages readable.
    const message = text(b.message) ?? text(b.error) ?? (typeof body === 'string' && body !== '' ? body.slice(0, 300) : `HTTP ${status}`);
    super(message);
    this.status = status;
    this.errorType = text(b.errorType) as ErrorType | undefined;
    this.error = text(b.error);
    this.details = Array.isArray(b.details) ? (b.details as FieldError[]) : [];
    this.requestId = headers.get('x-request-id') ?? text(b.requestId);
    this.retryAfterSeconds = retryAfterSeconds(headers.get('retry-after'));
    this.method = request.method;
    this.path = request.path;
    this.idempotencyKey = request.idempotencyKey;
    this.attempts = request.attempts;
    this.body = body;
  }
}

/** No answer from the gateway after every retry: the connection failed, was reset, or each attempt timed out. */
export class GatewayNetworkError extends Error {
  override readonly name: string = 'GatewayNetworkError';
  readonly method: string;
  readonly url: string;
  readonly idempotencyKey: string | undefined;
  readonly attempts: number;
  /** Whether the last attempt ended by the per-request timeout. */
  readonly timedOut: boolean;

  constructor(
    message: string,
    info: { method: string; url: string; idempotencyKey?: string | undefined; attempts: number; timedOut: boolean; cause?: unknown },
  ) {
    super(message, { cause: info.cause });
    this.method = info.method;
    this.url = info.url;
    this.idempotencyKey = info.idempotencyKey;
    this.attempts = info.attempts;
    this.timedOut = info.timedOut;
  }
}

/** Every attempt ran out of time (`timeoutMs`) — a GatewayNetworkError whose `timedOut` is true. */
export class GatewayTimeoutError extends GatewayNetworkError {
  override readonly name: string = 'GatewayTimeoutError';
}

/** A notification whose signature, timestamp or headers do not check out: answer it 4xx and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** `Retry-After` in seconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
