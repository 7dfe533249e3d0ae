/**
 * The closed set of public error codes and their HTTP status. Codes the spec or contract name as an
 * identifier are sent as `errorType`; the rest are sent as an `error` title (CONTRACT §10).
 */
export const PUBLIC_ERRORS = {
  VALIDATION_ERROR: { status: 400, identified: true },
  INVALID_PIX_KEY: { status: 400, identified: true },
  BAD_REQUEST: { status: 400, identified: false, title: 'Bad Request' },
  UNAUTHORIZED: { status: 401, identified: false, title: 'Unauthorized' },
  FORBIDDEN: { status: 403, identified: false, title: 'Forbidden' },
  API_WITHDRAWAL_DISABLED_GLOBALLY: { status: 403, identified: true },
  TRANSFER_NOT_ALLOWED: { status: 403, identified: true },
  NOT_FOUND: { status: 404, identified: false, title: 'Not Found' },
  INVALID_TRANSITION: { status: 409, identified: true },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, identified: true },
  PAYLOAD_TOO_LARGE: { status: 413, identified: false, title: 'Payload Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, identified: false, title: 'Unsupported Media Type' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, identified: true },
  MINIMUM_VALUE: { status: 422, identified: true },
  MAXIMUM_VALUE: { status: 422, identified: true },
  INSUFFICIENT_BALANCE: { status: 422, identified: true },
  REFUND_EXCEEDS_AMOUNT: { status: 422, identified: true },
  RATE_LIMITED: { status: 429, identified: true },
  INTERNAL: { status: 500, identified: false, title: 'Internal Server Error' },
  PROVIDER_ERROR: { status: 502, identified: true },
  SERVICE_UNAVAILABLE: { status: 503, identified: true },
} as const satisfies Record<string, { status: number; identified: boolean; title?: string }>;

export type PublicErrorCode = keyof typeof PUBLIC_ERRORS;

export interface FieldError {
  field: string;
  message: string;
}

/** A business refusal with a public code; thrown by use cases, rendered by the one error handler. */
export class ApiError extends Error {
  /** Sent as Retry-After (429, 503). */
  retryAfterSeconds?: number;

  constructor(
    readonly code: PublicErrorCode,
    message: string,
    readonly details?: FieldError[],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface ErrorBody {
  error?: string;
  message: string;
  errorType?: string;
  details?: FieldError[];
  requestId?: string;
}

export function errorBody(code: PublicErrorCode, message: string, details?: FieldError[]): { status: number; body: ErrorBody } {
  const spec = PUBLIC_ERRORS[code];
  // `error` first, then `message` (the spec's balance 401 body), for every titled error.
  const body: ErrorBody = spec.identified ? { message, errorType: code } : { error: spec.title, message };
  if (details) body.details = details;
  return { status: spec.status, body };
}

export const validationError = (details: FieldError[]) =>
  new ApiError(
    'VALIDATION_ERROR',
    details.length === 1 ? `Invalid ${details[0]!.field}: ${details[0]!.message}` : 'The request has invalid fields',
    details,
  );
