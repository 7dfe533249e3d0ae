import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import { type TProperties, Type } from 'typebox';

export type Router = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * Every error body (built by the one error handler, domain/errors.ts): `error` (a title) or
 * `errorType` (an identifier), always `message`. Property order here is the order sent.
 */
export const ErrorBody = Type.Object({
  error: Type.Optional(Type.String({ description: 'short title, for errors without an identifier' })),
  message: Type.String(),
  errorType: Type.Optional(Type.String({ description: 'machine identifier' })),
  details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  requestId: Type.Optional(Type.String()),
});
export const errorResponses = { '4xx': ErrorBody };

export const PathId = Type.Object({ id: Type.String({ description: 'positive integer id' }) });

export const sellerSecurity = [{ publicKey: [], privateKey: [] }];
export const operatorSecurity = [{ operator: [] }];

/** Serialises Dates as ISO 8601 UTC with milliseconds (CONTRACT §1); null stays null. */
/** A schema that also admits null. */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** A string enum schema typed as its union (TypeBox's Union of mapped literals loses the literals). */
export const StringEnum = <T extends string>(values: readonly T[], options: { description?: string } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

/**
 * A request body of exactly these fields: an unknown one is a 400 naming it (CONTRACT §3), so a typo
 * is never silently dropped on an endpoint that moves money or changes settings.
 */
export const Fields = <P extends TProperties>(properties: P, options: { description?: string } = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

/** The body of a POST that takes none: nothing, an empty body or `{}` (CONTRACT §3). */
export const NoBody = Fields({}, { description: 'no body, an empty body or {}' });
