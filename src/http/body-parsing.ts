import type { FastifyInstance } from 'fastify';
import { ApiError, validationError } from '../domain/errors.ts';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why PostgreSQL text could not hold `s` faithfully, or null. */
function textProblem(s: string): string | null {
  if (s.includes('\0')) return 'must not contain a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(s)) return 'must be well-formed Unicode (a lone \\uD800–\\uDFFF surrogate is not)';
  return null;
}

type BodyPart = { kind: 'string'; text: string; path: string } | { kind: 'key'; key: string; child: unknown; path: string };

/** The strings and keys of a parsed body, depth first, each with its dotted path. Iterative: no depth overflows it. */
function* bodyParts(value: unknown): Generator<BodyPart> {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') yield { kind: 'string', text: v, path };
    else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        const childPath = path ? `${path}.${key}` : key;
        yield { kind: 'key', key, child, path: childPath };
        stack.push([child, childPath]);
      }
    }
  }
}

/** The first string (value or key) PostgreSQL cannot store as sent, with its dotted path. */
function badTextField(value: unknown): { field: string; message: string } | null {
  for (const part of bodyParts(value)) {
    const message = textProblem(part.kind === 'string' ? part.text : part.key);
    if (message) return { field: part.path || 'body', message };
  }
  return null;
}

const invalidBody = (message: string) => validationError([{ field: 'body', message }]);

const poisoning = 'must not be a "__proto__" key, nor a "constructor" holding a "prototype" (prototype poisoning)';

/** The dotted path of the first key secure-json-parse refuses, in what plain JSON.parse made of the body. */
function poisonedField(value: unknown): string | null {
  for (const part of bodyParts(value)) {
    if (part.kind !== 'key') continue;
    if (part.key === '__proto__') return part.path;
    const { child } = part;
    if (part.key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype'))
      return `${part.path}.prototype`;
  }
  return null;
}

/**
 * JSON only, and every refusal a 400 naming what is wrong (CONTRACT §10). A body that is empty
 * (whatever its Content-Type) is no body at all: a POST that takes none accepts it (CONTRACT §3),
 * and one that takes fields then names each missing field.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  // Fastify's own parser: secure against prototype poisoning; its errors are reworded below.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const body = raw as string;
    if (body.trim() === '') return done(null, undefined);
    jsonParser(request, body, (err, parsed) => {
      if (err) return done(jsonError(body), undefined);
      // PostgreSQL text cannot hold U+0000, and a lone surrogate would be stored as U+FFFD: refused
      // here, naming the field. Only escapes (\u0000, \uD8xx…) can produce them.
      const bad = /\\u(0000|d[89a-f])/i.test(body) ? badTextField(parsed) : null;
      if (bad) return done(new ApiError('VALIDATION_ERROR', `Invalid ${bad.field}: ${bad.message}`, [bad]), undefined);
      done(null, parsed);
    });
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    if ((body as string).length === 0) return done(null, undefined);
    done(new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json'), undefined);
  });
  // What no parser saw (no Content-Type, no body) reads as an empty object, like an empty body.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'DELETE') request.body = {};
  });
}

// Parser messages would echo the input: each is replaced by a fixed one. Fastify's parser says
// only "invalid", so a body that plain JSON.parse accepts was refused for prototype poisoning: the
// key is found and named (plain JSON.parse makes "__proto__" an own key, setting no prototype).
function jsonError(body: string): ApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return invalidBody('is not valid JSON');
  }
  const field = poisonedField(parsed) ?? 'body';
  return new ApiError('VALIDATION_ERROR', `Invalid ${field}: ${poisoning}`, [{ field, message: poisoning }]);
}
