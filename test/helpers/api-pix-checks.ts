/**
 * Requests, answers and webhook callbacks checked against the API Pix file: each function returns
 * the violations as sentences (empty when the file accepts it).
 */
import type { ErrorObject } from 'ajv';
import {
  apiPixDocument,
  describe,
  type FoundOperation,
  findOperation,
  forDirection,
  type MediaType,
  type Parameter,
  type Schema,
  validatorFor,
} from './api-pix-document.ts';

export type HeaderValues = Record<string, string | string[] | undefined>;
export interface ApiPixRequest {
  method: string;
  /** Relative to the API root (`/cob/…`); a query string here is read as well. */
  path: string;
  query?: Record<string, string | string[] | undefined>;
  /** When given, the content type and the OAuth2 bearer token are checked too. */
  headers?: HeaderValues;
  /** The parsed JSON body; undefined when there is none. */
  body?: unknown;
}
export interface ApiPixResponse {
  method: string;
  path: string;
  status: number;
  body?: unknown;
  /** When given, it must be a media type the file documents for that status. */
  contentType?: string;
}

const mediaTypeOf = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(';')[0]?.trim().toLowerCase();
const lowerKeys = (headers: HeaderValues) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

function splitPath(path: string, query: ApiPixRequest['query']): { pathname: string; values: Map<string, string[]> } {
  const [pathname = '', search = ''] = path.split('?', 2);
  const values = new Map<string, string[]>();
  for (const [k, v] of new URLSearchParams(search)) values.set(k, [...(values.get(k) ?? []), v]);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) values.set(k, [...(values.get(k) ?? []), ...[v].flat()]);
  return { pathname, values };
}

function paramsSchema(params: Parameter[]): Schema {
  return {
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema ?? {}])),
    required: params.filter((p) => p.required).map((p) => p.name),
  };
}

function checkParameters(found: FoundOperation, queryValues: Map<string, string[]>): string[] {
  const out: string[] = [];
  // The file declares no header or cookie parameters; its one header rule is the OAuth2 token.
  for (const place of ['path', 'query'] as const) {
    const params = found.parameters.filter((p) => p.in === place);
    const given: Record<string, string> = {};
    if (place === 'path') Object.assign(given, found.pathValues);
    for (const [name, values] of place === 'query' ? queryValues : []) {
      const param = params.find((p) => p.name === name);
      if (!param) out.push(`query parameter ${name} is not defined for ${found.name}`);
      else if (values.length > 1 && param.schema?.type !== 'array') out.push(`query parameter ${name} is given ${values.length} times`);
      else given[name] = values[0]!;
    }
    const validate = validatorFor(`${found.name} ${place}`, () => paramsSchema(params), 'param');
    if (!validate(given)) out.push(...(validate.errors ?? []).map((e) => paramSentence(place, e)));
  }
  return out;
}

function paramSentence(place: string, e: ErrorObject): string {
  const missing = (e.params as { missingProperty?: string }).missingProperty;
  if (e.keyword === 'required' && missing) return `${place} parameter ${missing} is required`;
  return describe(`${place} parameter ${e.instancePath.slice(1).split('/')[0]}`, [{ ...e, instancePath: '' }])[0]!;
}

function checkSecurity(found: FoundOperation, headers: HeaderValues): string[] {
  if (found.security.length === 0 || found.security.some((s) => Object.keys(s).length === 0)) return [];
  const auth = [lowerKeys(headers).authorization].flat()[0] ?? '';
  return /^Bearer \S+/i.test(auth) ? [] : [`${found.name} requires an OAuth2 bearer token (Authorization: Bearer …), none was sent`];
}

function pickMedia(content: Record<string, MediaType>, given: string | undefined, where: string): { type: string; media: MediaType } | string {
  const types = Object.keys(content);
  const type = given ?? (types.includes('application/json') ? 'application/json' : types[0]!);
  const media = content[type];
  return media ? { type, media } : `${where} content type ${given} is not one the file documents (${types.join(', ')})`;
}

function checkBody(key: string, where: string, schema: Schema | undefined, body: unknown, direction: 'request' | 'response'): string[] {
  if (!schema) return [];
  const validate = validatorFor(`${key} ${direction}`, () => forDirection(schema, direction), 'body');
  return validate(body) ? [] : describe(where, validate.errors);
}

const isEmpty = (body: unknown) => body === undefined || body === null || body === '';

/** Violations of one request to the API (method, path relative to the API root, query, headers, JSON body). */
export function checkApiPixRequest(request: ApiPixRequest): string[] {
  const { pathname, values } = splitPath(request.path, request.query);
  const found = findOperation(request.method, pathname);
  if (typeof found === 'string') return [found];
  const out = checkParameters(found, values);
  if (request.headers) out.push(...checkSecurity(found, request.headers));
  const spec = found.operation.requestBody;
  if (!spec?.content) {
    if (!isEmpty(request.body)) out.push(`${found.name} takes no request body, one was sent`);
    return out;
  }
  if (isEmpty(request.body)) {
    if (spec.required) out.push(`${found.name} requires a request body, none was sent`);
    return out;
  }
  const picked = pickMedia(spec.content, request.headers && mediaTypeOf(lowerKeys(request.headers)['content-type']), 'request');
  if (typeof picked === 'string') return [...out, picked];
  return [...out, ...checkBody(`${found.name} ${picked.type}`, 'request body', picked.media.schema, request.body, 'request')];
}

/** Violations of one answer: the status must be documented for the operation, the body valid for it. */
export function checkApiPixResponse(response: ApiPixResponse): string[] {
  const found = findOperation(response.method, response.path.split('?')[0]!);
  if (typeof found === 'string') return [found];
  const { responses } = found.operation;
  const key = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((k) => responses[k]);
  if (!key) return [`status ${response.status} is not documented for ${found.name} (the file has ${Object.keys(responses).join(', ')})`];
  const where = `response ${response.status}`;
  const content = responses[key]!.content;
  if (!content) return isEmpty(response.body) ? [] : [`${where} has no content in the file, yet a body came`];
  if (isEmpty(response.body)) return [`${where} has no body; the file documents ${Object.keys(content).join(', ')}`];
  const picked = pickMedia(content, response.contentType && mediaTypeOf(response.contentType), where);
  if (typeof picked === 'string') return [picked];
  return checkBody(`${found.name} ${key} ${picked.type}`, `${where} body`, picked.media.schema, response.body, 'response');
}

/**
 * The notification the PSP POSTs to `{webhookUrl}/pix`: the file describes it as the callback
 * `listaPix` of PUT /webhook/{chave} (request body WebhookPixBody), not under `webhooks`.
 */
const callback = apiPixDocument.paths['/webhook/{chave}']!.put!.callbacks!.listaPix!['{$request.body#/webhookUrl}/pix']!.post!;
export const API_PIX_CALLBACK_SCHEMA: Schema = callback.requestBody!.content!['application/json']!.schema!;

/** Violations of a webhook callback body (`{ "pix": [ … ] }`). */
export function checkApiPixCallback(body: unknown): string[] {
  return checkBody('callback listaPix', 'callback body', API_PIX_CALLBACK_SCHEMA, body, 'request');
}
