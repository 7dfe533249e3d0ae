/**
 * Property-based fuzz of the public HTTP API, driven by the OpenAPI document the gateway serves
 * (CONTRACT §10, §13). fast-check mutates what the document gives — every request body example
 * (fields dropped, wrong types, strings and numbers at and past their bounds, unknown fields, deep
 * nesting, whole bodies that are not JSON or over 1 MiB), the path parameters (junk, huge, negative,
 * another seller's), the query parameters of every GET, the Idempotency-Key header — and every
 * answer must keep the standing rules:
 *
 * - bad input is a 4xx whose body is JSON (Content-Type application/json; charset=utf-8), never a
 *   5xx; a body the document's own schema refuses (or text PostgreSQL cannot store: a NUL, a lone
 *   surrogate) is a 400 whose `details[].field` names the field mutated (or one under it, or one the
 *   document's schema itself finds wrong); a body over 1 MiB is a 413;
 * - every status is one the document lists for the operation, and the JSON body fits the schema it
 *   gives for that status;
 * - a refused request writes nothing: every table (but the idempotency records, which keep 4xx
 *   answers for replay by design, CONTRACT §3) and the seller's balance and transaction list read
 *   the same before and after. A GET writes nothing, nor does an Idempotency-Key replay.
 *
 * Two rules get deterministic tests of their own, so that one finding there hides no other: a
 * replayed Idempotency-Key answers its first answer again (CONTRACT §3), and a prototype-poisoning
 * key ("__proto__", "constructor") is a 400 naming its field.
 *
 * The seed is fixed (42; FUZZ_SEED explores elsewhere) and every property runs a fixed number of
 * cases (FUZZ_RUNS scales them: 24 body cases per operation by default, about 15 s on PGlite), so a
 * failure replays. Each failure names the operation, the exact request (a long string written as
 * "x".repeat(n)) and the answer, after fast-check's shrinking. FUZZ_STATS=1 prints how often each
 * operation answered each status (FUZZ_STATS=all: every case).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { fund } from '../helpers/funding.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import {
  type Document,
  type Json,
  loadDocument,
  type Op,
  type OpenapiHarness,
  type Operation,
  openapiHarness,
  operationsOf,
  type Schema,
  validate,
  violatedFields,
} from '../helpers/openapi.ts';

/** Fixed, so that a failure replays; FUZZ_SEED explores elsewhere (a failure found there is replayed with the same seed). */
const SEED = Number(process.env.FUZZ_SEED || 42);
const BODY_RUNS = Number(process.env.FUZZ_RUNS || 24);
const PATH_RUNS = Math.ceil(BODY_RUNS / 2);
const QUERY_RUNS = Math.ceil((BODY_RUNS * 2) / 3);
const HEADER_RUNS = Math.ceil(BODY_RUNS / 2);
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);
if (!Number.isSafeInteger(BODY_RUNS) || BODY_RUNS < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${process.env.FUZZ_RUNS}`);
const JSON_TYPE = 'application/json; charset=utf-8';
const STATS = Boolean(process.env.FUZZ_STATS);
const stats: Record<string, Record<number, number>> = {};
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Operations whose success leaves their path's resource as able to succeed again (its set-up is kept). */
const REPEATABLE = new Set(['testWebhook', 'resendNotification', 'createPanelInvite', 'createSellerKey', 'updateSeller']);

// ---------------------------------------------------------------------------------------------
// Values, each with the exact words that write it (a 10 000-character string is not printed).
// ---------------------------------------------------------------------------------------------

/** JSON text that JSON.stringify cannot write (-0, 1e400, 100 000 levels of nesting), with what JSON.parse makes of it. */
class RawJson {
  constructor(
    readonly text: string,
    readonly model: unknown,
    readonly label: string,
  ) {}
  [fc.toStringMethod](): string {
    return this.label;
  }
}

/** A generated value and how to write it exactly. */
class Gen {
  constructor(
    readonly value: unknown,
    readonly label: string,
  ) {}
  [fc.toStringMethod](): string {
    return this.label;
  }
}

function labelOf(value: unknown): string {
  if (value instanceof RawJson) return value.label;
  if (typeof value === 'string') {
    if (value.length <= 60) return JSON.stringify(value);
    const unit = String.fromCodePoint(value.codePointAt(0)!);
    if (value === unit.repeat(value.length / unit.length)) return `${JSON.stringify(unit)}.repeat(${value.length / unit.length})`;
    return `${JSON.stringify(value.slice(0, 40))}… (${value.length} characters)`;
  }
  if (Array.isArray(value)) {
    if (value.length > 5 && value.every((v) => v === value[0])) return `[${labelOf(value[0])} × ${value.length}]`;
    return `[${value.map(labelOf).join(',')}]`;
  }
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${labelOf(k)}:${labelOf(v)}`)
      .join(',')}}`;
  if (Object.is(value, -0)) return '-0';
  return JSON.stringify(value);
}
const gen = (value: unknown) => new Gen(value, labelOf(value));
const raw = (text: string, model: unknown, label = text) => new Gen(new RawJson(text, model, label), label);

/** The JSON text of a value that may hold RawJson pieces. */
function toText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toText).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toText(v)}`)
      .join(',')}}`;
  if (Object.is(value, -0)) return '-0';
  return JSON.stringify(value) ?? 'null';
}

/** What the server's JSON.parse makes of toText(value). */
function toModel(value: unknown): unknown {
  if (value instanceof RawJson) return value.model;
  if (Array.isArray(value)) return value.map(toModel);
  if (value !== null && typeof value === 'object') {
    const out: Json = {};
    // defineProperty: a "__proto__" key is an own field, as JSON.parse makes it.
    for (const [k, v] of Object.entries(value))
      Object.defineProperty(out, k, { value: toModel(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

/** What a text that is not JSON parses to: nothing. */
const NOT_JSON = Symbol('not JSON');
/** Whole bodies: none at all (read as {}, CONTRACT §3), and texts that are not JSON. */
const WHOLE_BODIES = [
  raw('', {}, 'an empty body'),
  raw('  \n', {}, 'a blank body'),
  ...['{', '{"a":1,}', "{'a':1}", 'NaN', '[1,]', '{"a":1}{"b":2}', '{"amount":1e}', '{"a":"\\x"}', '{"a":"\u0001"}', 'undefined'].map((t) =>
    raw(t, NOT_JSON, `the text ${JSON.stringify(t)}`),
  ),
];
/** Over the 1 MiB body limit (a 413). */
const BODY_LIMIT = 1024 * 1024;

function deep(levels: number, kind: 'object' | 'array'): Gen {
  let model: unknown = 1;
  for (let i = 0; i < levels; i++) model = kind === 'object' ? { a: model } : [model];
  const [open, close] = kind === 'object' ? ['{"a":', '}'] : ['[', ']'];
  return raw(`${open.repeat(levels)}1${close.repeat(levels)}`, model, `${kind}s nested ${levels} deep`);
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const unstorable = (s: string) => s.includes('\0') || LONE_SURROGATE.test(s);
/**
 * The dotted path of the first key a JSON parser guarding against prototype poisoning refuses: a
 * "__proto__" key, or a "constructor" whose value has a "prototype" key; null if there is none.
 */
function prototypeKeyPath(value: unknown): string | null {
  // Paths as strings: V8 joins them without copying, where arrays would cost depth² on 100 000 levels.
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    for (const [k, child] of Object.entries(v)) {
      const at = path === '' ? k : `${path}.${k}`;
      if (k === '__proto__') return at;
      if (k === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) return at;
      stack.push([child, at]);
    }
  }
  return null;
}

/** Whether the value holds a string or a key PostgreSQL text cannot hold (iterative: a 100 000-deep value is walked too). */
function holdsUnstorableText(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string' && unstorable(v)) return true;
    if (v !== null && typeof v === 'object')
      for (const [k, child] of Object.entries(v)) {
        if (unstorable(k)) return true;
        stack.push(child);
      }
  }
  return false;
}

const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)); // NUL and lone surrogates included
const SPECIAL_STRINGS = [
  '',
  ' ',
  '\t\n',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'a\udc00',
  '\u202eevil\u202c',
  'שלום עולם',
  'e\u0301',
  '\ufeff',
  '\u0085',
  '\u00a0',
  '😀',
  '👩‍👩‍👧',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '<script>',
  "' OR 1=1 --",
  '%00',
  '../../etc/passwd',
];
// Values of the kinds the API reads (dates, URLs, e-mails, documents, keys), just beside what they accept.
const LOOKALIKES = [
  '2030-02-30',
  '2030-13-01',
  '0000-01-01',
  '1999-12-31',
  '9999-12-31',
  '2030-12-20T00:00:00Z',
  '20301220',
  'https://',
  'ftp://loja.example.com/x',
  'https://user:pass@loja.example.com/',
  'https://127.0.0.1/hook',
  'http://[::1]:80/',
  'javascript:alert(1)',
  `https://loja.example.com/${'a'.repeat(2030)}`,
  'a@b',
  '@example.com',
  `a@${'x'.repeat(250)}.com`,
  'ação@exemplo.com.br',
  '00000000000',
  '529.982.247-25 ',
  '11.222.333/0001-00',
  '+55119876543210',
  '123e4567-e12b-12d1-a456-42665544000g',
];
const WRONG_TYPES = [null, true, false, 0, 1, -1, '1', '', [], {}, [1], { a: 1 }];

type Path = (string | number)[];
const dotted = (path: Path) => path.join('.');

/** The branches a schema allows for a present value (a nullable's non-null branch first). */
function branches(schema: Schema | undefined): Schema[] {
  if (!schema) return [];
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) return union.flatMap(branches).filter((b) => b.type !== 'null');
  return [schema];
}
const typed = (schema: Schema | undefined, type: string) => branches(schema).find((b) => b.type === type || (type === 'object' && b.properties));

function stringEdges(schema: Schema | undefined, current: unknown): fc.Arbitrary<Gen> {
  const s = typed(schema, 'string');
  const min = Number(s?.minLength ?? 0);
  const max = s?.maxLength === undefined ? undefined : Number(s.maxLength);
  const edges: Gen[] = [gen(''), gen('x'.repeat(10_000)), gen('😀'.repeat(300)), gen('x'.repeat(BODY_LIMIT))];
  if (max !== undefined) edges.push(gen('x'.repeat(max)), gen('x'.repeat(max + 1)), gen('😀'.repeat(max)), gen('😀'.repeat(max + 1)));
  if (min > 1) edges.push(gen('x'.repeat(min - 1)));
  if (typeof current === 'string')
    edges.push(
      gen(`${current}\u0000`),
      gen(`\u202e${current}`),
      gen(`${current}😀`),
      gen(` ${current} `),
      gen(current.toUpperCase()),
      gen(`${current}\ud800`),
    );
  return fc.oneof(
    fc.constantFrom(...edges),
    fc.constantFrom(...SPECIAL_STRINGS).map(gen),
    fc.constantFrom(...LOOKALIKES).map(gen),
    fc.string({ unit: anyUnit, maxLength: 24 }).map(gen),
    fc.string({ unit: 'grapheme', maxLength: 12 }).map(gen),
  );
}

function numberEdges(schema: Schema | undefined): fc.Arbitrary<Gen> {
  const n = typed(schema, 'integer') ?? typed(schema, 'number');
  const edges: Gen[] = [
    gen(0),
    gen(-1),
    gen(1),
    gen(1.5),
    gen(0.1),
    gen(2 ** 53),
    gen(-(2 ** 53)),
    gen(1e308),
    gen(-1e308),
    gen(5e-324),
    gen(1e21),
    raw('-0', -0),
    raw('1.0', 1),
    raw('1E2', 100),
    raw('9007199254740993', 9007199254740992),
    raw('99999999999999999999', 1e20),
    raw('1e400', Number.POSITIVE_INFINITY),
    raw('-1e400', Number.NEGATIVE_INFINITY),
  ];
  for (const bound of [n?.minimum, n?.maximum].filter((b): b is number => typeof b === 'number'))
    edges.push(gen(bound - 1), gen(bound), gen(bound + 1), gen(bound + 0.5), gen(String(bound)));
  return fc.oneof(fc.constantFrom(...edges), fc.integer().map(gen), fc.double({ noNaN: true, noDefaultInfinity: true }).map(gen));
}

/** Values to put where `schema` wants one (now `current`): wrong types, edges, junk, nesting. */
function valuesFor(schema: Schema | undefined, current: unknown): fc.Arbitrary<Gen> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...WRONG_TYPES.map(gen), gen([current ?? 1]), gen({ value: current ?? 1 })) },
    { weight: 4, arbitrary: stringEdges(schema, current) },
    { weight: 4, arbitrary: numberEdges(schema) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map(gen) },
    { weight: 1, arbitrary: fc.constantFrom(2, 100, 5_000, 100_000).chain((n) => fc.constantFrom(deep(n, 'object'), deep(n, 'array'))) },
  );
}

const extraKeys = fc.oneof(
  fc.constantFrom('zz', 'unknownField', 'Amount', 'amount ', '', '__proto__', 'constructor', 'a.b', '\u0000', '\ud800', 'x'.repeat(10_000), '😀'),
  fc.string({ unit: anyUnit, maxLength: 12 }),
);

// ---------------------------------------------------------------------------------------------
// Body mutations: where a body can be changed, and how.
// ---------------------------------------------------------------------------------------------

interface Site {
  path: Path;
  schema: Schema | undefined;
  present: boolean;
  required: boolean;
  current: unknown;
}

/** Every field of `value` (and every documented field absent from it), with its schema; the root first. */
function sitesOf(value: unknown, schema: Schema | undefined, path: Path = [], required = true): Site[] {
  const sites: Site[] = [{ path, schema, present: true, required, current: value }];
  if (Array.isArray(value)) {
    const items = branches(schema).find((b) => b.items)?.items as Schema | undefined;
    value.forEach((v, i) => {
      sites.push(...sitesOf(v, items, [...path, i], true));
    });
  } else if (value !== null && typeof value === 'object') {
    const object = typed(schema, 'object');
    const props = (object?.properties ?? {}) as Record<string, Schema>;
    const requiredNames = (object?.required ?? []) as string[];
    for (const key of new Set([...Object.keys(value), ...Object.keys(props)])) {
      if (key in value) sites.push(...sitesOf((value as Json)[key], props[key], [...path, key], requiredNames.includes(key)));
      else sites.push({ path: [...path, key], schema: props[key], present: false, required: false, current: undefined });
    }
  }
  return sites;
}

type Mutation =
  | { kind: 'drop'; path: Path }
  | { kind: 'set'; path: Path; value: Gen }
  | { kind: 'add'; path: Path; key: string; value: Gen }
  | { kind: 'repeat'; path: Path; times: number };

function mutationLabel(m: Mutation): string {
  const at = dotted(m.path) || 'the body';
  if (m.kind === 'drop') return `drop ${at}`;
  if (m.kind === 'set') return `set ${at} = ${m.value.label}`;
  if (m.kind === 'add') return `add to ${at} the field ${labelOf(m.key)} = ${m.value.label}`;
  return `set ${at} = its first element × ${m.times}`;
}

function mutationsOf(site: Site): fc.Arbitrary<Mutation> {
  const { path } = site;
  const options: fc.Arbitrary<Mutation>[] = [valuesFor(site.schema, site.current).map((value) => ({ kind: 'set' as const, path, value }))];
  if (site.present && path.length > 0) options.push(fc.constant({ kind: 'drop' as const, path }));
  if (path.length === 0) options.push(fc.constantFrom(...WHOLE_BODIES).map((value) => ({ kind: 'set' as const, path, value })));
  if (site.present && site.current !== null && typeof site.current === 'object' && !Array.isArray(site.current))
    options.push(
      fc
        .tuple(extraKeys, fc.oneof(fc.jsonValue({ maxDepth: 1 }).map(gen), valuesFor(undefined, 1)))
        .map(([key, value]) => ({ kind: 'add' as const, path, key, value })),
    );
  if (Array.isArray(site.current) && site.current.length > 0) {
    const array = branches(site.schema).find((b) => b.type === 'array');
    const bounds = [0, 1000, Number(array?.maxItems ?? 100), Number(array?.maxItems ?? 100) + 1];
    options.push(fc.constantFrom(...bounds).map((times) => ({ kind: 'repeat' as const, path, times })));
  }
  return fc.oneof(...options);
}

/** `value` (not changed) with mutation `m` applied. */
function applyMutation(value: unknown, m: Mutation): unknown {
  if (m.path.length === 0 && m.kind === 'set') return m.value.value;
  const root = structuredClone(value) as Json;
  const parentPath = m.kind === 'add' || m.kind === 'repeat' ? m.path : m.path.slice(0, -1);
  let node: unknown = root;
  for (const key of parentPath) node = (node as Json)[key as string];
  const last = m.path[m.path.length - 1] as string;
  const parent = node as Json;
  if (m.kind === 'drop') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else if (m.kind === 'set') parent[last] = m.value.value;
  else if (m.kind === 'add') Object.defineProperty(parent, m.key, { value: m.value.value, enumerable: true, writable: true, configurable: true });
  else {
    const array = parent as unknown as unknown[];
    const first = array[0];
    array.length = 0;
    for (let i = 0; i < m.times; i++) array.push(first);
  }
  return root;
}

class BodyCase {
  constructor(
    readonly example: string,
    readonly mutation: Mutation,
  ) {}
  [fc.toStringMethod](): string {
    return `example "${this.example}", ${mutationLabel(this.mutation)}`;
  }
}

// ---------------------------------------------------------------------------------------------
// The rules every answer keeps.
// ---------------------------------------------------------------------------------------------

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}
interface Expectation {
  /** The statuses allowed (all documented ones when absent). */
  statuses?: number[];
  /** A 2xx is wrong: the input is bad. */
  refuse?: boolean;
  /** A 400 must name in details[].field one of `exact`, or a field under one of `under`. */
  names?: { exact: string[]; under: string[]; orNoDetails?: boolean };
  /** The answer is the replay of this one (same Idempotency-Key, same body): the same status and text, marked Idempotent-Replayed. */
  replayOf?: Answer;
}

/** What is wrong with `res` as an answer of `operation` (none: it keeps every rule). */
function judge(operation: Operation, res: Answer, expect: Expectation = {}): string[] {
  const problems: string[] = [];
  const status = res.statusCode;
  const listed = Object.keys(operation.responses);
  if (status >= 500) problems.push(`a ${status}: bad input must be a 4xx, never a 5xx`);
  const documented = operation.responses[String(status)];
  if (!documented) problems.push(`${status} is not a status the document lists for ${operation.operationId} (${listed.join(', ')})`);
  if (status >= 400 && res.headers['content-type'] !== JSON_TYPE)
    problems.push(`Content-Type ${String(res.headers['content-type'])}, not ${JSON_TYPE}`);
  let body: unknown;
  if (res.body !== '') {
    try {
      body = JSON.parse(res.body);
    } catch {
      problems.push('the body is not JSON');
    }
  }
  const schema = documented?.content?.['application/json']?.schema;
  if (schema && body !== undefined) problems.push(...validate(schema, body).map((e) => `off the documented ${status} schema: ${e}`));
  else if (schema) problems.push(`no body, where the document gives a ${status} a JSON body`);
  else if (documented && res.body !== '') problems.push(`a body the document does not describe for ${status}`);
  if (expect.refuse && status < 400) problems.push(`accepted (${status}) what must be refused`);
  if (expect.statuses && !expect.statuses.includes(status)) problems.push(`${status}, where ${expect.statuses.join(' or ')} is due`);
  if (expect.names && status === 400) {
    const details = (body as { details?: { field?: unknown }[] } | undefined)?.details;
    const fields = Array.isArray(details) ? details.map((d) => String(d.field)) : [];
    const { exact, under, orNoDetails } = expect.names;
    const named = fields.some((f) => exact.includes(f) || under.some((u) => f.startsWith(`${u}.`)));
    if (!named && !(orNoDetails && fields.length === 0))
      problems.push(
        `a 400 whose details[].field (${fields.length ? fields.map(labelOf).join(', ') : 'none'}) does not name ${[...new Set([...exact, ...under.map((u) => `${u}.…`)])].map(labelOf).join(' or ')}`,
      );
  }
  if (expect.replayOf) {
    const first = expect.replayOf;
    if (status !== first.statusCode || res.body !== first.body)
      problems.push(`not the first answer replayed (${first.statusCode} ${short(first.body, 300)})`);
    if (res.headers['idempotent-replayed'] !== 'true')
      problems.push(`Idempotent-Replayed is ${String(res.headers['idempotent-replayed'])}, not true`);
  }
  return problems;
}

/**
 * fc.assert, whose report also carries the failing case's own message (the request and the answer):
 * node's test reporter shows an error's message, not the cause fast-check hangs it on.
 */
async function holds<T extends [unknown, ...unknown[]]>(property: fc.IAsyncProperty<T>, params: fc.Parameters<T>): Promise<void> {
  const out = await fc.check(property, params);
  if (!out.failed) return;
  const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
  throw new Error(`${fc.defaultReportMessage(out)}\n\n${cause}`);
}

const short = (text: string, max = 1500) => (text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters in all)`);

describe('OpenAPI fuzz: every operation keeps the rules under mutated input (CONTRACT §10, §13)', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let other: SellerKeys;
  let doc: Document;
  let h: OpenapiHarness;
  let tables: string[];
  let originalFees: unknown;

  before(async () => {
    gw = await startGateway();
    seller = await gw.createSeller();
    other = await gw.createSeller({ name: 'Loja Alheia', email: 'alheia@example.com' });
    await fund(gw, seller.id, 100_000_000_000);
    await fund(gw, other.id, 10_000_000);
    ({ doc } = await loadDocument(gw));
    h = openapiHarness(gw, seller);
    // Idempotency records keep 2xx and 4xx answers for replay (CONTRACT §3): not a write of the request's own.
    const found = await gw.ctx.db.query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
         AND table_name NOT IN ('idempotency_keys', 'idempotency_claims') ORDER BY 1`,
    );
    tables = found.rows.map((r) => r.t);
    assert.ok(tables.includes('transactions') && tables.includes('balances'), tables.join(', '));
    originalFees = (await h.ok('get', '/admin/settings', adminHeaders)).feeSchedule;
  });
  after(async () => {
    if (STATS) console.log(JSON.stringify(stats, null, 1));
    await gw?.close();
  });

  // ---------- what a refused request must leave as it was ----------
  interface Snapshot {
    db: Record<string, string>;
    balance: string;
    transactions: string;
  }
  let last: Snapshot | undefined;
  async function snapshot(): Promise<Snapshot> {
    const sql = tables
      .map((t) => `SELECT '${t}' AS t, count(*)::int AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${t}" x`)
      .join(' UNION ALL ');
    const rows = (await gw.ctx.db.query<{ t: string; n: number; h: string }>(sql)).rows;
    const balance = await h.call('get', '/api/public/balance', seller.headers);
    const transactions = await h.call('get', '/api/transactions?limit=100', seller.headers);
    return { db: Object.fromEntries(rows.map((r) => [r.t, `${r.n} rows, md5 ${r.h}`])), balance: balance.body, transactions: transactions.body };
  }
  /**
   * The snapshot once the embedded PSP's own timers have nothing left to do: a devolução settles
   * 300 ms after it is asked for, a sent Pix 600 ms after (packages/sandbox-psp), and a timer
   * firing during a request would read as the request's write. Settled now, they write no more.
   */
  async function settledSnapshot(): Promise<Snapshot> {
    const psp = gw.ctx.rails.psp;
    if (psp) {
      await psp.settleDevolucoes();
      await psp.settleSends();
    }
    return snapshot();
  }
  function writes(before: Snapshot, after: Snapshot): string[] {
    const changed = Object.keys(before.db).filter((t) => before.db[t] !== after.db[t]);
    return [
      ...changed.map((t) => `wrote table ${t} (${before.db[t]} → ${after.db[t]})`),
      ...(before.balance === after.balance ? [] : [`the seller's balance changed: ${before.balance} → ${after.balance}`]),
      ...(before.transactions === after.transactions ? [] : ["the seller's transaction list changed"]),
    ];
  }

  // ---------- path parameters that let each operation succeed, set up once and kept while refused ----------
  const kept = new Map<string, Record<string, string>>();
  async function paramsFor(op: Op, example: string, value: unknown): Promise<Record<string, string>> {
    const id = op.operation.operationId!;
    if (!/\{/.test(op.path)) return {};
    const key = `${id} ${example}`;
    let params = kept.get(key);
    if (!params) {
      const setup = h.setups[id];
      assert.ok(setup, `${id}: no set-up gives its path parameters`);
      try {
        params = await setup((value ?? {}) as Json);
      } catch (error) {
        throw new Error(`${id}: the set-up of its path parameters failed (a problem of this test's set-up, not a finding): ${String(error)}`);
      }
      kept.set(key, params);
      last = undefined;
    }
    return params;
  }

  interface Sent {
    method: string;
    url: string;
    headers: Record<string, string>;
    body?: string;
  }
  /**
   * Sends `req` as `op`, judges the answer, checks a refusal (or a GET, or what `writesNothing` says
   * writes nothing) wrote nothing; throws with the request and the answer, else returns the answer.
   */
  async function exchange(
    op: Op,
    req: Sent,
    expect: Expectation,
    what: string,
    { onWrite, writesNothing = false }: { onWrite?: (body: string) => void | Promise<void>; writesNothing?: boolean } = {},
  ): Promise<Answer> {
    const beforeIt = last ?? (await settledSnapshot());
    const res = await gw.app.inject({
      method: req.method.toUpperCase() as 'GET',
      url: req.url,
      headers: { ...req.headers, ...(req.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(req.body === undefined ? {} : { payload: req.body }),
    });
    const problems = judge(op.operation, res, expect);
    if (STATS) {
      const key = `${op.operation.operationId} ${expect.refuse ? 'bad' : 'ok?'}`;
      const row = stats[key] ?? {};
      stats[key] = row;
      row[res.statusCode] = (row[res.statusCode] ?? 0) + 1;
      if (process.env.FUZZ_STATS === 'all') console.log(`${op.operation.operationId} | ${what} | ${res.statusCode} ${res.body.slice(0, 160)}`);
    }
    if (res.statusCode >= 400 || op.method === 'get' || writesNothing) {
      const afterIt = await snapshot();
      const why = res.statusCode >= 400 ? 'refused' : op.method === 'get' ? 'a GET' : 'a replay';
      problems.push(...writes(beforeIt, afterIt).map((w) => `${why}, yet it ${w}`));
      last = afterIt;
    } else {
      last = undefined;
      await onWrite?.(res.body);
    }
    if (problems.length === 0) return res;
    const who = req.headers.authorization ? 'the operator' : req.headers['x-api-public-key'] === other.publicKey ? 'another seller' : 'the seller';
    const extra = Object.entries(req.headers).filter(([k]) => !['authorization', 'x-api-public-key', 'x-api-private-key'].includes(k));
    throw new Error(
      [
        `${op.operation.operationId} (${op.method.toUpperCase()} ${op.path}): ${what}`,
        `  request: ${req.method.toUpperCase()} ${req.url} as ${who}${extra.map(([k, v]) => `, ${k}: ${labelOf(v)}`).join('')}`,
        ...(req.body === undefined ? [] : [`  body:    ${short(req.body)}`]),
        `  answer:  ${res.statusCode} ${String(res.headers['content-type'])} ${short(res.body)}`,
        ...problems.map((p) => `  ✖ ${p}`),
      ].join('\n'),
    );
  }

  // ---------- the oracle itself can fail ----------
  test('the checks catch each kind of violation (so a passing fuzz means something)', async () => {
    const ops = new Map(operationsOf(doc).map((o) => [o.operation.operationId!, o]));
    const createSale = ops.get('createSale')!.operation;
    const getBalance = ops.get('getBalance')!.operation;
    const listWebhooks = ops.get('listWebhooks')!.operation;
    const getTransaction = ops.get('getTransaction')!.operation;
    const badId = await h.call('get', '/api/transactions/abc', seller.headers);
    assert.deepEqual(judge(getTransaction, badId, { statuses: [400], refuse: true }), [], 'a well-formed refusal passes');
    const created = await h.call(
      'post',
      '/api/sales',
      seller.headers,
      doc.paths['/api/sales']!.post!.requestBody!.content!['application/json']!.examples!.pix!.value,
    );
    assert.equal(created.statusCode, 201, created.body);
    const cases: [string, string[]][] = [
      ['a 2xx where a refusal is due', judge(createSale, created, { refuse: true })],
      ['a 400 not naming the field', judge(getTransaction, badId, { names: { exact: ['amount'], under: [] } })],
      ['a status the document does not list', judge(getBalance, badId)],
      ['a body off the documented schema', judge(listWebhooks, await h.call('get', '/api/transactions', seller.headers))],
      [
        'a 5xx',
        judge(createSale, {
          statusCode: 500,
          headers: { 'content-type': JSON_TYPE },
          body: '{"error":"Internal Server Error","message":"x","requestId":"1"}',
        }),
      ],
      ['a 4xx that is not JSON', judge(getTransaction, { ...badId, headers: { 'content-type': 'text/plain' } })],
      ['a status other than the one due', judge(getTransaction, badId, { statuses: [404] })],
    ];
    for (const [what, problems] of cases) assert.ok(problems.length > 0, `${what} passed the checks`);
    const beforeIt = await snapshot();
    await fund(gw, seller.id, 1);
    assert.ok(writes(beforeIt, await snapshot()).length >= 2, 'a write (balance and ledger) went unseen');
    last = undefined;
  });

  // ---------- query parameters of every GET without path parameters ----------
  test('GET query parameters: junk is a 400 naming the parameter, good values a 200 (no GET writes)', async (t) => {
    const gets = operationsOf(doc).filter((o) => o.method === 'get' && !/\{/.test(o.path));
    assert.ok(gets.length >= 8, `only ${gets.length} GETs`);
    for (const op of gets) {
      await t.test(op.operation.operationId!, async () => {
        const params = (op.operation.parameters ?? []).filter((p) => p.in === 'query');
        const schemaOf = new Map(params.map((p) => [p.name, p.schema ?? {}]));
        const names = [...schemaOf.keys(), 'zz', 'LIMIT', 'limit[]', 'status%00', 'from', 'x'.repeat(300)];
        const goodValues = (name: string): string[] => {
          const s = schemaOf.get(name);
          if (Array.isArray(s?.enum)) return s.enum.map(String);
          if (name === 'limit') return ['1', '20', '100'];
          if (name === 'cursor') return ['1', '9007199254740991', '9999999999999999'];
          return ['1'];
        };
        const junk = fc.oneof(
          fc.constantFrom(
            '',
            '0',
            '-1',
            '101',
            '1.5',
            '01',
            '%201',
            '1%20',
            '1e2',
            '0x10',
            'abc',
            '%00',
            '%FF',
            '%',
            '%ED%A0%80',
            '+1',
            'null',
            'true',
          ),
          fc.constantFrom(
            '%D9%A1',
            '%EF%BC%91',
            '%E2%80%AE1',
            'x'.repeat(10_000),
            '9'.repeat(400),
            'pago',
            'PAGO%00',
            'PIX%20',
            '%5B%5D',
            '[]',
            '{}',
          ),
          fc.constantFrom('2030-02-30', '2030-12-20T00%3A00%3A00Z', '-1e308', '1e308', '9007199254740993', '0.0', 'Infinity'),
          fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent),
        );
        const entry = fc.constantFrom(...names).chain((name) => fc.tuple(fc.constant(name), fc.oneof(fc.constantFrom(...goodValues(name)), junk)));
        await holds(
          fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 3 }), async (entries) => {
            const query = entries.map(([k, v]) => `${k}=${v}`).join('&');
            const given = new Map<string, string[]>();
            for (const [k, v] of entries) given.set(k, [...(given.get(k) ?? []), v]);
            const invalid: string[] = [];
            let overflow = false;
            for (const [name, values] of given) {
              const schema = schemaOf.get(name);
              if (!schema) continue;
              const value = values.length === 1 ? decodeQuery(values[0]!) : values;
              if (validate(schema, value).length > 0) invalid.push(name);
              else if (name === 'cursor' && BigInt(value as string) > MAX_SAFE) overflow = true;
            }
            const expect: Expectation =
              invalid.length > 0
                ? { refuse: true, statuses: [400], names: { exact: invalid, under: [], orNoDetails: overflow } }
                : overflow
                  ? { refuse: true, statuses: [400] }
                  : { statuses: [200] };
            const headers = h.headersOf(op.operation);
            await exchange(op, { method: 'get', url: `${op.path}?${query}`, headers }, expect, `query ${labelOf(query)}`);
          }),
          { seed: SEED, numRuns: QUERY_RUNS },
        );
      });
    }
  });

  // ---------- path parameters ----------
  test('path parameters: junk ids are a 400, unknown ones a 404, another seller’s a 403 or 404; nothing written', async (t) => {
    const withParams = operationsOf(doc).filter((o) => /\{/.test(o.path));
    assert.ok(withParams.length >= 15, `only ${withParams.length} operations with path parameters`);
    const foreignSale = async () => ({ id: String((await h.saleIn('PAGO_CARD', other)).id) });
    const foreign: Record<string, () => Promise<Record<string, string>>> = {
      getCashout: async () => ({ id: String((await h.newCashout(other)).id) }),
      deleteWebhook: async () => ({ id: String((await h.newWebhook(other)).id) }),
      testWebhook: async () => ({ id: String((await h.newWebhook(other)).id) }),
      resendNotification: async () => ({ id: String((await h.newNotification(other)).id) }),
      getTransaction: foreignSale,
      cancelTransaction: foreignSale,
      refundTransaction: foreignSale,
      listRefunds: foreignSale,
      revokeSellerKey: async () => ({ id: String(seller.id), publicKey: other.publicKey }),
    };
    const FOREIGN = '(a resource of another seller)';
    const junkIds = fc.oneof(
      fc.constantFrom('abc', '0', '-1', '01', '1.5', '1e3', '+1', '0x1F', '%201', '1%20', '%00', '%FF', '%', 'Infinity', 'NaN', 'null', '%5B1%5D'),
      fc.constantFrom('%D9%A1', '%EF%BC%91', '%E2%80%AE1', '%F0%9F%98%80', '%ED%A0%80', '1%2F2', 'x'.repeat(101), '1'.repeat(101), '9'.repeat(16)),
      fc.constantFrom('99999999999999999999', '9007199254740992', '9007199254740991', '18446744073709551616'),
      fc.bigInt({ min: -(10n ** 30n), max: 0n }).map(String),
      fc.bigInt({ min: 2n ** 53n, max: 10n ** 30n }).map(String),
      fc.bigInt({ min: 10n ** 12n, max: MAX_SAFE }).map(String),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map(encodeURIComponent),
    );
    for (const op of withParams) {
      const id = op.operation.operationId!;
      const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const sellerOp = !h.isOperatorOnly(op.operation);
      const examples = Object.values(op.operation.requestBody?.content?.['application/json']?.examples ?? {});
      const body = examples[0] === undefined ? undefined : JSON.stringify(examples[0].value);
      const choices = foreign[id] ? fc.oneof(junkIds, fc.constant(FOREIGN)) : junkIds;
      await t.test(id, async () => {
        await holds(
          fc.asyncProperty(fc.constantFrom(...names), choices, async (name, junk) => {
            let params: Record<string, string>;
            let expect: Expectation;
            let segment: string;
            if (junk === FOREIGN) {
              params = await foreignParams(id, foreign[id]!);
              segment = encodeURIComponent(params[name]!);
              expect = { refuse: true, statuses: sellerOp ? [403, 404] : [404] };
            } else {
              const decoded = decodeSegment(junk);
              if (decoded !== undefined && isCanonicalId(decoded) && BigInt(decoded) < 10n ** 12n) return; // might be a real id: no rule to check
              params = names.length > 1 ? await paramsFor(op, '(path)', examples[0]?.value) : {};
              segment = junk;
              expect = { refuse: true, statuses: pathStatuses(op, name, junk, sellerOp) };
            }
            const url = op.path.replace(/\{(\w+)\}/g, (_m, n: string) => (n === name ? segment : encodeURIComponent(params[n]!)));
            const what = `{${name}} = ${junk === FOREIGN ? FOREIGN : labelOf(junk)}`;
            await exchange(op, { method: op.method, url, headers: h.headersOf(op.operation), ...(body === undefined ? {} : { body }) }, expect, what);
          }),
          { seed: SEED, numRuns: PATH_RUNS },
        );
      });
    }
  });
  const foreignKept = new Map<string, Record<string, string>>();
  async function foreignParams(id: string, setup: () => Promise<Record<string, string>>) {
    let params = foreignKept.get(id);
    if (!params) {
      params = await setup();
      foreignKept.set(id, params);
      last = undefined;
    }
    return params;
  }

  // ---------- Idempotency-Key ----------
  test('Idempotency-Key: empty or over 255 characters is a 400 naming it; a refused keyed request writes nothing', async (t) => {
    const keyed = operationsOf(doc).filter((o) =>
      (o.operation.parameters ?? []).some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'),
    );
    assert.ok(keyed.length >= 4, `only ${keyed.length} operations take an Idempotency-Key`);
    let n = 0;
    for (const op of keyed) {
      const examples = Object.entries(op.operation.requestBody?.content?.['application/json']?.examples ?? {});
      const [name, example] = examples[examples.length - 1]!;
      await t.test(op.operation.operationId!, async () => {
        const keys = fc.oneof(
          fc.constantFrom('', 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(10_000), ' ', 'k k', '%00'),
          fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 300 }),
        );
        await holds(
          fc.asyncProperty(keys, fc.boolean(), async (key, badBody) => {
            // Each key made unique, its length kept (255 stays the bound): a case's key is new, its replay below reuses it.
            const tag = `#${n++}`;
            const unique =
              key.length === 0 || key.length > 255 ? key : key.length > tag.length ? key.slice(0, key.length - tag.length) + tag : key + tag;
            const value = badBody ? { ...(example.value as Json), zz: { a: 1 }, amount: 'x' } : example.value;
            const params = await paramsFor(op, name, example.value);
            const bad = unique.length === 0 || unique.length > 255;
            const expect: Expectation = bad
              ? { refuse: true, statuses: [400], names: { exact: ['Idempotency-Key', ...(badBody ? ['amount'] : [])], under: [] } }
              : badBody
                ? { refuse: true, statuses: [400], names: { exact: ['amount'], under: [] } }
                : {};
            const req = {
              method: op.method,
              url: h.urlOf(op.path, params),
              headers: { ...h.headersOf(op.operation), 'idempotency-key': unique },
              body: toText(value),
            };
            const what = `Idempotency-Key ${labelOf(unique)}${badBody ? ' with a bad body' : ''}`;
            await exchange(op, req, expect, what, { onWrite: () => void kept.delete(`${op.operation.operationId} ${name}`) });
          }),
          { seed: SEED, numRuns: HEADER_RUNS },
        );
      });
    }
  });

  // ---------- Idempotency-Key replays ----------
  test('the same Idempotency-Key and body again: the first answer replayed, 2xx and 4xx alike, nothing written (CONTRACT §3)', async () => {
    const keyed = operationsOf(doc).filter((o) =>
      (o.operation.parameters ?? []).some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'),
    );
    const failures: string[] = [];
    for (const op of keyed) {
      const id = op.operation.operationId!;
      const [name, example] = Object.entries(op.operation.requestBody!.content!['application/json']!.examples!)[0]!;
      for (const badBody of [false, true]) {
        const params = await paramsFor(op, name, example.value);
        const value = badBody ? { ...(example.value as Json), amount: 'x' } : example.value;
        const req = {
          method: op.method,
          url: h.urlOf(op.path, params),
          headers: { ...h.headersOf(op.operation), 'idempotency-key': `replay-${id}-${badBody}` },
          body: toText(value),
        };
        const what = `example "${name}"${badBody ? ' with "amount": "x"' : ''}, Idempotency-Key ${labelOf(req.headers['idempotency-key'])}`;
        try {
          const first = await exchange(op, req, badBody ? { refuse: true, statuses: [400] } : { refuse: false }, what, {
            onWrite: () => void kept.delete(`${id} ${name}`),
          });
          await exchange(op, req, { statuses: [first.statusCode], replayOf: first }, `${what}, sent again`, { writesNothing: true });
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    }
    assert.equal(failures.length, 0, `${failures.length} cases failed:\n\n${failures.join('\n\n')}`);
  });

  // ---------- request bodies ----------
  test('request bodies: every example mutated; what the document refuses is a 400 naming the field, nothing written', async (t) => {
    const withBody = operationsOf(doc).filter((o) => o.operation.requestBody?.content?.['application/json']?.examples);
    assert.ok(withBody.length >= 18, `only ${withBody.length} operations take a body`);
    for (const op of withBody) {
      const id = op.operation.operationId!;
      const media = op.operation.requestBody!.content!['application/json']!;
      const schema = media.schema!;
      const examples = Object.entries(media.examples!);
      const cases = fc.constantFrom(...examples.map(([name]) => name)).chain((name) => {
        const value = media.examples![name]!.value;
        return fc.constantFrom(...sitesOf(value, schema)).chain((site) => mutationsOf(site).map((m) => new BodyCase(name, m)));
      });
      await t.test(id, async () => {
        await holds(
          fc.asyncProperty(cases, async (c) => {
            const example = media.examples![c.example]!.value;
            const params = await paramsFor(op, c.example, example);
            const sent = applyMutation(example, c.mutation);
            const model = toModel(sent);
            // The field changed: an added field is named by its own path.
            const at = dotted(c.mutation.kind === 'add' ? [...c.mutation.path, c.mutation.key] : c.mutation.path);
            const text = toText(sent);
            const notJson = model === NOT_JSON;
            const tooLarge = Buffer.byteLength(text) > BODY_LIMIT;
            const wrong = notJson ? ['body'] : violatedFields(schema, model);
            const bad = wrong.length > 0 || holdsUnstorableText(model);
            // A prototype-poisoning key is judged in a test of its own (below), so that its finding hides no other.
            const poisoned = prototypeKeyPath(model) !== null;
            const expect: Expectation = tooLarge
              ? { refuse: true, statuses: [413] }
              : bad
                ? {
                    refuse: true,
                    statuses: [400],
                    names: { exact: [...wrong.map((f) => f || 'body'), at || 'body', ...(poisoned ? ['body'] : [])], under: at ? [at] : [] },
                  }
                : {};
            const req = { method: op.method, url: h.urlOf(op.path, params), headers: h.headersOf(op.operation), body: text };
            await exchange(op, req, expect, `example "${c.example}", ${mutationLabel(c.mutation)}`, {
              onWrite: async (answer) => {
                if (!REPEATABLE.has(id)) kept.delete(`${id} ${c.example}`);
                // What an accepted case changed that later cases need as it was: the platform's fees, room under the 20 webhooks.
                if (id === 'updateSettings') await h.ok('patch', '/admin/settings', adminHeaders, { feeSchedule: originalFees });
                if (id === 'createWebhook') await h.ok('delete', `/api/webhooks/${JSON.parse(answer).id}`, seller.headers);
              },
            });
          }),
          { seed: SEED, numRuns: BODY_RUNS },
        );
      });
    }
  });

  // ---------- prototype-poisoning keys ----------
  test('a "__proto__" key, or a "constructor" with a "prototype", is a 400 naming that field, nothing written', async () => {
    const withBody = operationsOf(doc).filter((o) => o.operation.requestBody?.content?.['application/json']?.examples);
    const failures: string[] = [];
    for (const op of withBody) {
      const id = op.operation.operationId!;
      const [name, example] = Object.entries(op.operation.requestBody!.content!['application/json']!.examples!)[0]!;
      const value = example.value as Json;
      const objectField = Object.keys(value).find((k) => value[k] !== null && typeof value[k] === 'object' && !Array.isArray(value[k]));
      const cases: Mutation[] = [
        { kind: 'add', path: [], key: '__proto__', value: gen({ isAdmin: true }) },
        { kind: 'add', path: [], key: 'constructor', value: gen({ prototype: { isAdmin: true } }) },
        ...(objectField ? [{ kind: 'add' as const, path: [objectField], key: '__proto__', value: gen(0) }] : []),
      ];
      for (const m of cases) {
        const params = await paramsFor(op, name, value);
        const sent = applyMutation(value, m);
        const field = prototypeKeyPath(toModel(sent))!;
        const req = { method: op.method, url: h.urlOf(op.path, params), headers: h.headersOf(op.operation), body: toText(sent) };
        const expect: Expectation = { refuse: true, statuses: [400], names: { exact: [field], under: [field] } };
        await exchange(op, req, expect, `example "${name}", ${mutationLabel(m)}`, { onWrite: () => void kept.delete(`${id} ${name}`) }).catch(
          (error: Error) => failures.push(error.message),
        );
      }
    }
    // One cause fails every operation alike: the first two in full, then one line each.
    const listed = failures.slice(2).map((f) => f.split('\n')[0]);
    assert.equal(failures.length, 0, `${failures.length} cases failed:\n\n${failures.slice(0, 2).join('\n\n')}\n\nand:\n${listed.join('\n')}`);
  });
});

/** A path id as CONTRACT §1 has it: a canonical positive integer of at most 2^53 − 1. */
function isCanonicalId(segment: string): boolean {
  return /^[1-9][0-9]{0,15}$/.test(segment) && BigInt(segment) <= MAX_SAFE;
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
function decodeQuery(value: string): string {
  return decodeSegment(value.replace(/\+/g, ' ')) ?? value;
}

/** The statuses due for path parameter `name` = `segment` (raw, as in the URL): 400 when malformed, else not found (or another seller's). */
function pathStatuses(op: Op, name: string, segment: string, sellerOp: boolean): number[] {
  const notFound = sellerOp ? [403, 404] : [404];
  const decoded = decodeSegment(segment);
  if (decoded === undefined) return [400];
  if (name === 'id') return isCanonicalId(decoded) ? notFound : [400];
  const schema = (op.operation.parameters ?? []).find((p) => p.in === 'path' && p.name === name)?.schema;
  if (schema?.pattern) return validate(schema, decoded).length === 0 ? notFound : [400];
  return [400, 404];
}
