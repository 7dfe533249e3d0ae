/**
 * The body of POST /api/sales (CONTRACT §4), checked and normalised. Pure: no I/O, never throws
 * for any input, and reports every violation at once with dotted field names (`items.0.unitPrice`).
 * Types are never coerced; unknown fields are ignored. Convention inside: a reader returns `null`
 * for a validly absent value and `undefined` only after it pushed an error.
 */
import { BOLETO_MAX_AMOUNT_CENTS } from './boleto.ts';
import { validateCard, type CardBrand, type CardInput } from './card.ts';
import { parseDocument } from './documents.ts';
import type { FieldError } from './errors.ts';
import { PAYMENT_METHODS, type PaymentMethod } from './transaction-states.ts';

export interface SaleItemInput { title: string; unitPrice: number; quantity: number; tangible: boolean }

export interface ShippingInput {
  street: string; number: string; complement: string | null; neighborhood: string;
  city: string; state: string; zipCode: string; fee: number;
}

export interface CardDetails {
  /** Digits only; the caller fingerprints it and drops it (PCI DSS 3.4.1). */
  number: string;
  holderName: string; expirationMonth: number; expirationYear: number;
  brand: CardBrand; lastFour: string; bin: string;
}

export interface SaleRequest {
  amount: number;
  paymentMethod: PaymentMethod;
  customer: { name: string; email: string; document: string | null; phone: string | null };
  items: SaleItemInput[];
  postbackUrl: string | null;
  /** CREDIT_CARD: as given or 1; null for the other methods. */
  installments: number | null;
  /** Card methods only; the CVV is checked and never returned (PCI DSS 3.3.1). */
  card: CardDetails | null;
  shipping: ShippingInput | null;
  /** PIX only; `expiresInSeconds: null` means the charge never expires. */
  pix: { expiresInSeconds: number | null } | null;
  /** BOLETO only; YYYY-MM-DD in America/Sao_Paulo. */
  boleto: { dueDate: string } | null;
}

export type SaleRequestResult = { ok: true; sale: SaleRequest } | { ok: false; errors: FieldError[] };

type Obj = Record<string, unknown>;
type Errors = FieldError[];

const MIN_SALE_AMOUNT = 100;
/** The boleto barcode holds 10 digits of cents; one ceiling for every method keeps methods interchangeable. */
const MAX_SALE_AMOUNT = BOLETO_MAX_AMOUNT_CENTS;
const MAX_ITEMS = 100;
const MAX_INSTALLMENTS = 12;
const DEFAULT_PIX_EXPIRY_SECONDS = 3600;
const BOLETO_DEFAULT_DAYS = 3;
const PIX_EXPIRY_MIN = 60;
const PIX_EXPIRY_MAX = 31_536_000;
const URL_MAX = 2048;
const EMAIL_MAX = 254; // RFC 5321 forward-path limit

// The RFC 5322 "atext" local part (≤ 64, RFC 5321), then DNS labels of letters, digits and inner
// hyphens (≤ 63 each) with at least one dot. Only run on strings already capped at 254 characters.
const EMAIL = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i;
const PHONE = /^\d{10,11}$/;
const STATE = /^[A-Z]{2}$/;
const ZIP = /^\d{8}$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// A literal "scheme://host" start: WHATWG URL would otherwise read `http:foo` or `http:///foo` as http://foo/.
const HTTP_URL_START = /^https?:\/\/[^/\\]/i;
const URL_FORBIDDEN_CHARS = /[\s\u0000-\u001f\u007f]/;

// ---------- generic readers ----------

/** JSON objects only: arrays, class instances and objects with an exotic prototype are refused. */
function isPlainObject(value: unknown): value is Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Own data properties only: a `__proto__` key or a polluted Object.prototype never supplies a value,
 * and a getter is never run (so it cannot throw).
 */
function own(obj: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(obj, key);
  return descriptor && 'value' in descriptor ? descriptor.value : undefined;
}

const absent = (value: unknown): value is null | undefined => value === undefined || value === null;

/** Longer than `max` characters, counted in code points (what users and PostgreSQL count), without spreading huge strings. */
function longerThan(s: string, max: number): boolean {
  if (s.length <= max) return false;
  if (s.length > 2 * max) return true;
  return [...s].length > max;
}

/** A required, non-blank string of at most `max` characters, kept as given. */
function readText(value: unknown, field: string, max: number, errors: Errors): string | undefined {
  if (typeof value === 'string' && value.trim() !== '' && !longerThan(value, max)) return value;
  errors.push({ field, message: `must be a string of 1 to ${max} characters, not blank` });
  return undefined;
}

/** A safe integer in [min, max]; numbers only (`"15000"` is refused). */
function readInt(value: unknown, field: string, min: number, max: number, errors: Errors, unit = ''): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max) {
    return value + 0; // turns -0 into 0, which JSON would print as 0 anyway
  }
  const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
  errors.push({ field, message: `must be an integer${unit} ${range}` });
  return undefined;
}

/** A value sent for a method it does not belong to; null counts as not sent. */
function refuse(value: unknown, field: string, method: PaymentMethod, errors: Errors): void {
  if (!absent(value)) errors.push({ field, message: `must not be sent for ${method}` });
}

/** For required objects: absent and wrong type give different messages, both on the object's own field. */
function requireObject(value: unknown, field: string, errors: Errors): Obj | undefined {
  if (isPlainObject(value)) return value;
  errors.push({ field, message: absent(value) ? 'is required' : 'must be an object' });
  return undefined;
}

// ---------- dates (business dates are São Paulo's, CONTRACT §1) ----------

// Built once: constructing an Intl formatter is far costlier than using one.
const SAO_PAULO_DAY = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Sao_Paulo', year: 'numeric', month: '2-digit', day: '2-digit',
});

/** The calendar date (YYYY-MM-DD) in America/Sao_Paulo at `now`. */
export function saoPauloDate(now: Date): string {
  const parts = SAO_PAULO_DAY.formatToParts(now);
  const part = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
}

/** A UTC midnight for y-m-d; setUTCFullYear because Date.UTC maps years 0–99 to 1900–1999. */
function utcDay(year: number, month: number, day: number): Date {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d;
}

/** True for a strict YYYY-MM-DD that exists in the calendar (2026-02-30 does not). */
function isCalendarDate(s: string): boolean {
  const m = ISO_DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = utcDay(y, mo, d);
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** Calendar arithmetic on a YYYY-MM-DD (UTC only as a neutral zone, so no offset can shift the day). */
function addDays(isoDate: string, days: number): string {
  const m = ISO_DATE.exec(isoDate);
  if (!m) return isoDate;
  return utcDay(Number(m[1]), Number(m[2]), Number(m[3]) + days).toISOString().slice(0, 10);
}

// ---------- sections ----------

function readAmount(value: unknown, errors: Errors): number | undefined {
  return readInt(value, 'amount', MIN_SALE_AMOUNT, MAX_SALE_AMOUNT, errors, ' of cents');
}

function readPaymentMethod(value: unknown, errors: Errors): PaymentMethod | undefined {
  if (typeof value === 'string' && (PAYMENT_METHODS as readonly string[]).includes(value)) return value as PaymentMethod;
  errors.push({ field: 'paymentMethod', message: `must be one of ${PAYMENT_METHODS.join(', ')}` });
  return undefined;
}

function readEmail(value: unknown, errors: Errors): string | undefined {
  if (typeof value === 'string' && value.length <= EMAIL_MAX && EMAIL.test(value)) return value;
  errors.push({ field: 'customer.email', message: `must be a valid e-mail address of at most ${EMAIL_MAX} characters` });
  return undefined;
}

/** Optional, except for BOLETO (a registered boleto names its payer); stored without punctuation. */
function readDocument(value: unknown, method: PaymentMethod | undefined, errors: Errors): string | null | undefined {
  const field = 'customer.document';
  if (absent(value)) {
    if (method !== 'BOLETO') return null;
    errors.push({ field, message: 'is required for BOLETO' });
    return undefined;
  }
  const parsed = typeof value === 'string' ? parseDocument(value) : { ok: false as const };
  if (parsed.ok) return parsed.value;
  errors.push({ field, message: 'must be a valid CPF or CNPJ' });
  return undefined;
}

function readPhone(value: unknown, errors: Errors): string | null | undefined {
  if (absent(value)) return null;
  if (typeof value === 'string' && PHONE.test(value)) return value;
  errors.push({ field: 'customer.phone', message: 'must be 10 or 11 digits, digits only' });
  return undefined;
}

function readCustomer(value: unknown, method: PaymentMethod | undefined, errors: Errors): SaleRequest['customer'] | undefined {
  const raw = requireObject(value, 'customer', errors);
  if (!raw) return undefined;
  const name = readText(own(raw, 'name'), 'customer.name', 200, errors);
  const email = readEmail(own(raw, 'email'), errors);
  const document = readDocument(own(raw, 'document'), method, errors);
  const phone = readPhone(own(raw, 'phone'), errors);
  if (name === undefined || email === undefined || document === undefined || phone === undefined) return undefined;
  return { name, email, document, phone };
}

function readItem(value: unknown, field: string, errors: Errors): SaleItemInput | undefined {
  if (!isPlainObject(value)) {
    errors.push({ field, message: 'must be an object' });
    return undefined;
  }
  const title = readText(own(value, 'title'), `${field}.title`, 255, errors);
  const unitPrice = readInt(own(value, 'unitPrice'), `${field}.unitPrice`, 1, Number.MAX_SAFE_INTEGER, errors, ' of cents');
  const quantity = readInt(own(value, 'quantity'), `${field}.quantity`, 1, 10_000, errors);
  const tangible = own(value, 'tangible');
  if (typeof tangible !== 'boolean') errors.push({ field: `${field}.tangible`, message: 'must be a boolean' });
  if (title === undefined || unitPrice === undefined || quantity === undefined || typeof tangible !== 'boolean') return undefined;
  return { title, unitPrice, quantity, tangible };
}

interface ItemsRead { items: SaleItemInput[] | undefined; anyTangible: boolean }

function readItems(value: unknown, errors: Errors): ItemsRead {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_ITEMS) {
    // Over the limit, the elements are not looked at: a huge array would bury the one useful error.
    errors.push({ field: 'items', message: `must be an array of 1 to ${MAX_ITEMS} items` });
    return { items: undefined, anyTangible: false };
  }
  const read: (SaleItemInput | undefined)[] = [];
  let anyTangible = false;
  // An index loop, not map(): map skips the holes of a sparse array and would let them through.
  for (let i = 0; i < value.length; i++) {
    const raw = own(value, String(i));
    read.push(readItem(raw, `items.${i}`, errors));
    // Counted even on otherwise broken items, so a missing shipping is reported in the same answer.
    if (isPlainObject(raw) && own(raw, 'tangible') === true) anyTangible = true;
  }
  const items = read.every((item): item is SaleItemInput => item !== undefined) ? read : undefined;
  return { items, anyTangible };
}

function readComplement(value: unknown, errors: Errors): string | null | undefined {
  if (absent(value)) return null;
  if (typeof value === 'string' && !longerThan(value, 200)) return value;
  errors.push({ field: 'shipping.complement', message: 'must be a string of at most 200 characters, or null' });
  return undefined;
}

function readPattern(value: unknown, field: string, pattern: RegExp, message: string, errors: Errors): string | undefined {
  if (typeof value === 'string' && pattern.test(value)) return value;
  errors.push({ field, message });
  return undefined;
}

function readShippingObject(raw: Obj, errors: Errors): ShippingInput | undefined {
  const f = (key: string): unknown => own(raw, key);
  const shipping = {
    street: readText(f('street'), 'shipping.street', 200, errors),
    number: readText(f('number'), 'shipping.number', 20, errors),
    complement: readComplement(f('complement'), errors),
    neighborhood: readText(f('neighborhood'), 'shipping.neighborhood', 100, errors),
    city: readText(f('city'), 'shipping.city', 100, errors),
    state: readPattern(f('state'), 'shipping.state', STATE, 'must be two upper-case letters (UF, e.g. SP)', errors),
    zipCode: readPattern(f('zipCode'), 'shipping.zipCode', ZIP, 'must be 8 digits (CEP without punctuation)', errors),
    fee: readInt(f('fee'), 'shipping.fee', 0, Number.MAX_SAFE_INTEGER, errors, ' of cents'),
  };
  return Object.values(shipping).some((v) => v === undefined) ? undefined : (shipping as ShippingInput);
}

/** Required when something must be delivered; on a digital sale it is optional and kept when valid. */
function readShipping(value: unknown, required: boolean, errors: Errors): ShippingInput | null | undefined {
  if (absent(value)) {
    if (!required) return null;
    errors.push({ field: 'shipping', message: 'is required when any item is tangible' });
    return undefined;
  }
  if (!isPlainObject(value)) {
    errors.push({ field: 'shipping', message: 'must be an object' });
    return undefined;
  }
  return readShippingObject(value, errors);
}

/** §4: amount = Σ unitPrice × quantity + shipping.fee, in BigInt since the sum may pass 2^53. */
function checkTotal(amount: number, items: SaleItemInput[], shipping: ShippingInput | null, errors: Errors): void {
  const expected = items.reduce((sum, it) => sum + BigInt(it.unitPrice) * BigInt(it.quantity), BigInt(shipping?.fee ?? 0));
  if (expected === BigInt(amount)) return;
  errors.push({
    field: 'amount',
    message: `must equal the sum of unitPrice × quantity over items plus shipping.fee: expected ${expected}, got ${amount}`,
  });
}

// ---------- method-specific ----------

const CARD_FIELD_TYPES: readonly [key: keyof CardInput, type: 'string' | 'integer'][] = [
  ['number', 'string'], ['holderName', 'string'], ['expirationMonth', 'integer'], ['expirationYear', 'integer'], ['cvv', 'string'],
];

/** Type errors first, so `4111111111111111` as a number says "must be a string", not "must be 12 to 19 digits". */
function cardTypeErrors(input: Obj): FieldError[] {
  return CARD_FIELD_TYPES.flatMap(([key, type]) => {
    const value = input[key];
    const ok = type === 'string' ? typeof value === 'string' : typeof value === 'number' && Number.isSafeInteger(value);
    return ok ? [] : [{ field: `card.${key}`, message: type === 'string' ? 'must be a string' : 'must be an integer' }];
  });
}

function readCard(value: unknown, method: PaymentMethod, now: Date, errors: Errors): CardDetails | null | undefined {
  if (method !== 'CREDIT_CARD' && method !== 'DEBIT_CARD') {
    refuse(value, 'card', method, errors);
    return null;
  }
  const raw = requireObject(value, 'card', errors);
  if (!raw) return undefined;
  // A fresh object of own fields: validateCard must not see inherited or extra properties.
  const input: Obj = Object.fromEntries(CARD_FIELD_TYPES.map(([key]) => [key, own(raw, key)]));
  const typeErrors = cardTypeErrors(input);
  const typed = new Set(typeErrors.map((e) => e.field));
  const result = validateCard(input as unknown as CardInput, method, now);
  errors.push(...typeErrors, ...(result.ok ? [] : result.errors.filter((e) => !typed.has(e.field))));
  if (!result.ok || typeErrors.length > 0) return undefined;
  const card = input as unknown as CardInput;
  return {
    number: card.number, holderName: card.holderName, expirationMonth: card.expirationMonth, expirationYear: card.expirationYear,
    brand: result.brand, lastFour: result.lastFour, bin: result.bin,
  };
}

function readInstallments(value: unknown, method: PaymentMethod, errors: Errors): number | null | undefined {
  if (method !== 'CREDIT_CARD') {
    refuse(value, 'installments', method, errors);
    return null;
  }
  if (absent(value)) return 1;
  return readInt(value, 'installments', 1, MAX_INSTALLMENTS, errors);
}

function readPix(value: unknown, method: PaymentMethod, errors: Errors): SaleRequest['pix'] | undefined {
  if (method !== 'PIX') {
    refuse(value, 'pix', method, errors);
    return null;
  }
  if (absent(value)) return { expiresInSeconds: DEFAULT_PIX_EXPIRY_SECONDS };
  if (!isPlainObject(value)) {
    errors.push({ field: 'pix', message: 'must be an object' });
    return undefined;
  }
  // Absent means the default; an explicit null is the seller asking for a charge that never expires.
  const raw = own(value, 'expiresInSeconds');
  if (raw === undefined) return { expiresInSeconds: DEFAULT_PIX_EXPIRY_SECONDS };
  if (raw === null) return { expiresInSeconds: null };
  const expiresInSeconds = readInt(raw, 'pix.expiresInSeconds', PIX_EXPIRY_MIN, PIX_EXPIRY_MAX, errors);
  return expiresInSeconds === undefined ? undefined : { expiresInSeconds };
}

function readDueDate(value: unknown, today: string, errors: Errors): string | undefined {
  const field = 'boleto.dueDate';
  if (typeof value !== 'string' || !isCalendarDate(value)) {
    errors.push({ field, message: 'must be a real calendar date in the form YYYY-MM-DD' });
    return undefined;
  }
  // Plain string order is date order for 4-digit years.
  if (value >= today) return value;
  errors.push({ field, message: `must be today (${today}, America/Sao_Paulo) or later` });
  return undefined;
}

function readBoleto(value: unknown, method: PaymentMethod, now: Date, errors: Errors): SaleRequest['boleto'] | undefined {
  if (method !== 'BOLETO') {
    refuse(value, 'boleto', method, errors);
    return null;
  }
  if (!absent(value) && !isPlainObject(value)) {
    errors.push({ field: 'boleto', message: 'must be an object' });
    return undefined;
  }
  const today = saoPauloDate(now);
  const raw = isPlainObject(value) ? own(value, 'dueDate') : undefined;
  if (absent(raw)) return { dueDate: addDays(today, BOLETO_DEFAULT_DAYS) };
  const dueDate = readDueDate(raw, today, errors);
  return dueDate === undefined ? undefined : { dueDate };
}

function readPostbackUrl(value: unknown, errors: Errors): string | null | undefined {
  if (absent(value)) return null;
  const problem = postbackUrlProblem(value);
  if (problem === null) return value as string;
  errors.push({ field: 'postbackUrl', message: problem });
  return undefined;
}

/** Why `value` is not an acceptable postback URL, or null. Reachability (private hosts) is the notifier's check. */
function postbackUrlProblem(value: unknown): string | null {
  const shape = `must be an absolute http:// or https:// URL of at most ${URL_MAX} characters`;
  if (typeof value !== 'string' || value.length > URL_MAX) return shape;
  if (!HTTP_URL_START.test(value) || URL_FORBIDDEN_CHARS.test(value)) return shape;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return shape;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return shape;
  // Credentials in a URL end up in logs and notification lists.
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  return null;
}

interface MethodParts {
  card: CardDetails | null | undefined;
  installments: number | null | undefined;
  pix: SaleRequest['pix'] | undefined;
  boleto: SaleRequest['boleto'] | undefined;
}

function readMethodParts(body: Obj, method: PaymentMethod, now: Date, errors: Errors): MethodParts {
  return {
    card: readCard(own(body, 'card'), method, now, errors),
    installments: readInstallments(own(body, 'installments'), method, errors),
    pix: readPix(own(body, 'pix'), method, errors),
    boleto: readBoleto(own(body, 'boleto'), method, now, errors),
  };
}

/** Every §4 violation of `body` at once, or the normalised sale. `now` fixes "today" and card expiry. */
export function validateSaleRequest(body: unknown, now: Date): SaleRequestResult {
  if (!isPlainObject(body)) return { ok: false, errors: [{ field: 'body', message: 'must be a JSON object' }] };
  const errors: Errors = [];
  const amount = readAmount(own(body, 'amount'), errors);
  const method = readPaymentMethod(own(body, 'paymentMethod'), errors);
  const customer = readCustomer(own(body, 'customer'), method, errors);
  const { items, anyTangible } = readItems(own(body, 'items'), errors);
  const shipping = readShipping(own(body, 'shipping'), anyTangible, errors);
  const postbackUrl = readPostbackUrl(own(body, 'postbackUrl'), errors);
  // The total is only meaningful once its parts are valid; otherwise it would just add noise.
  if (amount !== undefined && items !== undefined && shipping !== undefined) checkTotal(amount, items, shipping, errors);
  // Without a known method the card/installments/pix/boleto rules have nothing to apply to.
  const parts = method === undefined ? undefined : readMethodParts(body, method, now, errors);
  if (errors.length > 0) return { ok: false, errors };
  if (amount === undefined || method === undefined || customer === undefined || items === undefined || shipping === undefined
    || postbackUrl === undefined || parts === undefined || parts.card === undefined || parts.installments === undefined
    || parts.pix === undefined || parts.boleto === undefined) {
    // Unreachable: every reader pushes an error before it returns undefined. Kept so a slip fails closed.
    return { ok: false, errors: [{ field: 'body', message: 'is invalid' }] };
  }
  const { card, installments, pix, boleto } = parts;
  return { ok: true, sale: { amount, paymentMethod: method, customer, items, postbackUrl, installments, card, shipping, pix, boleto } };
}
