/**
 * What an operation answers, for the OpenAPI document (CONTRACT §13): its success schemas and, per
 * error status, the exact `errorType` values (or `error` titles) it can send. A route lists its
 * errors by public code (domain/errors.ts, the closed list); `responses` groups them by status.
 *
 * Error bodies are sent by the one error handler with JSON.stringify (http/errors.ts), never through
 * these schemas, so they document and cannot reshape what is sent.
 */
import { type TSchema, Type } from 'typebox';
import type { PublicErrorCode } from '../domain/errors.ts';
import { PUBLIC_ERRORS } from './error-bodies.ts';

/** A named example of a request body: `content['application/json'].examples[name]`. */
export interface BodyExample {
  summary: string;
  description?: string;
  value: unknown;
}

declare module 'fastify' {
  interface FastifySchema {
    /** Named request body examples, for the document only (http/openapi-document.ts); the gateway must accept each (test/integration/openapi.test.ts). */
    bodyExamples?: Record<string, BodyExample>;
  }
}

export const FieldError = Type.Object(
  { field: Type.String({ description: 'the field, dotted (`items.0.title`), or `body`' }), message: Type.String() },
  { title: 'FieldError' },
);

/**
 * Every error body (http/error-bodies.ts errorBody): `error` (a title) or `errorType` (an identifier),
 * always `message`. Property order here is the order sent.
 */
export const ErrorBody = Type.Object(
  {
    error: Type.Optional(
      Type.String({ description: 'a short title, on errors without an identifier (401, 403 of another account, 404, 400 of a bad id, 500…)' }),
    ),
    message: Type.String({ description: 'for people; never echoes the request' }),
    errorType: Type.Optional(Type.String({ description: 'the machine identifier, on errors that have one' })),
    details: Type.Optional(Type.Array(FieldError, { description: 'every field refused, at once' })),
    requestId: Type.Optional(Type.String({ description: 'on a 500: quote it to support (it is in the log)' })),
  },
  { title: 'Error', description: 'Every error answer has this shape (Content-Type: application/json; charset=utf-8).' },
);

/** A public code, or a code and what it means for this operation. */
export type ErrorEntry = PublicErrorCode | readonly [PublicErrorCode, string];

const MEANING: Record<PublicErrorCode, string> = {
  VALIDATION_ERROR: 'a field breaks its rule or is unknown; `details` names each one',
  INVALID_PIX_KEY: '`pixKey` is not a valid key of its `pixKeyType`; `details` names `pixKey`',
  BAD_REQUEST: 'the request is malformed',
  UNAUTHORIZED: 'missing or wrong credentials',
  FORBIDDEN: 'the resource belongs to another account',
  API_WITHDRAWAL_DISABLED_GLOBALLY: 'cashout through the API is disabled for this account',
  TRANSFER_NOT_ALLOWED: 'transfers are not allowed for this account',
  NOT_FOUND: 'no such resource',
  INVALID_TRANSITION: "the resource's status does not allow this",
  IDEMPOTENCY_KEY_IN_USE: 'a request with this Idempotency-Key is still being processed',
  PAYLOAD_TOO_LARGE: 'the body is over 1 MiB',
  UNSUPPORTED_MEDIA_TYPE: 'a body whose Content-Type is not application/json',
  IDEMPOTENCY_KEY_REUSED: 'this Idempotency-Key was used within 24 h with another body',
  MINIMUM_VALUE: 'the amount is below 100.00 reais, or its fees reach it',
  MAXIMUM_VALUE: 'the amount is above 100000.00 reais',
  INSUFFICIENT_BALANCE: 'the available balance does not cover the amount',
  REFUND_EXCEEDS_AMOUNT: 'the amount is above what is left to refund; `details` names `amount`',
  RATE_LIMITED: 'too many requests; retry after `Retry-After` seconds',
  INTERNAL: 'an unexpected failure; `requestId` finds it in the log',
  PROVIDER_ERROR: 'a payment provider failed or refused in a way the seller cannot fix; nothing was created',
  SERVICE_UNAVAILABLE: 'the database is unreachable; retry after `Retry-After` seconds',
};

/** What every seller operation can answer: its keys, its rate limits, an outage, a failure. */
export const SELLER_ERRORS: readonly ErrorEntry[] = [
  ['UNAUTHORIZED', 'missing or wrong `X-Api-Public-Key` / `X-Api-Private-Key`'],
  ['RATE_LIMITED', 'too many requests for this API key, or too many failed authentications from this address; retry after `Retry-After` seconds'],
  'INTERNAL',
  ['SERVICE_UNAVAILABLE', 'the database is unreachable; retry after `Retry-After` seconds (with the same Idempotency-Key, if any)'],
];

/** What every operator operation can answer. */
export const OPERATOR_ERRORS: readonly ErrorEntry[] = [
  ['UNAUTHORIZED', 'missing or wrong `Authorization: Bearer <ADMIN_TOKEN>`'],
  ['RATE_LIMITED', 'too many failed authentications from this address; retry after `Retry-After` seconds'],
  'INTERNAL',
  'SERVICE_UNAVAILABLE',
];

/** Every method but GET: the body is parsed, whatever the operation does with it. */
export const BODY_ERRORS: readonly ErrorEntry[] = [
  ['VALIDATION_ERROR', 'the body is not valid JSON, or holds text that cannot be stored (a NUL character, a lone surrogate)'],
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
];

/** An operation whose body must be absent, empty or `{}`. */
export const NO_FIELDS: readonly ErrorEntry[] = [['VALIDATION_ERROR', 'the body has a field: this operation takes none']];

/** An integer id in the path. */
export const PATH_ID: readonly ErrorEntry[] = [['BAD_REQUEST', '`id` is not a positive integer of at most 2^53 − 1, or the URL is malformed']];

/** A seller's own resource by id: another account's is 403, an unknown id 404 (the spec's rule). */
export const owned = (what: string): readonly ErrorEntry[] => [
  ...PATH_ID,
  ['FORBIDDEN', `the ${what} belongs to another account`],
  ['NOT_FOUND', `no ${what} has this id`],
];

/** An operator's resource by id. */
export const existing = (what: string): readonly ErrorEntry[] => [...PATH_ID, ['NOT_FOUND', `no ${what} has this id`]];

/** `limit` and `cursor` (http/paging.ts). */
export const PAGE_ERRORS: readonly ErrorEntry[] = [
  ['VALIDATION_ERROR', '`limit` is not an integer from 1 to 100, or `cursor` is not a positive integer'],
  ['BAD_REQUEST', '`cursor` is above 2^53 − 1'],
];

/** `Idempotency-Key` (CONTRACT §3); a refusal is stored and replayed under its key like a success. */
export const IDEMPOTENCY_ERRORS: readonly ErrorEntry[] = [
  ['VALIDATION_ERROR', 'the Idempotency-Key is empty or longer than 255 characters'],
  'IDEMPOTENCY_KEY_IN_USE',
  'IDEMPOTENCY_KEY_REUSED',
];

const pascal = (code: string) =>
  code
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_m, _sep, c: string) => c.toUpperCase())
    .replace(/Error$/, '');

/** One schema per public code, `InsufficientBalanceError`…: the Error shape with that identifier or title. */
const CODE_SCHEMAS = Object.fromEntries(
  (Object.keys(PUBLIC_ERRORS) as PublicErrorCode[]).map((code) => {
    const spec = PUBLIC_ERRORS[code];
    const narrowing =
      'title' in spec
        ? Type.Object({ error: Type.Unsafe({ type: 'string', enum: [spec.title] }) })
        : Type.Object({ errorType: Type.Unsafe({ type: 'string', enum: [code] }) });
    return [code, Type.Unsafe({ title: `${pascal(code)}Error`, description: MEANING[code], allOf: [ErrorBody, narrowing] })];
  }),
) as unknown as Record<PublicErrorCode, TSchema>;

/** The response schema of one error status: its description lists what each code means here. */
function statusSchema(entries: readonly (readonly [PublicErrorCode, string])[]): TSchema {
  const lines = new Map<PublicErrorCode, string[]>();
  for (const [code, meaning] of entries) {
    const said = lines.get(code) ?? [];
    if (!said.includes(meaning)) said.push(meaning);
    lines.set(code, said);
  }
  const label = (code: PublicErrorCode) => {
    const spec = PUBLIC_ERRORS[code];
    return 'title' in spec ? `\`error: "${spec.title}"\`` : `\`${code}\``;
  };
  const description = [...lines].map(([code, meanings]) => `- ${label(code)}: ${meanings.join('; ')}`).join('\n');
  const schemas = [...lines.keys()].map((code) => CODE_SCHEMAS[code]);
  // allOf of one: a place for this operation's description beside the shared schema (unwrapped in the document).
  return Type.Unsafe(schemas.length === 1 ? { description, allOf: schemas } : { description, oneOf: schemas });
}

/**
 * The `response` of a route schema: its success schemas, then one schema per error status with the
 * codes `errors` lists (duplicates merged, a code's meanings joined). Typed as the success map, so
 * the handler's answer is checked against it.
 */
export function responses<S extends Record<number, TSchema>>(success: S, errors: readonly ErrorEntry[]): S {
  const byStatus = new Map<number, [PublicErrorCode, string][]>();
  for (const entry of errors) {
    const [code, meaning] = typeof entry === 'string' ? [entry as PublicErrorCode, MEANING[entry as PublicErrorCode]] : entry;
    const status = PUBLIC_ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), [code, meaning]]);
  }
  const out: Record<number, TSchema> = { ...success };
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) out[status] = statusSchema(byStatus.get(status)!);
  return out as S;
}
