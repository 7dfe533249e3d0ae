/**
 * PIX keys as the DICT (Diretório de Identificadores de Contas Transacionais) accepts them, for the
 * cashout destination (CONTRACT §8 step 3) and the platform's own key (PIX_RECEIVER_KEY). Pure: returns
 * the normalised key or the reason it is refused.
 */
import { isValidCnpj, isValidCpf, normalizeDocument } from './documents.ts';
import { brazilianPhoneProblem } from './phone-area-codes.ts';
import { ok, type Result, refuse } from './result.ts';

export type PixKeyType = 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'RANDOM';

export const PIX_KEY_TYPES: readonly PixKeyType[] = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'];

/** DICT's limit for every key type, hence the BR Code's field 26-01 limit and PIX_RECEIVER_KEY's. */
export const PIX_KEY_MAX_LENGTH = 77;

// DICT-like: the RFC 5322 "atext" local part without `%`, domain labels of letters, digits and inner
// hyphens (≤ 63 each), at least one dot. Applied after lower-casing, so only a-z is listed.
const EMAIL = /^[a-z0-9.!#$&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
// +55 then the national number; which area codes and first digits exist is phone-area-codes.ts's rule.
const PHONE = /^\+55(\d{10,11})$/;
// EVP: UUID shape only; BCB's own examples are not version 4, so the version nibble is not checked.
const EVP = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CPF_SHAPE = /^\d{11}$/;
const CNPJ_SHAPE = /^[0-9A-Z]{12}\d{2}$/;

// Reasons are clauses about the key, so each caller names it: "pixKey is not a valid CPF key: …".
const fail = (reason: string): Result<string> => refuse('INVALID_PIX_KEY', reason);
const allEqual = (s: string): boolean => [...s].every((c) => c === s[0]);

function cpfKey(raw: string): Result<string> {
  const key = normalizeDocument(raw);
  if (!CPF_SHAPE.test(key)) return fail('a CPF is 11 digits (punctuation allowed)');
  if (allEqual(key)) return fail('a CPF of 11 equal digits is never issued');
  return isValidCpf(key) ? ok(key) : fail('its check digits (the last two) are wrong');
}

function cnpjKey(raw: string): Result<string> {
  const key = normalizeDocument(raw);
  if (!CNPJ_SHAPE.test(key)) return fail('a CNPJ is 14 characters, 12 digits or letters then 2 check digits (punctuation allowed)');
  if (allEqual(key)) return fail('a CNPJ of 14 equal characters is never issued');
  return isValidCnpj(key) ? ok(key) : fail('its check digits (the last two) are wrong');
}

function emailKey(raw: string): Result<string> {
  const key = raw.trim().toLowerCase();
  if (key.length > PIX_KEY_MAX_LENGTH) return fail(`an e-mail key is at most ${PIX_KEY_MAX_LENGTH} characters`);
  return EMAIL.test(key) ? ok(key) : fail('it is not an e-mail address such as name@example.com (ASCII only)');
}

function phoneKey(raw: string): Result<string> {
  // Spaces, dashes, dots and parentheses are display formatting; the DICT key is bare E.164.
  const key = raw.replace(/[\s().-]/g, '');
  const national = PHONE.exec(key)?.[1];
  if (national === undefined) return fail('a phone key is +55, the area code (DDD) and the number, such as +5511987654321');
  const problem = brazilianPhoneProblem(national);
  return problem === null ? ok(key) : fail(problem);
}

function randomKey(raw: string): Result<string> {
  const key = raw.trim().toLowerCase();
  return EVP.test(key) ? ok(key) : fail('a random key is a UUID, hexadecimal digits grouped 8-4-4-4-12');
}

const BY_TYPE: Record<PixKeyType, (raw: string) => Result<string>> = {
  CPF: cpfKey,
  CNPJ: cnpjKey,
  EMAIL: emailKey,
  PHONE: phoneKey,
  RANDOM: randomKey,
};

/** Validates `raw` as a key of `type` and returns it in the DICT's canonical form. */
export function normalizePixKey(type: PixKeyType, raw: string): Result<string> {
  // hasOwn: an unchecked type such as "toString" must not reach Object.prototype.
  const check = Object.hasOwn(BY_TYPE, type) ? BY_TYPE[type] : undefined;
  if (!check) return fail(`unknown pixKeyType ${String(type)}`);
  if (typeof raw !== 'string') return fail('a key must be a string');
  const result = check(raw);
  if (result.ok && result.value.length > PIX_KEY_MAX_LENGTH) return fail(`a key is at most ${PIX_KEY_MAX_LENGTH} characters`);
  return result;
}

/**
 * The type a key without a declared type has, read from its shape: `@` an e-mail, `+` a phone, a
 * UUID a random key, 11 digits a CPF, 14 characters of a CNPJ a CNPJ (document punctuation allowed);
 * null when it looks like none. The key's validity is normalizePixKey's question.
 */
export function pixKeyTypeOf(raw: string): PixKeyType | null {
  if (typeof raw !== 'string') return null;
  const key = raw.trim();
  if (key.includes('@')) return 'EMAIL';
  if (key.startsWith('+')) return 'PHONE';
  if (EVP.test(key.toLowerCase())) return 'RANDOM';
  const document = normalizeDocument(key);
  if (CPF_SHAPE.test(document)) return 'CPF';
  if (CNPJ_SHAPE.test(document)) return 'CNPJ';
  return null;
}
