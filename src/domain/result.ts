/**
 * The one outcome of a domain check. A refusal already carries the public error code it is answered
 * with, so a route turns any refusal into an HTTP error without knowing which check made it.
 */
import { ApiError, type FieldError, type PublicErrorCode, validationError } from './errors.ts';

export interface Refusal {
  code: PublicErrorCode;
  message: string;
  details?: FieldError[];
}

export type Refused = { ok: false; refusal: Refusal };
export type Result<T> = { ok: true; value: T } | Refused;

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function refuse(code: PublicErrorCode, message: string, details?: FieldError[]): Refused {
  return { ok: false, refusal: details ? { code, message, details } : { code, message } };
}

/** 400 VALIDATION_ERROR naming every field, with the summary validationError words for it. */
export function invalid(details: FieldError[]): Refused {
  return refuse('VALIDATION_ERROR', validationError(details).message, details);
}

/** The refusal as the error the one error handler renders (and the idempotency store keeps). */
export function refusalError(refusal: Refusal): ApiError {
  return new ApiError(refusal.code, refusal.message, refusal.details);
}
