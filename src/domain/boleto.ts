/**
 * Boleto bancário (FEBRABAN "cobrança"): the 44-digit barcode and the 47-digit linha digitável.
 * Pure: no I/O; bad input gives a result with `ok: false`. Layout and vectors: BRAZIL.md.
 *
 * Barcode: bank(3) currency(1) DV(1) factor(4) amount(10) free field(25).
 * Linha: [bank currency free 1-5 DV] [free 6-15 DV] [free 16-25 DV] [general DV] [factor amount].
 */

import { dateOfEpochDay, epochDay } from './calendar.ts';
import { ok, type Refused, type Result, refuse } from './result.ts';

export type BuildBoletoInput = { bankCode: string; amountCents: number; dueDate: string; freeField: string };
export interface DigitableLine {
  digitableLine: string;
  barcode: string;
  bankCode: string;
  factor: number;
  amountCents: number;
  freeField: string;
}

/** Real (BRL). */
const CURRENCY = '9';
/** The amount field has 10 digits of cents. */
export const BOLETO_MAX_AMOUNT_CENTS = 9_999_999_999;

const DAY_MS = 86_400_000;
const FACTOR_BASE_MS = Date.UTC(1997, 9, 7); // 1997-10-07, factor 0
const FACTOR_MIN = 1000;
const FACTOR_CYCLE = 9000; // 1000..9999, then back to 1000 (first reset on 2025-02-22)

const baseEpochDay = FACTOR_BASE_MS / DAY_MS;

/**
 * FEBRABAN's due-date factor: days since 1997-10-07, kept in 1000..9999 by restarting at 1000 every
 * 9000 days. NaN for a malformed date or one before the factor reached 1000 (2000-07-03).
 */
export function dueDateFactor(dueDate: string): number {
  const day = typeof dueDate === 'string' ? epochDay(dueDate) : null;
  if (day === null) return NaN;
  const days = day - baseEpochDay;
  if (days < FACTOR_MIN) return NaN;
  return ((days - FACTOR_MIN) % FACTOR_CYCLE) + FACTOR_MIN;
}

/**
 * The inverse is ambiguous (a factor recurs every 9000 days), so it picks the candidate date nearest
 * `today` (YYYY-MM-DD). Null for factor 0 ("no due date") or bad input.
 */
export function dueDateFromFactor(factor: number, today: string): string | null {
  const todayDay = epochDay(today);
  if (todayDay === null || !Number.isInteger(factor) || factor < FACTOR_MIN || factor > 9999) return null;
  const cycles = Math.max(0, Math.round((todayDay - baseEpochDay - factor) / FACTOR_CYCLE));
  const days = factor + cycles * FACTOR_CYCLE;
  return dateOfEpochDay(baseEpochDay + days);
}

/** FEBRABAN module 10: weights 2,1,2,1… from the right, two-digit products have their digits summed. */
export function mod10(digits: string): number {
  let sum = 0;
  for (let i = digits.length - 1, weight = 2; i >= 0; i--, weight = 3 - weight) {
    const p = Number(digits[i]) * weight;
    sum += p > 9 ? p - 9 : p; // digit sum of 10..18 is p − 9
  }
  return (10 - (sum % 10)) % 10;
}

/** Barcode general DV over the 43 other digits: weights 2..9 cycling from the right; 0, 10, 11 → 1. */
export function mod11Boleto(digits: string): number {
  let sum = 0;
  for (let i = digits.length - 1, weight = 2; i >= 0; i--, weight = weight === 9 ? 2 : weight + 1) {
    sum += Number(digits[i]) * weight;
  }
  const dv = 11 - (sum % 11);
  return dv === 10 || dv === 11 ? 1 : dv; // 11 − r is never 0; r = 0 or 1 give 11 or 10
}

const withMod10 = (field: string): string => field + mod10(field);

/** The 47-digit linha digitável (no punctuation) of a 44-digit barcode. */
function lineFromBarcode(barcode: string): string {
  const free = barcode.slice(19);
  return (
    withMod10(barcode.slice(0, 4) + free.slice(0, 5)) +
    withMod10(free.slice(5, 15)) +
    withMod10(free.slice(15, 25)) +
    barcode[4] +
    barcode.slice(5, 19)
  );
}

/** The 44-digit barcode carried by a 47-digit linha (check digits of the fields dropped). */
function barcodeFromLine(line: string): string {
  const free = line.slice(4, 9) + line.slice(10, 20) + line.slice(21, 31);
  return line.slice(0, 4) + line[32] + line.slice(33, 47) + free;
}

function checkBuildInput(input: BuildBoletoInput, factor: number): string | null {
  // typeof first: RegExp.test would coerce a number such as 341 and let it through.
  if (typeof input.bankCode !== 'string' || !/^\d{3}$/.test(input.bankCode)) return 'bankCode must be 3 digits';
  const amount = input.amountCents;
  if (!Number.isSafeInteger(amount) || amount < 0 || amount > BOLETO_MAX_AMOUNT_CENTS) {
    return `amountCents must be an integer from 0 to ${BOLETO_MAX_AMOUNT_CENTS}`;
  }
  if (Number.isNaN(factor)) return 'dueDate must be a YYYY-MM-DD date from 2000-07-03 on';
  if (typeof input.freeField !== 'string' || !/^\d{25}$/.test(input.freeField)) return 'freeField must be 25 digits';
  return null;
}

/** Builds the barcode and the linha digitável of a boleto. */
export function buildBoleto(input: BuildBoletoInput): Result<{ barcode: string; digitableLine: string }> {
  const factor = dueDateFactor(input.dueDate);
  const problem = checkBuildInput(input, factor);
  if (problem) return refuse('VALIDATION_ERROR', problem);
  const tail = String(factor).padStart(4, '0') + String(input.amountCents).padStart(10, '0') + input.freeField;
  const head = input.bankCode + CURRENCY;
  const barcode = head + mod11Boleto(head + tail) + tail;
  return ok({ barcode, digitableLine: lineFromBarcode(barcode) });
}

/** `00190.00009 01234.567004 00000.001172 9 13120000015090`; anything but 47 digits comes back as is. */
export function formatDigitableLine(line47: string): string {
  if (!/^\d{47}$/.test(line47)) return line47;
  const l = line47;
  return `${l.slice(0, 5)}.${l.slice(5, 10)} ${l.slice(10, 15)}.${l.slice(15, 21)} ${l.slice(21, 26)}.${l.slice(26, 32)} ${l[32]} ${l.slice(33)}`;
}

/** Reads a linha digitável (dots and spaces allowed) and checks its three mod-10 DVs and the mod-11 DV. */
export function parseDigitableLine(line: string): Result<DigitableLine> {
  if (typeof line !== 'string') return badLine('linha digitável must be a string');
  const digits = line.replace(/[.\s]/g, '');
  if (!/^\d{47}$/.test(digits)) return badLine('linha digitável must have 47 digits');
  const fields: [number, number][] = [
    [0, 9],
    [10, 20],
    [21, 31],
  ];
  for (const [start, end] of fields) {
    if (mod10(digits.slice(start, end)) !== Number(digits[end])) return badLine(`wrong check digit at position ${end + 1}`);
  }
  const barcode = barcodeFromLine(digits);
  if (mod11Boleto(barcode.slice(0, 4) + barcode.slice(5)) !== Number(barcode[4])) return badLine('wrong general check digit');
  return ok({
    digitableLine: digits,
    barcode,
    bankCode: barcode.slice(0, 3),
    factor: Number(barcode.slice(5, 9)),
    amountCents: Number(barcode.slice(9, 19)),
    freeField: barcode.slice(19),
  });
}

const badLine = (reason: string): Refused => refuse('VALIDATION_ERROR', reason);

export function isValidDigitableLine(line: string): boolean {
  return parseDigitableLine(line).ok;
}

/**
 * A deterministic 25-digit free field for a sale: the zero-padded sale id. A real issuing bank
 * defines this field (agência, conta, carteira, "nosso número"); its layout replaces this one when a
 * bank is integrated. Throws RangeError for a non-integer or negative id: that is a bug, not input.
 */
export function freeFieldForSale(saleId: number): string {
  if (!Number.isSafeInteger(saleId) || saleId < 0) throw new RangeError(`sale id ${saleId} is not a non-negative safe integer`);
  return String(saleId).padStart(25, '0');
}
