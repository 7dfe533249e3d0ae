/**
 * Runs a request body's TypeBox schema and words its violations as `{ field, message }` with dotted
 * paths (`items.0.title`), one per field, every field at once. The POSTs that take an
 * Idempotency-Key run it inside their idempotent request rather than in Fastify's preValidation, so
 * that a 400 is stored and replayed under its key like any other refusal.
 *
 * Messages: a schema's `description` states its rule ("an integer from 1 to 12"), and every
 * violation of that schema is worded "must be <description>", so the OpenAPI document and the
 * errors say the same thing. Without a description the violated keyword is worded.
 */
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import { Settings } from 'typebox/system';
import type { FieldError } from './errors.ts';
import { invalid, ok, type Result } from './result.ts';

type Obj = Record<string, unknown>;

/** What the schema sees of a body: JSON data, as JSON.parse could have produced it. */
export interface BodyLimits {
  /** The level of the deepest values the schema judges (`amount` is 1, `items.0.title` 3): objects there are not walked. */
  depth: number;
  /** The largest array the schema accepts; longer ones are cut to one element more. */
  maxItems: number;
}

export interface CheckedBody<T> {
  /** The body as judged. Only the paths no error names (nor any error below them) hold T's types. */
  data: T;
  errors: FieldError[];
}

/** JSON objects only: arrays, class instances and objects with an exotic prototype are refused. */
export function isPlainObject(value: unknown): value is Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Own data properties only: a getter is never run, and an inherited value never read. */
function own(obj: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(obj, key);
  return descriptor && 'value' in descriptor ? descriptor.value : undefined;
}

// Stands for a value that is no JSON data (a Date, a Map) or that lies deeper than the schema
// looks: every schema refuses it by type, as it would have refused the value itself.
const OPAQUE = Symbol('opaque');

/**
 * A copy of `value` the schema can judge safely: objects without a prototype (a polluted
 * Object.prototype or a `__proto__` key supplies nothing to the schema's `in` checks), -0 as 0, holes
 * as undefined, and bounded by `limits`, so a 1 MiB body nested or repeated costs what the schema needs.
 */
function jsonData(value: unknown, depth: number, limits: BodyLimits): unknown {
  if (typeof value === 'number') return value === 0 ? 0 : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth < 0) return OPAQUE;
  if (Array.isArray(value)) {
    const length = Math.min(value.length, limits.maxItems + 1);
    return Array.from({ length }, (_, i) => jsonData(own(value, String(i)), depth - 1, limits));
  }
  if (!isPlainObject(value)) return OPAQUE;
  const copy: Obj = Object.create(null) as Obj;
  for (const key of Object.keys(value)) {
    const v = own(value, key);
    if (v !== undefined) copy[key] = jsonData(v, depth - 1, limits);
  }
  return copy;
}

const ARTICLE: Record<string, string> = { integer: 'an', object: 'an', array: 'an', null: '' };
const typeName = (type: string): string => `${ARTICLE[type] ?? 'a'} ${type}`.trim();

const unescapePointer = (part: string): string => part.replace(/~1/g, '/').replace(/~0/g, '~');

/** The sub-schema a JSON pointer such as `#/properties/items/items/properties/title` names. */
function schemaAt(root: TSchema, pointer: string): Obj | undefined {
  let at: unknown = root;
  for (const part of pointer.split('/').slice(1)) {
    at = typeof at === 'object' && at !== null ? (at as Obj)[unescapePointer(part)] : undefined;
  }
  return typeof at === 'object' && at !== null ? (at as Obj) : undefined;
}

/** An unknown field of an object that allows none beyond its own (`additionalProperties: false`). */
const isUnknownField = (e: TLocalizedValidationError): boolean => e.keyword === 'boolean' && e.schemaPath.endsWith('/additionalProperties');

function wording(root: TSchema, e: TLocalizedValidationError): string {
  if (isUnknownField(e)) {
    const parent = schemaAt(root, e.schemaPath.slice(0, -'/additionalProperties'.length));
    const known = Object.keys((parent?.properties as Obj | undefined) ?? {});
    return known.length > 0 ? `is not a known field (known: ${known.join(', ')})` : 'is not a known field: send no fields here';
  }
  const description = schemaAt(root, e.schemaPath)?.description;
  if (e.keyword === 'enum') return `must be one of ${e.params.allowedValues.join(', ')}`;
  if (typeof description === 'string') return `must be ${description}`;
  if (e.keyword === 'type') return `must be ${[e.params.type].flat().map(typeName).join(' or ')}`;
  return e.message;
}

/**
 * What a union adds to its branches' own errors: "must match a schema in anyOf", and the null
 * branch's "must be null" of a nullable field, which would only repeat the other branch's error.
 */
const unionEcho = (e: TLocalizedValidationError): boolean => e.keyword === 'anyOf' || (e.keyword === 'type' && e.params.type === 'null');

const fieldOf = (instancePath: string): string => instancePath.split('/').slice(1).map(unescapePointer).join('.') || 'body';

/** One message per field, in the order the schema reports them. */
function details(root: TSchema, errors: TLocalizedValidationError[]): FieldError[] {
  const byField = new Map<string, string>();
  const lengthRefused: string[] = [];
  for (const e of errors) {
    const field = fieldOf(e.instancePath);
    if (e.keyword === 'required') {
      for (const key of e.params.requiredProperties) {
        const missing = field === 'body' ? key : `${field}.${key}`;
        if (!byField.has(missing)) byField.set(missing, 'is required');
      }
    } else if (e.keyword === 'additionalProperties') {
      // The object's own error repeats its unknown fields', each named where it is.
    } else if (!byField.has(field) && !unionEcho(e)) {
      byField.set(field, wording(root, e));
    }
    if (e.keyword === 'maxItems' || e.keyword === 'minItems') lengthRefused.push(`${field}.`);
  }
  // An array of the wrong length is the one useful error; its elements' errors would bury it.
  return [...byField].filter(([field]) => !lengthRefused.some((prefix) => field.startsWith(prefix))).map(([field, message]) => ({ field, message }));
}

/** Compiles `schema` once; the checker never throws, whatever `body` is. */
export function bodyChecker<S extends TSchema>(schema: S, limits: BodyLimits): (body: unknown) => CheckedBody<Static<S>> {
  const validator = Compile(schema);
  return (body) => {
    const data = jsonData(body, limits.depth - 1, limits) as Static<S>;
    if (validator.Check(data)) return { data, errors: [] };
    // TypeBox keeps 8 errors by default, a process-wide setting: lifted for this call only. The
    // limits above bound how many a body can have.
    const { maxErrors } = Settings.Get();
    Settings.Set({ maxErrors: Number.MAX_SAFE_INTEGER });
    try {
      return { data, errors: details(schema, validator.Errors(data)) };
    } finally {
      Settings.Set({ maxErrors });
    }
  };
}

/** bodyChecker for a body that must be a JSON object: its data once every field passes, or the 400 naming each field. */
export function objectChecker<S extends TSchema>(schema: S, limits: BodyLimits): (body: unknown) => Result<Static<S>> {
  const check = bodyChecker(schema, limits);
  return (body) => {
    if (!isPlainObject(body)) return invalid([{ field: 'body', message: 'must be an object' }]);
    const { data, errors } = check(body);
    return errors.length > 0 ? invalid(errors) : ok(data);
  };
}
