/**
 * The @fastify/swagger options of the served OpenAPI document (GET /openapi.json, CONTRACT §13):
 * what no route says (servers, license, tags, how money and errors work), the routes' request
 * examples put where OpenAPI wants them, and every titled schema hoisted once into
 * `components.schemas` (the SDK's type names) and `$ref`ed from where it is used.
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';

type Json = Record<string, unknown>;

const description = `Payment gateway for Brazilian sellers: sales by PIX, credit card, debit card and boleto; transactions;
balance and statement; cashout to a PIX key; webhooks, postbacks and the delivery log; the operator's API.

**Authentication.** Seller operations take \`X-Api-Public-Key\` and \`X-Api-Private-Key\`; operator operations take
\`Authorization: Bearer <ADMIN_TOKEN>\`. Credentials are checked before anything else.

**Money.** Integer cents inside; each area has the spec's unit: the balance, the statement, refunds and the transaction
read give **numbers of cents**; the sale creation response gives **strings of cents**; a cashout request takes
**reais** (a number or a string such as \`"150.50"\`) and its responses give **strings of reais with two decimals**.

**Errors.** Every error body is JSON with \`message\` and either \`errorType\` (an identifier) or \`error\` (a title);
each operation lists the statuses and identifiers it can answer. A 429 or 503 carries \`Retry-After\`. Before a
request reaches an operation the server may also answer 408 (a client too slow to send it) or 431 (headers too large).

**Idempotency.** \`POST /api/sales\`, \`POST /api/public/cashout\`, \`POST /api/transactions/{id}/refund\` and
\`POST /api/signing-secret/rotate\` take an
optional \`Idempotency-Key\` (1–255 characters, kept 24 h per seller and operation): the same key and body replays
the first answer, status included, with \`Idempotent-Replayed: true\`.

**Lists** are newest first: pass the \`nextCursor\` of a page as \`cursor\` for the next one.`;

const tags = [
  { name: 'sales', description: 'Create a sale. Its answer carries money as strings of cents and shipping as JSON text (the spec).' },
  {
    name: 'transactions',
    description:
      'Read, list, cancel and refund sales. Money in numbers of cents; statuses PENDENTE, EM_PROCESSAMENTO, PAGO, CANCELADO, RECUSADO, ESTORNADO, FALHA, CHARGEBACK, MED.',
  },
  { name: 'balance', description: 'The balance and the statement (extrato), in integer cents.' },
  {
    name: 'cashout',
    description: 'Payouts of the available balance to a PIX key. Amounts in reais; statuses PENDING, PROCESSING, COMPLETED, CANCELLED, REJECTED.',
  },
  {
    name: 'notifications',
    description: 'Permanent webhooks, test notifications, the delivery log and the signing secret of Standard Webhooks signatures.',
  },
  { name: 'operator', description: "The platform operator's API: sellers and their keys, fees, events of providers, the ledger check, the sandbox." },
];

/** `bodyExamples` of a route schema, moved onto its body for @fastify/swagger (`x-examples` → media type `examples`). */
function withBodyExamples({ schema, url }: { schema: Json; url: string }): { schema: Json; url: string } {
  const { bodyExamples, ...rest } = schema ?? {};
  if (!bodyExamples || !rest.body) return { schema: rest, url };
  return { schema: { ...rest, body: { ...(rest.body as Json), 'x-examples': bodyExamples } }, url };
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const mapValues = (o: Json, f: (v: unknown) => unknown): Json => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

// The keywords whose values are schemas, by how they hold them; anything else (examples, enum, const…) is data.
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_ONES = [
  'items',
  'additionalProperties',
  'not',
  'contains',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
];

/** Replaces every titled schema in `schema` by a `$ref` to `components.schemas[title]`, innermost first; moves `x-description` into `description`. */
function hoist(schema: unknown, components: Json): unknown {
  if (!isObject(schema)) return schema;
  const out: Json = { ...schema };
  for (const key of SCHEMA_MAPS) if (isObject(out[key])) out[key] = mapValues(out[key], (s) => hoist(s, components));
  for (const key of SCHEMA_LISTS) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((s) => hoist(s, components));
  for (const key of SCHEMA_ONES) if (isObject(out[key])) out[key] = hoist(out[key], components);
  // Where `description` words a validation error (domain/body-schema.ts), what only readers need is `x-description`.
  const note = out['x-description'];
  if (typeof note === 'string') {
    out.description = typeof out.description === 'string' ? `${out.description}; ${note}` : note;
    delete out['x-description'];
  }
  const title = out.title;
  if (typeof title !== 'string') return out;
  // One name, one schema: the SDK's type of that name must fit every place it is used.
  const known = components[title];
  if (known !== undefined && JSON.stringify(known) !== JSON.stringify(out)) throw new Error(`OpenAPI: two different schemas are titled ${title}`);
  components[title] = out;
  return { $ref: `#/components/schemas/${title}` };
}

const retryAfter = { description: 'seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } };
const replayed = {
  description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key',
  schema: { type: 'string', enum: ['true'] },
};
const success_descriptions: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

/** The response headers the error handler and the idempotent answers add, and descriptions said once. */
function finishResponses(operation: Json): void {
  const parameters = (operation.parameters as Json[] | undefined) ?? [];
  const idempotent = parameters.some((p) => p.in === 'header' && p.name === 'idempotency-key');
  for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
    if (response.description === 'Default Response') response.description = success_descriptions[status] ?? status;
    const media = (response.content as Record<string, Json> | undefined)?.['application/json'];
    const schema = media?.schema as Json | undefined;
    if (media && schema && schema.description === response.description) {
      delete schema.description;
      // http/openapi.ts wraps a shared error schema to give it this operation's description.
      const only = schema.allOf as unknown[] | undefined;
      if (Object.keys(schema).length === 1 && only?.length === 1) media.schema = only[0];
    }
    if (status === '429' || status === '503') response.headers = { 'Retry-After': retryAfter };
    if (idempotent && status.startsWith('2')) response.headers = { 'Idempotent-Replayed': replayed };
  }
}

const refName = (schema: unknown): string | null => {
  const ref = isObject(schema) ? schema.$ref : undefined;
  return typeof ref === 'string' ? ref.replace('#/components/schemas/', '') : null;
};

// The errors that mean the same whatever the operation; a 404 or 400 names its own resource.
const SHARED_CODES = new Set([
  'Unauthorized',
  'RateLimited',
  'Internal',
  'ServiceUnavailable',
  'PayloadTooLarge',
  'UnsupportedMediaType',
  'IdempotencyKeyInUse',
]);

/**
 * An error response that several operations answer word for word (one code of SHARED_CODES, e.g.
 * the seller's 401) is written once in `components.responses`, named after its code and who answers it.
 */
function shareResponses(operations: Json[], components: Json): void {
  const byText = new Map<string, { response: Json; code: string; sites: [Json, string][]; who: Set<string> }>();
  for (const operation of operations) {
    const who = JSON.stringify(operation.security ?? []).includes('operator') ? 'Operator' : 'Seller';
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      const code = refName((response.content as Record<string, Json> | undefined)?.['application/json']?.schema);
      if (Number(status) < 400 || !code || !SHARED_CODES.has(code.replace(/Error$/, ''))) continue;
      const text = JSON.stringify(response);
      const entry = byText.get(text) ?? { response, code: code.replace(/Error$/, ''), sites: [], who: new Set<string>() };
      entry.sites.push([operation.responses as Json, status]);
      entry.who.add(who);
      byText.set(text, entry);
    }
  }
  const repeated = [...byText.values()].filter((e) => e.sites.length > 1);
  // Named after the code, and after who answers it where sellers and the operator are told differently.
  const named = repeated.map((e) => {
    const alone = repeated.filter((o) => o.code === e.code).length === 1;
    return { ...e, name: (alone || e.who.size > 1 ? '' : [...e.who][0]) + e.code };
  });
  const shared: Json = {};
  for (const entry of named) {
    // A name two different responses would share names neither: each stays where it is.
    if (named.filter((e) => e.name === entry.name).length > 1) continue;
    shared[entry.name] = entry.response;
    for (const [responses, status] of entry.sites) responses[status] = { $ref: `#/components/responses/${entry.name}` };
  }
  components.responses = Object.fromEntries(
    Object.keys(shared)
      .sort()
      .map((n) => [n, shared[n]]),
  );
}

/** Hoists the titled schemas of every operation; a body that may be absent is not required. */
function finishDocument({ openapiObject }: { openapiObject: Json }): Json {
  const hoisted: Json = {};
  const operations = Object.values(openapiObject.paths as Record<string, Record<string, Json>>).flatMap((item) => Object.values(item));
  for (const operation of operations) {
    for (const p of (operation.parameters as Json[] | undefined) ?? []) p.schema = hoist(p.schema, hoisted);
    const media = [operation.requestBody, ...Object.values(operation.responses as Json)]
      .filter(isObject)
      .flatMap((r) => Object.values((r.content as Record<string, Json> | undefined) ?? {}));
    for (const m of media) m.schema = hoist(m.schema, hoisted);
    const body = operation.requestBody as Json | undefined;
    const bodyMedia = (body?.content as Record<string, Json> | undefined)?.['application/json'];
    if (refName(bodyMedia?.schema) === 'EmptyBody') {
      body!.required = false;
      bodyMedia!.examples ??= { empty: { summary: 'No fields (no body, or an empty one, does the same)', value: {} } };
    }
    finishResponses(operation);
  }
  const components = openapiObject.components as Json;
  shareResponses(operations, components);
  const names = Object.keys(hoisted).sort();
  components.schemas = { ...(components.schemas as Json), ...Object.fromEntries(names.map((n) => [n, hoisted[n]])) };
  return openapiObject;
}

export const swaggerOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Payment gateway API',
      version: '1.0.0',
      description,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: 'http://127.0.0.1:3000', description: 'the gateway `npm start` runs (its default HOST and PORT)' }],
    tags,
    components: {
      securitySchemes: {
        publicKey: { type: 'apiKey', in: 'header', name: 'X-Api-Public-Key', description: "the seller's public key (`pk_…`)" },
        privateKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Api-Private-Key',
          description: "the seller's private key (`sk_…`), shown once when issued",
        },
        operator: { type: 'http', scheme: 'bearer', description: 'the operator token, `ADMIN_TOKEN`' },
      },
    },
  },
  transform: withBodyExamples as unknown as FastifyDynamicSwaggerOptions['transform'],
  transformObject: finishDocument as unknown as FastifyDynamicSwaggerOptions['transformObject'],
};
