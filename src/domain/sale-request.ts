/**
 * The body of POST /api/sales (CONTRACT §4), checked and normalised. Pure: no I/O, never throws
 * for any input, and reports every violation at once with dotted field names (`items.0.unitPrice`).
 * The schema (sale-schema.ts) checks the shape; this module adds the rules that span fields.
 */

import { isIP } from 'node:net';
import { isPlainObject } from './body-schema.ts';
import { addDays, saoPauloDate } from './calendar.ts';
import { type CardBrand, validateCard } from './card.ts';
import { parseDocument } from './documents.ts';
import type { FieldError } from './errors.ts';
import { invalid, ok, type Result } from './result.ts';
import { checkSaleBody, type SaleBody } from './sale-schema.ts';
import type { PaymentMethod } from './transaction-states.ts';

export interface SaleItemInput {
  title: string;
  unitPrice: number;
  quantity: number;
  tangible: boolean;
}

export interface ShippingInput {
  street: string;
  number: string;
  complement: string | null;
  neighborhood: string;
  city: string;
  state: string;
  zipCode: string;
  fee: number;
}

/** The shopper's side of 3-D Secure (CONTRACT §11.2): where it comes back to, and what the issuer needs of its browser. */
export interface AuthenticationInput {
  returnUrl: string;
  browser: {
    userAgent: string;
    acceptHeader: string;
    language: string;
    colorDepth: number;
    screenHeight: number;
    screenWidth: number;
    timeZoneOffset: number;
    javaEnabled: boolean;
  };
  ip: string;
}

export interface CardDetails {
  /** Digits only; the caller fingerprints it and drops it (PCI DSS 3.4.1). */
  number: string;
  holderName: string;
  expirationMonth: number;
  expirationYear: number;
  brand: CardBrand;
  lastFour: string;
  bin: string;
}

interface SaleBase {
  amount: number;
  customer: { name: string; email: string; document: string | null; phone: string | null };
  items: SaleItemInput[];
  postbackUrl: string | null;
  shipping: ShippingInput | null;
}

/** Each method with the part it takes; the parts of the other methods are null. */
export type SaleRequest = SaleBase &
  (
    | {
        paymentMethod: 'PIX' /** `expiresInSeconds: null` means the charge never expires. */;
        pix: { expiresInSeconds: number | null };
        card: null;
        authentication: null;
        installments: null;
        boleto: null;
      }
    | {
        paymentMethod: 'CREDIT_CARD' /** The CVV is checked and never returned (PCI DSS 3.3.1). */;
        card: CardDetails /** as given or 1 */;
        installments: number;
        /** null: sent without 3-D Secure. */
        authentication: AuthenticationInput | null;
        pix: null;
        boleto: null;
      }
    | { paymentMethod: 'DEBIT_CARD'; card: CardDetails; installments: null; pix: null; boleto: null; authentication: AuthenticationInput }
    | {
        paymentMethod: 'BOLETO' /** YYYY-MM-DD in America/Sao_Paulo. */;
        boleto: { dueDate: string };
        card: null;
        installments: null;
        pix: null;
        authentication: null;
      }
  );

export type SaleRequestResult = Result<SaleRequest>;

const DEFAULT_PIX_EXPIRY_SECONDS = 3600;
const BOLETO_DEFAULT_DAYS = 3;

// ---------- rules across fields ----------

/** The request being judged: the schema's errors, then this module's, and which paths are still sound. */
class Judgement {
  constructor(
    readonly body: SaleBody,
    readonly errors: FieldError[],
  ) {}

  /** No error names `path` or anything below it, so its value has the schema's type. */
  sound(path: string): boolean {
    return !this.errors.some((e) => e.field === path || e.field.startsWith(`${path}.`));
  }

  add(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  /** The schema's verdict on a part the method does not take is beside the point: the part is refused whole. */
  forget(path: string): void {
    for (let i = this.errors.length - 1; i >= 0; i--) {
      const field = this.errors[i]!.field;
      if (field === path || field.startsWith(`${path}.`)) this.errors.splice(i, 1);
    }
  }
}

/** Optional, except for BOLETO (a registered boleto names its payer); stored without punctuation. */
function checkDocument(j: Judgement, method: PaymentMethod | null): string | null {
  if (!isPlainObject(j.body.customer) || !j.sound('customer.document')) return null;
  const document = j.body.customer.document;
  if (document === undefined || document === null) {
    if (method === 'BOLETO') j.add('customer.document', 'is required for BOLETO');
    return null;
  }
  const parsed = parseDocument(document);
  if (parsed.ok) return parsed.value;
  j.add('customer.document', parsed.refusal.message);
  return null;
}

/**
 * Shipping is required when something must be delivered. Items are counted even when broken, so one
 * answer says all, but not in an array of the wrong length, which is not looked into.
 */
function checkShippingNeeded(j: Judgement): void {
  const items: unknown = j.body.items;
  const lookedInto = Array.isArray(items) && !j.errors.some((e) => e.field === 'items');
  const anyTangible = lookedInto && items.some((it: unknown) => isPlainObject(it) && it.tangible === true);
  if (anyTangible && (j.body.shipping === undefined || j.body.shipping === null)) j.add('shipping', 'is required when any item is tangible');
}

/** §4: amount = Σ unitPrice × quantity + shipping.fee, in BigInt since the sum may pass 2^53; only once its parts are sound. */
function checkTotal(j: Judgement): void {
  if (!j.sound('amount') || !j.sound('items') || !j.sound('shipping')) return;
  const { amount, items, shipping } = j.body;
  const expected = items.reduce((sum, it) => sum + BigInt(it.unitPrice) * BigInt(it.quantity), BigInt(shipping?.fee ?? 0));
  if (expected === BigInt(amount)) return;
  j.add('amount', `must equal the sum of unitPrice × quantity over items plus shipping.fee: expected ${expected}, got ${amount}`);
}

const METHOD_PARTS = {
  card: ['CREDIT_CARD', 'DEBIT_CARD'],
  authentication: ['CREDIT_CARD', 'DEBIT_CARD'],
  installments: ['CREDIT_CARD'],
  pix: ['PIX'],
  boleto: ['BOLETO'],
} as const satisfies Record<string, readonly PaymentMethod[]>;

/**
 * Each method-specific part is judged against the method: refused whole (null counts as not sent)
 * where the method does not take it, and not judged at all without a known method to apply it to.
 */
function checkMethodParts(j: Judgement): PaymentMethod | null {
  const method = j.sound('paymentMethod') ? j.body.paymentMethod : null;
  for (const [part, methods] of Object.entries(METHOD_PARTS)) {
    if (method !== null && (methods as readonly string[]).includes(method)) continue;
    j.forget(part);
    const value = j.body[part as keyof typeof METHOD_PARTS];
    if (method !== null && value !== undefined && value !== null) j.add(part, `must not be sent for ${method}`);
  }
  return method;
}

function checkCard(j: Judgement, method: 'CREDIT_CARD' | 'DEBIT_CARD', now: Date): CardDetails | null {
  const card = j.body.card;
  if (card === undefined || card === null) {
    j.add('card', 'is required');
    return null;
  }
  if (j.errors.some((e) => e.field === 'card')) return null;
  const typed = new Set(j.errors.map((e) => e.field));
  const result = validateCard(card, method, now);
  if (result.ok) return { ...pick(card, 'number', 'holderName', 'expirationMonth', 'expirationYear'), ...result.value };
  // The schema has already said what is wrong with a field's type.
  for (const e of result.refusal.details ?? []) if (!typed.has(e.field)) j.add(e.field, e.message);
  return null;
}

const loopback_hosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Required for DEBIT_CARD (acquirers authenticate every online debit); the return is https, or http on this machine. */
function checkAuthentication(j: Judgement, method: 'CREDIT_CARD' | 'DEBIT_CARD'): AuthenticationInput | null {
  const given = j.body.authentication;
  if (given === undefined || given === null) {
    if (method === 'DEBIT_CARD') j.add('authentication', 'is required for DEBIT_CARD (3-D Secure)');
    return null;
  }
  if (!isPlainObject(given)) return null; // the schema has named it
  // Each part is judged once its own type is sound, so one answer names every field at fault.
  if (j.sound('authentication.returnUrl')) {
    const url = URL.parse(given.returnUrl);
    if (url === null) j.add('authentication.returnUrl', 'must be a valid URL');
    else if (url.protocol !== 'https:' && !loopback_hosts.has(url.hostname))
      j.add('authentication.returnUrl', 'must be https:// (http:// only on loopback)');
  }
  if (j.sound('authentication.ip') && isIP(given.ip) === 0) j.add('authentication.ip', 'must be an IPv4 or IPv6 address');
  if (!j.sound('authentication')) return null;
  const b = given.browser;
  const browser = pick(b, 'userAgent', 'acceptHeader', 'language', 'colorDepth', 'screenHeight', 'screenWidth', 'timeZoneOffset', 'javaEnabled');
  return { returnUrl: given.returnUrl, browser, ip: given.ip };
}

function checkDueDate(j: Judgement, now: Date): string {
  const today = saoPauloDate(now);
  const dueDate = j.sound('boleto') ? j.body.boleto?.dueDate : null;
  if (dueDate === undefined || dueDate === null) return addDays(today, BOLETO_DEFAULT_DAYS);
  // Plain string order is date order for 4-digit years.
  if (dueDate < today) j.add('boleto.dueDate', `must be today (${today}, America/Sao_Paulo) or later`);
  return dueDate;
}

// Absent means the default; an explicit null is the seller asking for a charge that never expires.
function pixExpiry(pix: SaleBody['pix']): number | null {
  const seconds = pix?.expiresInSeconds;
  return seconds === undefined ? DEFAULT_PIX_EXPIRY_SECONDS : seconds;
}

// Key order is kept: the sale answer and notifications carry shipping as this object's JSON text.
function shippingOf(s: NonNullable<SaleBody['shipping']>): ShippingInput {
  return {
    street: s.street,
    number: s.number,
    complement: s.complement ?? null,
    neighborhood: s.neighborhood,
    city: s.city,
    state: s.state,
    zipCode: s.zipCode,
    fee: s.fee,
  };
}

function pick<T extends object, K extends keyof T>(from: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, from[k]])) as Pick<T, K>;
}

/** Every §4 violation of `body` at once, or the normalised sale. `now` fixes "today" and card expiry. */
export function validateSaleRequest(body: unknown, now: Date): SaleRequestResult {
  if (!isPlainObject(body)) return invalid([{ field: 'body', message: 'must be a JSON object' }]);
  const { data, errors } = checkSaleBody(body);
  const j = new Judgement(data, errors);
  const method = checkMethodParts(j);
  const document = checkDocument(j, method);
  checkShippingNeeded(j);
  checkTotal(j);
  const card = method === 'CREDIT_CARD' || method === 'DEBIT_CARD' ? checkCard(j, method, now) : null;
  const authentication = method === 'CREDIT_CARD' || method === 'DEBIT_CARD' ? checkAuthentication(j, method) : null;
  const dueDate = method === 'BOLETO' ? checkDueDate(j, now) : null;
  if (j.errors.length > 0 || method === null) return invalid(j.errors);
  const b = j.body;
  const head = {
    amount: b.amount,
    customer: { name: b.customer.name, email: b.customer.email, document, phone: b.customer.phone ?? null },
    items: b.items.map((it) => pick(it, 'title', 'unitPrice', 'quantity', 'tangible')),
    postbackUrl: b.postbackUrl ?? null,
  };
  const shipping = b.shipping ? shippingOf(b.shipping) : null;
  const none = { installments: null, card: null, pix: null, boleto: null, authentication: null };
  if (method === 'PIX') return ok({ ...head, paymentMethod: method, ...none, shipping, pix: { expiresInSeconds: pixExpiry(b.pix) } });
  if (method === 'BOLETO' && dueDate !== null) return ok({ ...head, paymentMethod: method, ...none, shipping, boleto: { dueDate } });
  if (method === 'CREDIT_CARD' && card !== null)
    return ok({ ...head, paymentMethod: method, ...none, installments: b.installments ?? 1, card, shipping, authentication });
  if (method === 'DEBIT_CARD' && card !== null && authentication !== null)
    return ok({ ...head, paymentMethod: method, ...none, card, shipping, authentication });
  throw new Error(`sale request: a ${method} sale passed every check without its part`);
}
