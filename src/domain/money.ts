/**
 * Money is integer cents everywhere inside (CONTRACT §5); these helpers convert at the edges, per
 * the spec's unit table, and round the one way the contract allows: half-even to the cent.
 */

import { ok, type Refused, type Result, refuse } from './result.ts';

const badAmount = (reason: string): Refused => refuse('VALIDATION_ERROR', reason);

/** Throws for bugs only: callers hand us cents they already validated. */
function assertSafeInteger(value: number, what: string): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${what} must be a safe integer, got ${value}`);
}

/**
 * numerator / denominator rounded half-even (banker's rounding). Bigint because amount × basis
 * points can pass 2^53, where a float product would already be off by whole cents.
 */
export function roundHalfEven(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new RangeError('roundHalfEven: denominator is zero');
  // Normalise to a positive denominator so floor division below has one case.
  const [n, d] = denominator < 0n ? [-numerator, -denominator] : [numerator, denominator];
  let q = n / d; // truncates toward zero
  if (n % d !== 0n && n < 0n) q -= 1n; // now q = floor(n / d)
  const twiceRemainder = 2n * (n - q * d); // in [0, 2d)
  if (twiceRemainder > d) return q + 1n;
  if (twiceRemainder === d && q % 2n !== 0n) return q + 1n;
  return q;
}

/** round_half_even(amount × basisPoints / 10000), in cents. */
export function percentOf(amountCents: number, basisPoints: number): number {
  assertSafeInteger(amountCents, 'amountCents');
  assertSafeInteger(basisPoints, 'basisPoints');
  const cents = roundHalfEven(BigInt(amountCents) * BigInt(basisPoints), 10_000n);
  const result = Number(cents);
  assertSafeInteger(result, 'percentOf result');
  return result;
}

/** Cents → reais with two decimals ('100.50'): cashout response and notification (spec unit table). */
export function centsToReaisString(cents: number): string {
  assertSafeInteger(cents, 'cents');
  // String slicing, not division: dividing by 100 in floating point can misplace the last cent.
  const digits = String(Math.abs(cents)).padStart(3, '0');
  const sign = cents < 0 ? '-' : '';
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** Cents as a string ('15000'): sale creation response and transaction notifications. */
export function centsToString(cents: number): string {
  assertSafeInteger(cents, 'cents');
  return String(cents); // String(-0) is '0', so no sign leaks out of a zero
}

const REAIS_STRING = /^\d+(\.\d{1,2})?$/;
// String(n) of a finite positive number: plain decimal or exponent form ('1e-7', '1.5e+21').
const NUMBER_TEXT = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/**
 * Decimal text → exact cents. Works on the digits, never on a float, so '0.29' is 29 and not 28.
 * The text is either a validated reais string or String(n), the shortest round-trip form of n.
 */
function decimalTextToCents(text: string): Result<number> {
  const match = NUMBER_TEXT.exec(text);
  if (!match) return badAmount('must be a number in reais');
  const [, whole = '', fraction = '', exponent = '0'] = match;
  // value = digits × 10^scale, so cents = digits × 10^(scale + 2)
  const digits = BigInt(whole + fraction);
  const centsScale = Number(exponent) - fraction.length + 2;
  let cents: bigint;
  if (centsScale >= 0) {
    cents = digits * 10n ** BigInt(centsScale);
  } else {
    const divisor = 10n ** BigInt(-centsScale);
    if (digits % divisor !== 0n) return badAmount('must have at most two decimal places');
    cents = digits / divisor;
  }
  if (cents <= 0n) return badAmount('must be greater than zero');
  if (cents > BigInt(Number.MAX_SAFE_INTEGER)) return badAmount('is too large');
  return ok(Number(cents));
}

/**
 * The cashout `amount` (CONTRACT §8 step 2): a JSON number, or a string matching
 * ^\d+(\.\d{1,2})?$; greater than zero; at most two decimals; exact cents.
 */
export function parseReaisToCents(input: unknown): Result<number> {
  if (typeof input === 'string') {
    if (!REAIS_STRING.test(input)) return badAmount('must be a decimal number with at most two decimal places');
    return decimalTextToCents(input);
  }
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return badAmount('must be a finite number');
    if (input <= 0) return badAmount('must be greater than zero');
    // String(n) is the shortest text that reads back as n: what the client most likely wrote.
    // A float like 0.1 + 0.2 prints as 0.30000000000000004 and is refused for its decimals.
    return decimalTextToCents(String(input));
  }
  return badAmount('must be a number or a decimal string');
}
