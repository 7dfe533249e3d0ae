/**
 * Fastify's schema violations (ajv, verbose) worded for people, one per field, every field at once,
 * in the same words as the request bodies checked by src/domain/body-schema.ts: a schema's
 * `description` states its rule and a violation reads "must be <description>"; an enum lists its
 * values; a bound names the bound; a field the schema does not know is named as such.
 */
import type { FieldError } from '../domain/errors.ts';

export interface AjvError {
  instancePath?: string;
  keyword: string;
  params?: Record<string, unknown>;
  message?: string;
  /** With ajv's `verbose`: the schema object the keyword belongs to. */
  parentSchema?: { description?: unknown; properties?: Record<string, unknown> };
}

const ARTICLE: Record<string, string> = { integer: 'an', object: 'an', array: 'an', null: '' };
const typeName = (type: unknown): string =>
  [type]
    .flat()
    .map((t) => `${ARTICLE[String(t)] ?? 'a'} ${String(t)}`.trim())
    .join(' or ');

const BOUNDS: Record<string, (limit: unknown) => string> = {
  maximum: (n) => `must be at most ${n}`,
  minimum: (n) => `must be at least ${n}`,
  exclusiveMaximum: (n) => `must be less than ${n}`,
  exclusiveMinimum: (n) => `must be more than ${n}`,
  maxLength: (n) => `must be at most ${n} characters`,
  minLength: (n) => `must be at least ${n} characters`,
  maxItems: (n) => `must have at most ${n} elements`,
  minItems: (n) => `must have at least ${n} elements`,
  maxProperties: (n) => `must have at most ${n} fields`,
};

function wording(e: AjvError): string {
  const p = e.params ?? {};
  if (e.keyword === 'enum') return `must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
  if (e.keyword === 'const') return `must be ${JSON.stringify(p.allowedValue)}`;
  if (e.keyword === 'required') return 'is required';
  if (e.keyword === 'additionalProperties') {
    const known = Object.keys(e.parentSchema?.properties ?? {});
    return known.length > 0 ? `is not a known field (known: ${known.join(', ')})` : 'is not a known field: send no fields here';
  }
  const description = e.parentSchema?.description;
  if (typeof description === 'string' && e.keyword !== 'type') return `must be ${description}`;
  if (e.keyword === 'type') return typeof description === 'string' ? `must be ${description}` : `must be ${typeName(p.type)}`;
  if (e.keyword in BOUNDS) return BOUNDS[e.keyword]!(p.limit);
  if (e.keyword === 'format') return `must be a valid ${String(p.format)}`;
  if (e.keyword === 'uniqueItems') return 'must not repeat an element';
  return e.message ?? 'is invalid';
}

const unescapePointer = (part: string): string => part.replace(/~1/g, '/').replace(/~0/g, '~');

/** "/customer/email" → "customer.email"; a missing or unknown field is named itself. */
function fieldOf(e: AjvError, context: string | undefined): string {
  const path = (e.instancePath ?? '').split('/').slice(1).map(unescapePointer);
  const p = e.params ?? {};
  if (e.keyword === 'required' && typeof p.missingProperty === 'string') path.push(p.missingProperty);
  if (e.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string') path.push(p.additionalProperty);
  const field = path.join('.');
  return field || (context === 'body' || !context ? 'body' : context);
}

/** What a union adds to its branches' own errors ("must match a schema in anyOf", a nullable's "must be null"). */
const unionEcho = (e: AjvError): boolean => e.keyword === 'anyOf' || (e.keyword === 'type' && e.params?.type === 'null');

export function ajvDetails(errors: AjvError[], context?: string): FieldError[] {
  const byField = new Map<string, string>();
  for (const e of errors) {
    const field = fieldOf(e, context);
    if (!byField.has(field) && !unionEcho(e)) byField.set(field, wording(e));
  }
  // A union whose every branch failed only through the echoes still names its field.
  if (byField.size === 0 && errors.length > 0) byField.set(fieldOf(errors[0]!, context), 'is invalid');
  return [...byField].map(([field, message]) => ({ field, message }));
}
