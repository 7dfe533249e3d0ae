/**
 * How each public error code is answered over HTTP (CONTRACT §10): its status, and whether it is
 * sent as an `errorType` identifier (the codes the spec or contract name) or as an `error` title.
 */
import type { FieldError, PublicErrorCode } from '../domain/errors.ts';

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
} as const satisfies Record<PublicErrorCode, { status: number; identified: boolean; title?: string }>;

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
