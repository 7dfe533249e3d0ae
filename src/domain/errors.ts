/**
 * The closed set of public error codes (CONTRACT §10): what every refusal is, whatever answers it.
 * How each is sent over HTTP (its status, and whether it is an `errorType` identifier or an `error`
 * title) is http/error-bodies.ts's.
 */
export const PUBLIC_ERROR_CODES = [
  'VALIDATION_ERROR',
  'INVALID_PIX_KEY',
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'API_WITHDRAWAL_DISABLED_GLOBALLY',
  'TRANSFER_NOT_ALLOWED',
  'NOT_FOUND',
  'INVALID_TRANSITION',
  'IDEMPOTENCY_KEY_IN_USE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'IDEMPOTENCY_KEY_REUSED',
  'MINIMUM_VALUE',
  'MAXIMUM_VALUE',
  'INSUFFICIENT_BALANCE',
  'REFUND_EXCEEDS_AMOUNT',
  'RATE_LIMITED',
  'INTERNAL',
  'PROVIDER_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

export type PublicErrorCode = (typeof PUBLIC_ERROR_CODES)[number];

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

export const validationError = (details: FieldError[]) =>
  new ApiError(
    'VALIDATION_ERROR',
    details.length === 1 ? `Invalid ${details[0]!.field}: ${details[0]!.message}` : 'The request has invalid fields',
    details,
  );
