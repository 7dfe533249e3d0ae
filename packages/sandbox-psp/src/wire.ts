/** What crosses the wire: money strings, BCB identifiers, timestamps. */
import { randomBytes, randomUUID } from 'node:crypto';

/** The API Pix's money pattern, anchored (the file's `\d{1,10}\.\d{2}` is unanchored). */
export const VALOR_RE = /^\d{1,10}\.\d{2}$/;
export const COB_TXID_RE = /^[a-zA-Z0-9]{26,35}$/;
export const PIX_TXID_RE = /^[a-zA-Z0-9]{1,35}$/;
export const E2E_ID_RE = /^[a-zA-Z0-9]{32}$/;
export const DEVOLUCAO_ID_RE = /^[a-zA-Z0-9]{1,35}$/;

/**
 * The ISPB written into the identifiers this PSP makes: a payer's bank in endToEndIds, itself in
 * rtrIds. 12345678 is the placeholder of the BCB's own examples; no real participant has it.
 */
export const SANDBOX_ISPB = '12345678';

export function valorOf(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError(`sandbox PSP: ${cents} is not an amount of cents`);
  return `${Math.trunc(cents / 100)}.${(cents % 100).toString().padStart(2, '0')}`;
}

/** "123.45" → 12345 by its digits (at most 12 of them: exact in a double), or null if malformed. */
export function centsOf(valor: unknown): number | null {
  if (typeof valor !== 'string' || !VALOR_RE.test(valor)) return null;
  return Number(valor.replace('.', ''));
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** n random [A-Za-z0-9], unbiased: bytes ≥ 248 (= 4 × 62) are rejected. */
export function randomAlnum(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) if (b < 248 && out.length < n) out += ALNUM[b % 62];
  }
  return out;
}

/** yyyyMMddHHmm in UTC, as the SPI writes it into endToEndIds and rtrIds. */
function minuteStamp(at: Date): string {
  return at.toISOString().slice(0, 16).replace(/[-T:]/g, '');
}

/** `E` + ISPB + yyyyMMddHHmm + 11 alphanumerics: 32 characters. */
export function newEndToEndId(at: Date): string {
  return `E${SANDBOX_ISPB}${minuteStamp(at)}${randomAlnum(11)}`;
}

/** `D` + ISPB + yyyyMMddHHmm + 11 alphanumerics: 32 characters. */
export function newRtrId(at: Date): string {
  return `D${SANDBOX_ISPB}${minuteStamp(at)}${randomAlnum(11)}`;
}

/** The capability part of a location URL: 128 random bits, as 32 hex digits. */
export function newLocationToken(): string {
  return randomUUID().replaceAll('-', '');
}

export const iso = (at: Date): string => at.toISOString();

/** RFC 3339 date-time with a time zone (what `inicio`/`fim` must be), or null. */
export function parseDateTime(text: unknown): Date | null {
  if (typeof text !== 'string') return null;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) return null;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** Drops undefined and null members, so optional fields are absent rather than null on the wire. */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as T;
}
