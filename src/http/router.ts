import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import { type TProperties, Type } from 'typebox';
import { objectChecker } from '../domain/body-schema.ts';
import type { Refused } from '../domain/result.ts';

export type Router = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export const PathId = Type.Object({ id: Type.String({ description: 'a positive integer, at most 2^53 − 1' }) });

/** The optional `Idempotency-Key` of the POSTs that create (CONTRACT §3); its length is checked by the request itself. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: '1 to 255 characters: the same key and body within 24 h replays the first answer and creates nothing more' }),
  ),
});

export const sellerSecurity = [{ publicKey: [], privateKey: [] }];
export const operatorSecurity = [{ operator: [] }];

/** A schema that also admits null. */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** Serialises Dates as ISO 8601 UTC with milliseconds (CONTRACT §1); null stays null. */
export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** A string enum schema typed as its union (TypeBox's Union of mapped literals loses the literals). */
export const StringEnum = <T extends string>(values: readonly T[], options: { description?: string } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

/**
 * A request body of exactly these fields: an unknown one is a 400 naming it (CONTRACT §3), so a typo
 * is never silently dropped on an endpoint that moves money or changes settings.
 */
export const Fields = <P extends TProperties>(properties: P, options: { title?: string; description?: string } = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

/** The body of a POST that takes none: nothing, an empty body or `{}` (CONTRACT §3). */
export const NoBody = Fields({}, { title: 'EmptyBody', description: 'no body, an empty body or {}' });

const checkNoBody = objectChecker(NoBody, { depth: 1, maxItems: 0 });

/** NoBody checked by the handler (inside a keyed request, so that its 400 is kept): null, or the refusal naming each field. */
export function noBodyRefusal(body: unknown): Refused | null {
  const checked = checkNoBody(body);
  return checked.ok ? null : checked;
}
