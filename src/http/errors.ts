import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../db/db.ts';
import { ApiError, errorBody, type FieldError, type PublicErrorCode } from '../domain/errors.ts';

// Long enough for the availability probe to have run again; short enough to retry soon.
export const unavailable_retry_after_s = 1;

interface AjvError {
  instancePath?: string;
  keyword: string;
  params?: Record<string, unknown>;
  message?: string;
}

/** "/customer/email" + missingProperty "name" → "customer.name"; array indexes stay: "items.0.title". */
export function fieldOf(e: AjvError, context?: string): string {
  const path = (e.instancePath ?? '').split('/').filter(Boolean);
  if (e.keyword === 'required' && typeof e.params?.missingProperty === 'string') path.push(e.params.missingProperty);
  const field = path.join('.');
  return field || (context === 'body' || !context ? 'body' : context);
}

export function ajvDetails(errors: AjvError[], context?: string): FieldError[] {
  const seen = new Set<string>();
  const details: FieldError[] = [];
  for (const e of errors) {
    const field = fieldOf(e, context);
    const message = e.message ?? 'is invalid';
    if (seen.has(field + message)) continue;
    seen.add(field + message);
    details.push({ field, message });
  }
  return details;
}

const fastify_client_codes: Record<number, PublicErrorCode> = { 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' };

/** The one error handler: every error leaves as a public code's body; internals never do. */
export function handleError(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply): void {
  // Response schemas would reorder keys (required first); error bodies keep `error` before `message`.
  // A custom serializer leaves Content-Type unset, so it is set here (CONTRACT §10).
  void reply.serializer(JSON.stringify).type('application/json; charset=utf-8');
  if (error instanceof ApiError) {
    const { status, body } = errorBody(error.code, error.message, error.details);
    if (error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds));
    void reply.status(status).send(body);
    return;
  }
  if (error instanceof DatabaseUnavailableError) {
    request.log.warn({ err: error }, 'database unavailable');
    const { status, body } = errorBody('SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly');
    void reply.status(status).header('retry-after', String(unavailable_retry_after_s)).send(body);
    return;
  }
  const validation = (error as FastifyError).validation;
  if (validation) {
    const details = ajvDetails(validation as AjvError[], (error as FastifyError).validationContext);
    const { status, body } = errorBody('VALIDATION_ERROR', 'The request has invalid fields', details);
    void reply.status(status).send(body);
    return;
  }
  const statusCode = (error as FastifyError).statusCode ?? 500;
  if (statusCode >= 400 && statusCode < 500) {
    const code = fastify_client_codes[statusCode] ?? 'BAD_REQUEST';
    const { status, body } = errorBody(code, clientMessage(error as FastifyError));
    void reply.status(code === 'BAD_REQUEST' ? 400 : status).send(body);
    return;
  }
  request.log.error({ err: error }, 'unexpected error');
  const { status, body } = errorBody('INTERNAL', 'An unexpected error occurred; quote the request id to support');
  void reply.status(status).send({ ...body, requestId: request.id });
}

// Fastify's own 4xx messages are safe to show (no internals), but JSON parser messages echo input.
function clientMessage(error: FastifyError): string {
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) return 'Body is not valid JSON';
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return 'Body is empty but Content-Type is application/json';
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'Body is larger than 1 MiB';
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'Content-Type must be application/json';
  return error.message;
}
