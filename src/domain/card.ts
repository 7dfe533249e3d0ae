/**
 * Card checks for a sale (CONTRACT §4): Luhn, brand, debit support, expiry, CVV, holder name, and
 * a keyed fingerprint. Pure: returns values, never throws for bad input. Only brand, BIN and last
 * four leave this module (PCI DSS 3.4.1); the caller must drop the PAN and the CVV (3.3.1).
 */
import { createHmac } from 'node:crypto';
import creditCardType from 'credit-card-type';
import type { FieldError } from './errors.ts';
import { invalid, ok, type Result } from './result.ts';

export type CardBrand = 'VISA' | 'MASTERCARD' | 'ELO' | 'AMEX' | 'HIPERCARD' | 'DINERS';
export type CardPaymentMethod = 'CREDIT_CARD' | 'DEBIT_CARD';

export interface CardInput {
  number: string;
  holderName: string;
  expirationMonth: number;
  expirationYear: number;
  cvv: string;
}

/** What may be kept of a valid card (PCI DSS 3.4.1). */
export interface CardCheck {
  brand: CardBrand;
  lastFour: string;
  bin: string;
}

/** Brands our acquirer takes for debit (BRAZIL.md). */
export const DEBIT_BRANDS: readonly CardBrand[] = ['VISA', 'MASTERCARD', 'ELO'];

const FROM_LIBRARY: Record<string, CardBrand> = {
  visa: 'VISA',
  mastercard: 'MASTERCARD',
  elo: 'ELO',
  'american-express': 'AMEX',
  hipercard: 'HIPERCARD',
  'diners-club': 'DINERS',
};

// BRAZIL.md's Elo and Hipercard BINs, checked before the library: they overlap Visa and Discover
// ranges, and credit-card-type 10.3 classifies Elo's 650923 as Troy.
const BIN_OVERRIDES: readonly [from: number, to: number, brand: CardBrand][] = [
  [606282, 606282, 'HIPERCARD'],
  ...(
    [
      [401178, 401179],
      [431274, 431274],
      [438935, 438935],
      [451416, 451416],
      [457393, 457393],
      [457631, 457632],
      [504175, 504175],
      [506699, 506778],
      [509000, 509999],
      [627780, 627780],
      [636297, 636297],
      [636368, 636368],
      [650031, 650033],
      [650035, 650051],
      [650405, 650439],
      [650485, 650538],
      [650541, 650598],
      [650700, 650718],
      [650720, 650727],
      [650901, 650978],
      [651652, 651679],
      [655000, 655019],
      [655021, 655058],
    ] as const
  ).map(([from, to]): [number, number, CardBrand] => [from, to, 'ELO']),
];

const DIGITS = /^\d+$/;

/** Luhn (mod 10) over a digits-only string; false for anything else. */
export function luhnValid(number: string): boolean {
  if (typeof number !== 'string' || number.length < 2 || !DIGITS.test(number)) return false;
  let sum = 0;
  for (let i = number.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = Number(number[i]);
    if (double) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** The brand of a digits-only card number, or null when it is none of the brands we accept. */
export function detectBrand(number: string): CardBrand | null {
  if (typeof number !== 'string' || !DIGITS.test(number)) return null;
  const bin = Number(number.slice(0, 6));
  if (number.length >= 6) {
    const hit = BIN_OVERRIDES.find(([from, to]) => bin >= from && bin <= to);
    if (hit) return hit[2];
  }
  // The library's patterns are at most 8 digits long, so a number's first 8 decide its brand; the
  // library rebuilds its tables on every call, so a prefix's answer is kept (the issuer part of a
  // number, never the number).
  if (number.length < library_prefix) return brandFromLibrary(number);
  const prefix = number.slice(0, library_prefix);
  let brand = brandsByPrefix.get(prefix);
  if (brand === undefined) {
    if (brandsByPrefix.size >= prefixes_kept) brandsByPrefix.clear();
    brand = brandFromLibrary(prefix);
    brandsByPrefix.set(prefix, brand);
  }
  return brand;
}

const library_prefix = 8;
const prefixes_kept = 10_000;
const brandsByPrefix = new Map<string, CardBrand | null>();

function brandFromLibrary(digits: string): CardBrand | null {
  const matches = creditCardType(digits);
  // More than one match means the prefix is ambiguous: not a brand we can name.
  if (matches.length !== 1) return null;
  return FROM_LIBRARY[matches[0]!.type] ?? null;
}

type NumberCheck = { brand: CardBrand | null; error: string | null };

function checkNumber(number: unknown, method: CardPaymentMethod): NumberCheck {
  if (typeof number !== 'string' || !/^\d{12,19}$/.test(number)) return { brand: null, error: 'must be 12 to 19 digits' };
  if (!luhnValid(number)) return { brand: null, error: 'is not a valid card number (Luhn check failed)' };
  const brand = detectBrand(number);
  if (!brand) return { brand: null, error: 'card brand is not supported (Visa, Mastercard, Elo, Amex, Hipercard, Diners)' };
  if (method === 'DEBIT_CARD' && !DEBIT_BRANDS.includes(brand)) {
    return { brand, error: `debit is not supported for brand ${brand} (only Visa, Mastercard, Elo)` };
  }
  return { brand, error: null };
}

function checkExpiry(month: unknown, year: unknown, now: Date): FieldError[] {
  const errors: FieldError[] = [];
  const monthOk = Number.isInteger(month) && (month as number) >= 1 && (month as number) <= 12;
  const yearOk = Number.isInteger(year) && (year as number) >= 1000 && (year as number) <= 9999;
  if (!monthOk) errors.push({ field: 'card.expirationMonth', message: 'must be an integer from 1 to 12' });
  if (!yearOk) errors.push({ field: 'card.expirationYear', message: 'must be a 4-digit year' });
  if (!monthOk || !yearOk) return errors;
  // A card is good through the last day of its expiry month; UTC so the answer does not hang on the host's zone.
  const firstInstantAfter = Date.UTC(year as number, month as number, 1);
  if (now.getTime() >= firstInstantAfter) {
    const field = (year as number) < now.getUTCFullYear() ? 'card.expirationYear' : 'card.expirationMonth';
    errors.push({ field, message: 'card is expired' });
  }
  return errors;
}

function checkCvv(cvv: unknown, brand: CardBrand | null): FieldError[] {
  // Without a known brand either length is plausible; the number error already explains the rest.
  const pattern = brand === 'AMEX' ? /^\d{4}$/ : brand ? /^\d{3}$/ : /^\d{3,4}$/;
  if (typeof cvv === 'string' && pattern.test(cvv)) return [];
  return [{ field: 'card.cvv', message: brand === 'AMEX' ? 'must be 4 digits for Amex' : brand ? 'must be 3 digits' : 'must be 3 or 4 digits' }];
}

function checkHolder(name: unknown): FieldError[] {
  if (typeof name === 'string' && name.trim().length >= 1 && name.length <= 100) return [];
  return [{ field: 'card.holderName', message: 'must be 1 to 100 characters, not blank' }];
}

/** Every problem with the card at once (CONTRACT §4), or its brand, last four and BIN. */
export function validateCard(card: CardInput, method: CardPaymentMethod, now: Date): Result<CardCheck> {
  if (typeof card !== 'object' || card === null) return invalid([{ field: 'card', message: 'must be an object' }]);
  const { brand, error } = checkNumber(card.number, method);
  const errors: FieldError[] = [
    ...(error ? [{ field: 'card.number', message: error }] : []),
    ...checkHolder(card.holderName),
    ...checkExpiry(card.expirationMonth, card.expirationYear, now),
    ...checkCvv(card.cvv, brand),
  ];
  if (errors.length > 0 || !brand) return invalid(errors);
  return ok({ brand, lastFour: card.number.slice(-4), bin: card.number.slice(0, 6) });
}

/** Lower-case hex HMAC-SHA256 of the PAN: finds repeat cards without keeping the number. */
export function cardFingerprint(number: string, key: string): string {
  return createHmac('sha256', key).update(number).digest('hex');
}
