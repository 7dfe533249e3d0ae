import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../db/db.ts';
import { ApiError, type PublicErrorCode, validationError } from '../domain/errors.ts';
import { errorBody } from './error-bodies.ts';
import { type AjvError, ajvDetails } from './field-errors.ts';

// Long enough for the availability probe to have run again; short enough to retry soon.
export const unavailable_retry_after_s = 1;

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
    const refusal = validationError(ajvDetails(validation as AjvError[], (error as FastifyError).validationContext));
    const { status, body } = errorBody('VALIDATION_ERROR', refusal.message, refusal.details);
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
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'Body is too large (1 MiB at most; panel forms 16 KiB)';
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'Content-Type must be application/json';
  return error.message;
}

/** Fastify's errors before routing (a malformed URL such as `%FF`, a parameter over 100 characters): our shape, the URL not echoed. */
export function frameworkError(_error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = errorBody('BAD_REQUEST', 'The request URL is malformed (bad percent-encoding) or a path segment is too long');
  void reply.status(status).type('application/json; charset=utf-8').serializer(JSON.stringify).send(body);
}

const client_errors: Record<string, { status: number; title: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, title: 'Request Timeout', message: 'The request was not received in time' },
  HPE_HEADER_OVERFLOW: { status: 431, title: 'Request Header Fields Too Large', message: 'The request headers are too large' },
};

/**
 * Node's own refusals, before Fastify sees a request (a request too slow to arrive, headers too
 * large, unparsable HTTP): the same JSON shape, then the connection is closed.
 */
export function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  const known = client_errors[err.code ?? ''] ?? { status: 400, title: 'Bad Request', message: 'The request could not be parsed as HTTP' };
  const body = JSON.stringify({ error: known.title, message: known.message });
  socket.end(
    `HTTP/1.1 ${known.status} ${known.title}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
