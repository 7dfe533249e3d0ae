/**
 * Adyen's official descriptions (Checkout API v71 and the standard webhooks, both OpenAPI 3.1.0 in
 * JSON), read once, dereferenced by @apidevtools/json-schema-ref-parser and compiled by ajv's draft
 * 2020-12 validator + ajv-formats. We only find the operation (or webhook) a message belongs to and
 * hand ajv the schema the file gives for it; each check returns its violations as sentences.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import $RefParser from '@apidevtools/json-schema-ref-parser';
import type { ErrorObject, ValidateFunction } from 'ajv';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { type FoundOperation as GenericFound, operationFinder } from './openapi-operations.ts';

const repoFile = (name: string) => fileURLToPath(new URL(`../../spec/providers/${name}`, import.meta.url));
const sharedFile = (name: string) => fileURLToPath(new URL(`../../../shared/spec/providers/${name}`, import.meta.url));
/** The team's shared copies, when this checkout sits beside them. */
export const SHARED_ADYEN_CHECKOUT_FILE = sharedFile('adyen-checkout-v71.json');
export const SHARED_ADYEN_WEBHOOKS_FILE = sharedFile('adyen-webhooks-v1.json');
// The vendored copy (spec/providers/, like the API Pix file) when there is one, else the shared one.
export const ADYEN_CHECKOUT_FILE = existsSync(repoFile('adyen-checkout-v71.json')) ? repoFile('adyen-checkout-v71.json') : SHARED_ADYEN_CHECKOUT_FILE;
export const ADYEN_WEBHOOKS_FILE = existsSync(repoFile('adyen-webhooks-v1.json')) ? repoFile('adyen-webhooks-v1.json') : SHARED_ADYEN_WEBHOOKS_FILE;

export type Schema = Record<string, unknown>;
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}
type Content = Record<string, { schema?: Schema; examples?: Record<string, { value: unknown }> }>;
export interface Operation {
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content?: Content };
  responses: Record<string, { content?: Content }>;
}
type PathItem = Record<string, Operation> & { parameters?: Parameter[] };
type SecurityScheme = { type: string; name?: string; in?: string; scheme?: string };
export interface AdyenDocument {
  paths?: Record<string, PathItem>;
  webhooks?: Record<string, PathItem>;
  security?: Record<string, string[]>[];
  components: { examples?: Record<string, { value: unknown }>; securitySchemes?: Record<string, SecurityScheme> };
}

/**
 * OpenAPI 3.0's `nullable: true`, left in a file that says 3.1.0 (where it is no keyword): read as it
 * evidently means, and as Prism reads it, by admitting null (ADYEN_ERRATA).
 */
function admitNull(node: unknown, seen = new Set<object>()): void {
  if (typeof node !== 'object' || node === null || seen.has(node)) return;
  seen.add(node);
  const o = node as Schema;
  if (o.nullable === true) {
    if (typeof o.type === 'string') o.type = [o.type, 'null'];
    if (Array.isArray(o.enum) && !o.enum.includes(null)) o.enum = [...o.enum, null];
  }
  for (const v of Object.values(o)) admitNull(v, seen);
}

async function load(file: string): Promise<AdyenDocument> {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as AdyenDocument;
  // Both files refer only to themselves, without cycles (circular: false would fail here otherwise).
  const doc = (await $RefParser.dereference(raw, { resolve: { external: false }, dereference: { circular: false } })) as AdyenDocument;
  admitNull(doc);
  return doc;
}

export const adyenCheckoutDocument: AdyenDocument = await load(ADYEN_CHECKOUT_FILE);
export const adyenWebhooksDocument: AdyenDocument = await load(ADYEN_WEBHOOKS_FILE);

/**
 * Where the files cannot be taken literally. The one reading we apply is the first; the others are
 * the files' own examples failing their own schemas, left as written (no event our connector handles
 * is concerned). test/unit/adyen-spec.test.ts pins each.
 */
export const ADYEN_ERRATA = [
  'checkout: "nullable: true" (merchantRefundReason of PaymentRefundRequest and PaymentRefundResponse) is OpenAPI 3.0, no keyword in a 3.1.0 file, where null would be refused: read as admitting null, as Prism does',
  'webhooks: the examples of MANUAL_REVIEW_ACCEPT, MANUAL_REVIEW_REJECT, OFFER_CLOSED and POSTPONED_REFUND carry additionalData.hmacSignature (the first three also paymentMethodVariant), which NotificationAdditionalData (additionalProperties: false) does not define',
  'webhooks: the RECURRING_CONTRACT example carries additionalData.hmacSignature and recurring.shopperReference, which RecurringContractNotificationAdditionalData does not define',
  'webhooks: the ORDER_CLOSED example carries additionalData.order-1-pspReference, -paymentAmount, -success and -paymentMethod, which NotificationAdditionalData does not define',
  'webhooks: the PREARBITRATION_LOST example carries additionalData.metadata.type, metadata.link_id and metadata.company, which DisputesNotificationAdditionalData does not define',
] as const;
/** The failing examples of ADYEN_ERRATA and the additionalData fields each is faulted for. */
export const ADYEN_FAULTY_EXAMPLES: Record<string, string[]> = {
  'post-MANUAL_REVIEW_ACCEPT-manual_review_accept': ['hmacSignature', 'paymentMethodVariant'],
  'post-MANUAL_REVIEW_REJECT-manual_review_reject': ['hmacSignature', 'paymentMethodVariant'],
  'post-OFFER_CLOSED-offer_closed': ['hmacSignature', 'paymentMethodVariant'],
  'post-POSTPONED_REFUND-postponed_refund': ['hmacSignature'],
  'post-RECURRING_CONTRACT-recurring_contract': ['recurring.shopperReference', 'hmacSignature'],
  'post-ORDER_CLOSED-order_closed': ['order-1-pspReference', 'order-1-paymentAmount', 'order-1-success', 'order-1-paymentMethod'],
  'post-PREARBITRATION_LOST-prearbitration_lost': ['metadata.type', 'metadata.link_id', 'metadata.company'],
};

export type FoundOperation = GenericFound<Operation, Parameter>;

/** The Checkout operation for a method and a path relative to the v71 root, or why there is none. */
export const findAdyenOperation = operationFinder<Parameter, Operation>(adyenCheckoutDocument, 'the Checkout file');

// ajv and ajv-formats are CommonJS: under NodeNext their default imports are the module objects.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
// strict: false because the files carry keywords JSON Schema does not know (example, x-…, nullable).
// ajv-formats knows OpenAPI's int32, int64, double and byte as well as date-time and date.
const bodyAjv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
// Header, path and query values arrive as text; the file types them, so ajv coerces them.
const paramAjv = addFormats(new Ajv2020({ strict: false, allErrors: true, coerceTypes: true }));
const compiled = new Map<string, { validate: ValidateFunction; schema: Schema }>();

/** A cached validator for one schema of the files (or a function making it, called once); `key` names it. */
export function validatorFor(key: string, schema: Schema | (() => Schema), kind: 'body' | 'param'): { validate: ValidateFunction; schema: Schema } {
  const cached = compiled.get(key);
  if (cached) return cached;
  const made = typeof schema === 'function' ? schema() : schema;
  const entry = { validate: (kind === 'body' ? bodyAjv : paramAjv).compile(made), schema: made };
  compiled.set(key, entry);
  return entry;
}

/** The value a JSON pointer (ajv's instancePath, or a schemaPath without its "#") designates. */
function at(root: unknown, pointer: string): unknown {
  const parts = pointer.replace(/^#/, '').split('/').slice(1);
  return parts.reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], root);
}

/** Whether a oneOf branch says its `type` property may be `tag` (paymentMethod: scheme, ideal, …). */
function admitsType(branch: Schema, tag: string): boolean {
  const type = (branch.properties as Record<string, Schema> | undefined)?.type;
  if (type && (type.const === tag || (Array.isArray(type.enum) && type.enum.includes(tag)))) return true;
  return Array.isArray(branch.allOf) && branch.allOf.some((part) => admitsType(part as Schema, tag));
}

/**
 * A oneOf that fails (PaymentRequest.paymentMethod has about 80 branches) makes ajv report every
 * branch's errors. When the value has a `type`, only the branches admitting it are worth reading.
 */
function narrowOneOf(schema: Schema, data: unknown, errors: ErrorObject[]): ErrorObject[] {
  let out = errors;
  for (const e of errors) {
    if (e.keyword !== 'oneOf' || (e.params as { passingSchemas?: unknown }).passingSchemas) continue;
    const tag = (at(data, e.instancePath) as { type?: unknown } | undefined)?.type;
    const branches = at(schema, e.schemaPath);
    if (typeof tag !== 'string' || !Array.isArray(branches)) continue;
    const chosen = branches.flatMap((b, i) => (admitsType(b as Schema, tag) ? [`${e.schemaPath}/${i}/`] : []));
    const prefix = `${e.schemaPath}/`;
    out = out.filter((x) => x === e || !x.schemaPath.startsWith(prefix) || chosen.some((c) => x.schemaPath.startsWith(c)));
    if (chosen.length === 0) out = out.map((x) => (x === e ? { ...e, message: `${e.message}: no branch admits type "${tag}"` } : x));
    else out = out.filter((x) => x !== e || !out.some((y) => y !== e && y.schemaPath.startsWith(prefix)));
  }
  return out;
}

/** ajv's errors as sentences that say where and what: `request body /amount/value must be integer`. */
export function describeErrors(where: string, errors: ErrorObject[]): string[] {
  const sentences = errors.map((e) => {
    const at = e.instancePath ? ` ${e.instancePath}` : '';
    const p = e.params as Record<string, unknown>;
    const extra = p.additionalProperty ? ` (${p.additionalProperty})` : p.allowedValues ? ` (${JSON.stringify(p.allowedValues)})` : '';
    return `${where}${at} ${e.message}${extra}`;
  });
  return [...new Set(sentences)];
}

/** Violations of `data` against one schema of the files, cached under `key`. */
export function checkSchema(key: string, where: string, schema: Schema, data: unknown): string[] {
  const { validate, schema: compiledSchema } = validatorFor(key, schema, 'body');
  if (validate(data)) return [];
  return describeErrors(where, narrowOneOf(compiledSchema, data, validate.errors ?? []));
}

export type HeaderValues = Record<string, string | string[] | undefined>;
export interface AdyenRequest {
  method: string;
  /** Relative to the v71 root (`/payments`, `/payments/{psp}/refunds`); a query string here is read as well. */
  path: string;
  /** When given, the content type, the credentials (X-API-Key or Basic) and the header parameters are checked too. */
  headers?: HeaderValues;
  /** The parsed JSON body; undefined when there is none. */
  body?: unknown;
}
export interface AdyenResponse {
  method: string;
  path: string;
  status: number;
  body?: unknown;
  /** When given, it must be a media type the file documents for that status. */
  contentType?: string;
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
const mediaTypeOf = (value: string | undefined) => value?.split(';')[0]?.trim().toLowerCase();
const lowerKeys = (headers: HeaderValues) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), first(v)]));
const isEmpty = (body: unknown) => body === undefined || body === null || body === '';

function paramsSchema(params: Parameter[]): Schema {
  return {
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema ?? {}])),
    required: params.filter((p) => p.required).map((p) => p.name),
  };
}

/** Path parameters always, query parameters (none is declared on the payment operations) and, when given, header ones. */
function checkParameters(found: FoundOperation, search: string, headers: HeaderValues | undefined): string[] {
  const out: string[] = [];
  const given: Record<string, Record<string, string>> = { path: found.pathValues, query: {}, header: {} };
  for (const [name, value] of new URLSearchParams(search)) {
    if (!found.parameters.some((p) => p.in === 'query' && p.name === name)) out.push(`query parameter ${name} is not defined for ${found.name}`);
    else given.query![name] = value;
  }
  const sent = lowerKeys(headers ?? {});
  for (const p of found.parameters.filter((q) => q.in === 'header')) {
    const value = sent[p.name.toLowerCase()];
    if (value !== undefined) given.header![p.name] = value;
  }
  for (const place of headers ? (['path', 'query', 'header'] as const) : (['path', 'query'] as const)) {
    const params = found.parameters.filter((p) => p.in === place);
    const { validate } = validatorFor(`${found.name} ${place}`, () => paramsSchema(params), 'param');
    if (validate(given[place])) continue;
    for (const e of validate.errors ?? []) {
      const missing = (e.params as { missingProperty?: string }).missingProperty;
      const name = e.instancePath.slice(1).split('/')[0];
      out.push(e.keyword === 'required' && missing ? `${place} parameter ${missing} is required` : `${place} parameter ${name} ${e.message}`);
    }
  }
  return out;
}

/** Whether the credentials one of the operation's security alternatives asks for were sent. */
function checkSecurity(document: AdyenDocument, found: FoundOperation, headers: HeaderValues): string[] {
  if (found.security.length === 0 || found.security.some((s) => Object.keys(s).length === 0)) return [];
  const sent = lowerKeys(headers);
  const schemes = document.components.securitySchemes ?? {};
  const met = (name: string) => {
    const scheme = schemes[name];
    if (scheme?.type === 'apiKey' && scheme.in === 'header') return Boolean(sent[scheme.name!.toLowerCase()]);
    if (scheme?.type === 'http') return new RegExp(`^${scheme.scheme} \\S+`, 'i').test(sent.authorization ?? '');
    return false;
  };
  if (found.security.some((alternative) => Object.keys(alternative).every(met))) return [];
  const wanted = found.security.map((alternative) => Object.keys(alternative).join(' + ')).join(' or ');
  return [`${found.name} requires credentials (${wanted}: X-API-Key or Authorization: Basic), none was sent`];
}

function pickMedia(content: Content, given: string | undefined, where: string): { type: string; schema?: Schema } | string {
  const types = Object.keys(content);
  const type = given ?? (types.includes('application/json') ? 'application/json' : types[0]!);
  const media = content[type];
  return media ? { type, schema: media.schema } : `${where} content type ${given} is not one the file documents (${types.join(', ')})`;
}

/** Violations of one request to the Checkout API (method, path relative to the v71 root, headers, JSON body). */
export function checkAdyenRequest(request: AdyenRequest): string[] {
  const [pathname = '', search = ''] = request.path.split('?', 2);
  const found = findAdyenOperation(request.method, pathname);
  if (typeof found === 'string') return [found];
  const out = checkParameters(found, search, request.headers);
  if (request.headers) out.push(...checkSecurity(adyenCheckoutDocument, found, request.headers));
  const spec = found.operation.requestBody;
  if (!spec?.content) return isEmpty(request.body) ? out : [...out, `${found.name} takes no request body, one was sent`];
  // As written, no payment operation marks its requestBody required: an empty body is not a violation.
  if (isEmpty(request.body)) return spec.required ? [...out, `${found.name} requires a request body, none was sent`] : out;
  const picked = pickMedia(spec.content, request.headers && mediaTypeOf(lowerKeys(request.headers)['content-type']), 'request');
  if (typeof picked === 'string') return [...out, picked];
  if (!picked.schema) return out;
  return [...out, ...checkSchema(`${found.name} ${picked.type} request`, 'request body', picked.schema, request.body)];
}

/** Violations of one answer: the status must be documented for the operation, the body valid for it. */
export function checkAdyenResponse(response: AdyenResponse): string[] {
  const found = findAdyenOperation(response.method, response.path.split('?')[0]!);
  if (typeof found === 'string') return [found];
  const { responses } = found.operation;
  const key = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((k) => responses[k]);
  if (!key) return [`status ${response.status} is not documented for ${found.name} (the file has ${Object.keys(responses).join(', ')})`];
  const where = `response ${response.status}`;
  const content = responses[key]!.content;
  if (!content) return isEmpty(response.body) ? [] : [`${where} has no content in the file, yet a body came`];
  if (isEmpty(response.body)) return [`${where} has no body; the file documents ${Object.keys(content).join(', ')}`];
  const picked = pickMedia(content, mediaTypeOf(response.contentType), where);
  if (typeof picked === 'string') return [picked];
  if (!picked.schema) return [];
  return checkSchema(`${found.name} ${key} ${picked.type}`, `${where} body`, picked.schema, response.body);
}

/** The request body schema of the webhook for one event code (`/AUTHORISATION`, …), if the file has it. */
export function notificationSchema(eventCode: string): Schema | undefined {
  return adyenWebhooksDocument.webhooks?.[`/${eventCode}`]?.post?.requestBody?.content?.['application/json']?.schema;
}

/**
 * Violations of a whole body against the webhook `/${eventCode}` of the file, as it stands: for the
 * few webhooks that are no standard notification (ACH_NOTIFICATION_OF_CHANGE, …) or to check a body
 * against an event of your choosing.
 */
export function checkAdyenWebhook(eventCode: string, body: unknown): string[] {
  const schema = notificationSchema(eventCode);
  if (!schema) return [`eventCode ${eventCode} has no webhook in the file`];
  return checkSchema(`webhook ${eventCode}`, `notification ${eventCode}`, schema, body);
}

/**
 * Violations of a standard notification (`{ live, notificationItems: [{ NotificationRequestItem }] }`):
 * each item is checked, inside the envelope, against the webhook of its own eventCode. The file requires
 * neither `live` nor `notificationItems`; a body without items is reported all the same, since there is
 * no event to check it against.
 */
export function checkAdyenNotification(body: unknown): string[] {
  const items = (body as { notificationItems?: unknown } | null)?.notificationItems;
  if (!Array.isArray(items) || items.length === 0) return ['notification body has no notificationItems: no event code to check it against'];
  return items.flatMap((item, i) => {
    const eventCode = (item as { NotificationRequestItem?: { eventCode?: unknown } } | null)?.NotificationRequestItem?.eventCode;
    const where = `notification /notificationItems/${i}`;
    if (typeof eventCode !== 'string') return [`${where} has no NotificationRequestItem.eventCode`];
    if (!notificationSchema(eventCode)) return [`${where}: eventCode ${eventCode} has no webhook in the file`];
    const one = { ...(body as object), notificationItems: [item] };
    return checkAdyenWebhook(eventCode, one).map((v) => v.replace(' /notificationItems/0', ` /notificationItems/${i}`));
  });
}
