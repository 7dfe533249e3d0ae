import { centsToReaisString } from '../../../domain/money.ts';

/**
 * Amounts of the API Pix are strings of reais with exactly two decimals, `\d{1,10}\.\d{2}` in the
 * official file (unanchored there; anchored here, or "x1.00y" would pass).
 */
const VALOR = /^\d{1,10}\.\d{2}$/;
// Ten digits of reais, as the pattern allows: 9,999,999,999.99, still far below 2^53 cents.
const max_cents = 999_999_999_999;

/** Cents → the API Pix's "123.45". Throws RangeError for anything the file's pattern cannot carry. */
export function valorFromCents(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0 || cents > max_cents) {
    throw new RangeError(`API Pix valor: cents must be an integer from 0 to ${max_cents}, got ${cents}`);
  }
  return centsToReaisString(cents);
}

export function isValor(value: unknown): value is string {
  return typeof value === 'string' && VALOR.test(value);
}

/** The API Pix's "123.45" → 12345 cents, exactly (digits, never a float). Throws RangeError unless `\d{1,10}\.\d{2}`. */
export function centsFromValor(valor: string): number {
  if (!isValor(valor)) throw new RangeError(`API Pix valor must be reais with two decimals (\\d{1,10}\\.\\d{2}), got ${JSON.stringify(valor)}`);
  // At most 12 digits once the point is gone: an exact integer (leading zeros, which the pattern allows, drop out).
  return Number(valor.replace('.', ''));
}
