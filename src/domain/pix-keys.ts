/**
 * PIX keys as the DICT (Diretório de Identificadores de Contas Transacionais) accepts them, for the
 * cashout destination (CONTRACT §8 step 3). Pure: returns the normalised key or the reason it is refused.
 */
import { isValidCnpj, isValidCpf, normalizeDocument } from './documents.ts';
import { ok, type Result, refuse } from './result.ts';

export type PixKeyType = 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'RANDOM';

export const PIX_KEY_TYPES: readonly PixKeyType[] = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'];

/** DICT's limit for every key type, hence the BR Code's field 26-01 limit and PIX_RECEIVER_KEY's. */
export const PIX_KEY_MAX_LENGTH = 77;

// DICT-like: the RFC 5322 "atext" local part without `%`, domain labels of letters, digits and inner
// hyphens (≤ 63 each), at least one dot. Applied after lower-casing, so only a-z is listed.
const EMAIL = /^[a-z0-9.!#$&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
// +55, DDD 11–99 (never starts with 0, and 10 is not a DDD), then 8 (landline) or 9 (mobile) digits.
const PHONE = /^\+55(?:1[1-9]|[2-9]\d)\d{8,9}$/;
// EVP: UUID shape only; BCB's own examples are not version 4, so the version nibble is not checked.
const EVP = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const fail = (reason: string): Result<string> => refuse('INVALID_PIX_KEY', reason);

function cpfKey(raw: string): Result<string> {
  const key = normalizeDocument(raw);
  return isValidCpf(key) ? ok(key) : fail('pixKey is not a valid CPF');
}

function cnpjKey(raw: string): Result<string> {
  const key = normalizeDocument(raw);
  return isValidCnpj(key) ? ok(key) : fail('pixKey is not a valid CNPJ');
}

function emailKey(raw: string): Result<string> {
  const key = raw.trim().toLowerCase();
  if (key.length > PIX_KEY_MAX_LENGTH) return fail(`pixKey e-mail is longer than ${PIX_KEY_MAX_LENGTH} characters`);
  return EMAIL.test(key) ? ok(key) : fail('pixKey is not a valid e-mail address');
}

function phoneKey(raw: string): Result<string> {
  // Spaces, dashes, dots and parentheses are display formatting; the DICT key is bare E.164.
  const key = raw.replace(/[\s().-]/g, '');
  return PHONE.test(key) ? ok(key) : fail('pixKey is not a Brazilian phone in E.164 form (+55, DDD, 8-9 digits)');
}

function randomKey(raw: string): Result<string> {
  const key = raw.trim().toLowerCase();
  return EVP.test(key) ? ok(key) : fail('pixKey is not a random key (UUID 8-4-4-4-12 hex)');
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
  if (typeof raw !== 'string') return fail('pixKey must be a string');
  const result = check(raw);
  if (result.ok && result.value.length > PIX_KEY_MAX_LENGTH) return fail(`pixKey is longer than ${PIX_KEY_MAX_LENGTH} characters`);
  return result;
}
