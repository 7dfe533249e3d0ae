/**
 * Brazilian taxpayer documents: CPF (people, 11 digits) and CNPJ (companies, 14 characters, numeric
 * or alphanumeric from July 2026). Pure: no I/O, never throws for bad input.
 * Rules and vectors: docs BRAZIL.md (CPF 52998224725, CNPJ 11222333000181 and 12ABC34501DE35).
 */

import { ok, type Result, refuse } from './result.ts';

const CPF_SHAPE = /^\d{11}$/;
// Receita Federal's alphanumeric CNPJ: 12 characters [0-9A-Z], then two numeric check digits.
const CNPJ_SHAPE = /^[0-9A-Z]{12}\d{2}$/;
const CPF_BASE = /^\d{9}$/;
const CNPJ_BASE = /^[0-9A-Z]{12}$/;

const CNPJ_WEIGHTS_1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const CNPJ_WEIGHTS_2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];

/** Strips the usual mask characters (`.`, `-`, `/`, whitespace) and upper-cases (alphanumeric CNPJ). */
export function normalizeDocument(raw: string): string {
  return raw.replace(/[.\-/\s]/g, '').toUpperCase();
}

// ASCII − 48: digits keep their value and A..Z become 17..42, so one formula serves both CNPJ kinds.
const charValue = (c: string): number => c.charCodeAt(0) - 48;

/** The mod-11 rule shared by CPF and CNPJ: remainder below 2 gives 0, else 11 − remainder. */
function mod11Dv(chars: string, weights: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < chars.length; i++) sum += charValue(chars[i]!) * weights[i]!;
  const r = sum % 11;
  return r < 2 ? 0 : 11 - r;
}

const allEqual = (s: string): boolean => [...s].every((c) => c === s[0]);

/** The two check digits of a 9-digit CPF base, or null for a malformed base. */
export function cpfCheckDigits(base9: string): string | null {
  if (!CPF_BASE.test(base9)) return null;
  const dv1 = mod11Dv(base9, [10, 9, 8, 7, 6, 5, 4, 3, 2]);
  const dv2 = mod11Dv(base9 + dv1, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${dv1}${dv2}`;
}

/** The two check digits of a 12-character CNPJ base ([0-9A-Z], upper case), or null for a malformed base. */
export function cnpjCheckDigits(base12: string): string | null {
  if (!CNPJ_BASE.test(base12)) return null;
  const dv1 = mod11Dv(base12, CNPJ_WEIGHTS_1);
  const dv2 = mod11Dv(base12 + dv1, CNPJ_WEIGHTS_2);
  return `${dv1}${dv2}`;
}

/** Exactly 11 digits (already normalised), not all equal, check digits right. */
export function isValidCpf(digits: string): boolean {
  if (!CPF_SHAPE.test(digits) || allEqual(digits)) return false;
  return cpfCheckDigits(digits.slice(0, 9)) === digits.slice(9);
}

/** Exactly 14 characters (already normalised, upper case), numeric or alphanumeric, check digits right. */
export function isValidCnpj(chars: string): boolean {
  // All-equal digits (00000000000000 …) pass the arithmetic but are reserved, never issued.
  if (!CNPJ_SHAPE.test(chars) || allEqual(chars)) return false;
  return cnpjCheckDigits(chars.slice(0, 12)) === chars.slice(12);
}

/** A CPF (11 digits) or CNPJ (14 characters) with optional punctuation; the value comes back normalised. */
export function parseDocument(raw: string): Result<string> {
  if (typeof raw !== 'string') return notADocument(); // callers may hand us unchecked JSON
  const value = normalizeDocument(raw);
  if (value.length === 11 ? isValidCpf(value) : isValidCnpj(value)) return ok(value);
  return notADocument();
}

const notADocument = () => refuse('VALIDATION_ERROR', 'must be a valid CPF or CNPJ');
