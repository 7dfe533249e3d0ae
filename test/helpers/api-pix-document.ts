/**
 * The BCB's API Pix OpenAPI file, read once and dereferenced by maintained libraries (`yaml`,
 * `@apidevtools/json-schema-ref-parser`), with its schemas compiled by ajv + ajv-formats. We only
 * find the operation a request belongs to and hand ajv the schema the file gives for it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import $RefParser from '@apidevtools/json-schema-ref-parser';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import { type FoundOperation as GenericFound, METHODS, operationFinder } from './openapi-operations.ts';

// Vendored byte for byte (spec/providers/README.md), so a fresh clone needs nothing outside it.
export const API_PIX_FILE = fileURLToPath(new URL('../../spec/providers/bcb-api-pix-2.9.0.yaml', import.meta.url));
/** The team's shared copy, when this checkout sits beside it. */
export const SHARED_API_PIX_FILE = fileURLToPath(new URL('../../../shared/spec/providers/bcb-api-pix-2.9.0.yaml', import.meta.url));

export type Schema = Record<string, unknown>;
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}
export interface MediaType {
  schema?: Schema;
}
export interface Operation {
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content?: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
  callbacks?: Record<string, Record<string, Record<string, Operation>>>;
}
type PathItem = Record<string, Operation> & { parameters?: Parameter[] };
interface Document {
  paths: Record<string, PathItem>;
  components: { schemas: Record<string, Schema>; examples: Record<string, { value: unknown }> };
  security?: Record<string, string[]>[];
}

/**
 * Where the file contradicts itself so that nothing could conform, we read it as it evidently means;
 * everything else is taken as written. Each reading is tested in test/unit/api-pix-spec.test.ts.
 */
export const API_PIX_ERRATA = [
  'patterns written as JavaScript regex literals ("/^\\d{11}$/" for every CPF, "/^\\d{7}$/") are read without the slashes: as written, no string can match them',
  'PixConsultados (GET /pix, 200) requires "cobs", a field it does not define (copied from CobsConsultadas): that requirement is dropped',
  'txid as allOf [TxId, {pattern: "[a-zA-Z0-9]{1,35}"}] (a received Pix, the GET /pix filter) means to admit the txids of static codes (1 to 25 characters), but allOf keeps TxId\'s {26,35} too: read as {1,35} alone',
  'a oneOf whose branches each define one field and require none (valor.retirada: saque | troco, and the encerramento of Pix Automático) matches any such object twice, so it always fails: each branch is read as requiring its field',
] as const;

/** A oneOf whose branches each define one property and require nothing: nothing can match exactly one. */
function oneOfOfLoneProperties(o: Schema): Schema[] | undefined {
  if (!Array.isArray(o.oneOf) || o.oneOf.length < 2) return undefined;
  const branches = o.oneOf as Schema[];
  const lone = branches.every((b) => !b.required && Object.keys((b.properties ?? {}) as object).length === 1);
  return lone ? branches : undefined;
}

function applyErrata(doc: Document): void {
  const seen = new Set<object>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const o = node as Schema;
    if (typeof o.pattern === 'string' && /^\/.+\/$/.test(o.pattern)) o.pattern = o.pattern.slice(1, -1);
    for (const branch of oneOfOfLoneProperties(o) ?? []) branch.required = Object.keys(branch.properties as object);
    for (const v of Object.values(o)) visit(v);
  };
  visit(doc);
  widenTxidRefinements(doc);
  const pixList = doc.components.schemas.PixConsultados!;
  pixList.required = (pixList.required as string[]).filter((name) => name !== 'cobs');
}

function widenTxidRefinements(doc: Document): void {
  const txId = doc.components.schemas.TxId!;
  const seen = new Set<object>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const o = node as Schema;
    const parts = o.allOf as Schema[] | undefined;
    const refinement = parts?.length === 2 && parts[0] === txId ? parts[1] : undefined;
    if (refinement && Object.keys(refinement).join() === 'pattern') o.allOf = [{ ...txId, pattern: refinement.pattern }];
    for (const v of Object.values(o)) visit(v);
  };
  visit(doc.paths);
  visit(doc.components.schemas);
}

async function load(): Promise<Document> {
  const raw = parse(readFileSync(API_PIX_FILE, 'utf8')) as Document;
  // The file refers only to itself: nothing is fetched. circular: false makes a cycle fail here,
  // where ajv could not compile a cyclic object graph anyway.
  const doc = (await $RefParser.dereference(raw, { resolve: { external: false }, dereference: { circular: false } })) as Document;
  applyErrata(doc);
  return doc;
}

export const apiPixDocument: Document = await load();

/** A copy of one of the file's own examples (components.examples), by name: `cobBody2`, `pixWebhook2`, … */
export function apiPixExample(name: string): unknown {
  const example = apiPixDocument.components.examples[name];
  if (!example) throw new Error(`the API Pix file has no example ${name}`);
  return structuredClone(example.value);
}

// The payload locations (/{pixUrlAccessToken}, …) declare servers of their own: the payer's PSP
// fetches them from the location URL, never under the API root, so no request of ours can be one.
const servedHere = (item: PathItem) => !METHODS.some((m) => (item[m] as { servers?: unknown } | undefined)?.servers);

export type FoundOperation = GenericFound<Operation, Parameter>;

/** The operation of the file for a method and a path relative to the API root, or why there is none. */
export const findOperation = operationFinder<Parameter, Operation>(apiPixDocument, 'the file', servedHere);

/**
 * OpenAPI 3.0: a required property marked readOnly is required in responses only, and one marked
 * writeOnly in requests only; JSON Schema has no such rule, so we drop them from `required` in a copy.
 */
export function forDirection(schema: Schema, direction: 'request' | 'response'): Schema {
  const mark = direction === 'request' ? 'readOnly' : 'writeOnly';
  const copy = structuredClone(schema);
  const marked = (s: unknown): boolean => {
    const o = s as Schema | undefined;
    return o?.[mark] === true || (Array.isArray(o?.allOf) && o.allOf.some(marked));
  };
  const markedNames = (o: Schema, into: Set<string>): Set<string> => {
    for (const [name, prop] of Object.entries((o.properties ?? {}) as Record<string, unknown>)) if (marked(prop)) into.add(name);
    if (Array.isArray(o.allOf)) for (const part of o.allOf) markedNames(part as Schema, into);
    return into;
  };
  const seen = new Set<object>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const o = node as Schema;
    if (Array.isArray(o.required)) {
      const drop = markedNames(o, new Set());
      o.required = o.required.filter((name: string) => !drop.has(name));
    }
    for (const v of Object.values(o)) visit(v);
  };
  visit(copy);
  return copy;
}

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = addFormatsModule.default;
// strict: false because OpenAPI 3.0 schemas carry keywords JSON Schema does not know (example, …).
const bodyAjv = addFormats(new Ajv({ strict: false, allErrors: true }));
// Query and path values arrive as text; the file types them (integer, boolean), so ajv coerces them.
const paramAjv = addFormats(new Ajv({ strict: false, allErrors: true, coerceTypes: true }));
const compiled = new Map<string, ValidateFunction>();

/** A cached validator for one schema of the file (or a function making it, called once); `key` names it. */
export function validatorFor(key: string, schema: Schema | (() => Schema), kind: 'body' | 'param'): ValidateFunction {
  const cached = compiled.get(key);
  if (cached) return cached;
  const validate = (kind === 'body' ? bodyAjv : paramAjv).compile(typeof schema === 'function' ? schema() : schema);
  compiled.set(key, validate);
  return validate;
}

/** ajv's errors as sentences that say where and what: `request body /valor/original must be string`. */
export function describe(where: string, errors: ErrorObject[] | null | undefined): string[] {
  // allOf branches often repeat a requirement: say each violation once.
  const sentences = (errors ?? []).map((e) => {
    const at = e.instancePath ? ` ${e.instancePath}` : '';
    const p = e.params as Record<string, unknown>;
    const extra = p.additionalProperty ? ` (${p.additionalProperty})` : p.allowedValues ? ` (${JSON.stringify(p.allowedValues)})` : '';
    return `${where}${at} ${e.message}${extra}`;
  });
  return [...new Set(sentences)];
}
