/**
 * PIX BR Code ("copia e cola") per the BCB profile of EMV MPM (BRAZIL.md, "PIX BR Code").
 * Pure functions: no I/O besides crypto randomness for txids.
 */
import { PIX_KEY_MAX_LENGTH } from './pix-keys.ts';
import { randomAlphanumeric } from './random.ts';
import { ok, type Result, refuse } from './result.ts';

const GUI = 'br.gov.bcb.pix';
const MAX_TLV_VALUE = 99;
const MAX_AMOUNT_CHARS = 13;
const TXID_RE = /^[A-Za-z0-9]{1,25}$/;
// EMV "ans" values: printable ASCII only, so TLV lengths count bytes and characters alike.
const PRINTABLE_ASCII_RE = /^[\x20-\x7E]*$/;

const CRC16_TABLE = buildCrc16Table();

function buildCrc16Table(): Uint16Array {
  const table = new Uint16Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n << 8;
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? (c << 1) ^ 0x1021 : c << 1;
    table[n] = c & 0xffff;
  }
  return table;
}

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0) as 4 upper-case hex chars. */
export function crc16ccittFalse(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  let crc = 0xffff;
  for (const b of bytes) crc = ((crc << 8) ^ CRC16_TABLE[((crc >> 8) ^ b) & 0xff]!) & 0xffff;
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** One TLV field, not normalised: the caller owns the value. Throws on values a BR Code cannot carry (a bug). */
export function tlv(id: string, value: string): string {
  if (!/^\d{2}$/.test(id)) throw new Error(`BR Code: bad field id ${JSON.stringify(id)}`);
  if (value.length === 0 || value.length > MAX_TLV_VALUE) {
    throw new Error(`BR Code: field ${id} length ${value.length} outside 1..${MAX_TLV_VALUE}`);
  }
  if (!PRINTABLE_ASCII_RE.test(value)) throw new Error(`BR Code: field ${id} is not printable ASCII`);
  return id + String(value.length).padStart(2, '0') + value;
}

/** Fields in order (each `[id, value]`, templates pre-assembled with `tlv`), then `6304` + CRC appended. */
export function assembleBrCode(fields: ReadonlyArray<readonly [id: string, value: string]>): string {
  const body = `${fields.map(([id, value]) => tlv(id, value)).join('')}6304`;
  return body + crc16ccittFalse(body);
}

export interface BrCodeInput {
  key: string;
  amountCents?: number | null;
  merchantName: string;
  merchantCity: string;
  txid: string;
  description?: string;
}

/** A static BR Code for one sale: receiver key, optional amount, merchant, txid. */
export function buildBrCode(input: BrCodeInput): string {
  const fields: Array<[string, string]> = [
    ['00', '01'],
    ['26', merchantAccount(input.key, input.description)],
    ['52', '0000'],
    ['53', '986'],
  ];
  if (input.amountCents != null) fields.push(['54', amountField(input.amountCents)]);
  fields.push(
    ['58', 'BR'],
    ['59', merchantFieldOrThrow('merchantName', input.merchantName)],
    ['60', merchantFieldOrThrow('merchantCity', input.merchantCity)],
    ['62', tlv('05', checkTxid(input.txid))],
  );
  return assembleBrCode(fields);
}

function merchantAccount(key: string, description: string | undefined): string {
  if (key.length === 0 || key.length > PIX_KEY_MAX_LENGTH) throw new Error(`BR Code: key length ${key.length} outside 1..${PIX_KEY_MAX_LENGTH}`);
  const head = tlv('00', GUI) + tlv('01', key);
  // The description is optional decoration: cut it to the room left in the 99-char template
  // rather than fail a sale over it.
  const room = MAX_TLV_VALUE - head.length - 4;
  const text = asciiText(description ?? '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, Math.max(room, 0))
    .trimEnd();
  return text ? head + tlv('02', text) : head;
}

/** Integer cents to "reais.cc" by string arithmetic: no floating point, so 1050 is exactly "10.50". */
function amountField(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents <= 0) throw new Error(`BR Code: amountCents ${cents} is not a positive integer`);
  const digits = String(cents).padStart(3, '0');
  const amount = `${digits.slice(0, -2)}.${digits.slice(-2)}`;
  if (amount.length > MAX_AMOUNT_CHARS) throw new Error(`BR Code: amount ${amount} longer than ${MAX_AMOUNT_CHARS} chars`);
  return amount;
}

function checkTxid(txid: string): string {
  if (txid !== '***' && !TXID_RE.test(txid)) throw new Error(`BR Code: bad txid ${JSON.stringify(txid)}`);
  return txid;
}

/** Accents off (NFD, combining marks dropped), then anything outside printable ASCII dropped. */
function asciiText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7E]/g, '');
}

export type MerchantField = 'merchantName' | 'merchantCity';

/** Field 59 (merchant name) holds 25 characters, field 60 (city) 15. */
export const MERCHANT_FIELD_MAX: Readonly<Record<MerchantField, number>> = { merchantName: 25, merchantCity: 15 };

/**
 * Fields 59 and 60, the one rule start-up (PIX_MERCHANT_NAME, PIX_MERCHANT_CITY) and buildBrCode share:
 * accents off, ASCII upper case, [A-Z0-9 ] only, single spaces. Refused: text with no letter or digit
 * (the field would be empty), and text longer than the field once so written, unless `cut` (then it is
 * cut to fit). Refusals are clauses for the caller to prefix with the field's name.
 */
export function merchantField(field: MerchantField, text: string, options: { cut?: boolean } = {}): Result<string> {
  const max = MERCHANT_FIELD_MAX[field];
  const out = asciiText(text)
    .toUpperCase()
    .replace(/[^A-Z0-9 ]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
  if (!out) return refuse('VALIDATION_ERROR', 'has no letter or digit: a BR Code keeps only A-Z, 0-9 and spaces (accents removed)');
  if (out.length <= max) return ok(out);
  if (options.cut) return ok(out.slice(0, max).trimEnd());
  return refuse('VALIDATION_ERROR', `must be at most ${max} characters as a BR Code writes it ("${out}" is ${out.length})`);
}

/** The builder's use: long text is cut to fit; text with nothing left is a bug of the caller. */
function merchantFieldOrThrow(field: MerchantField, text: string): string {
  const value = merchantField(field, text, { cut: true });
  if (!value.ok) throw new Error(`BR Code: ${field} ${value.refusal.message}`);
  return value.value;
}

/**
 * Strict TLV parse of one level: every field `id(2 digits) len(2 digits) value`, lengths exact,
 * no duplicates. Throws on anything else.
 */
export function parseTlv(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  let i = 0;
  while (i < text.length) {
    const head = text.slice(i, i + 4);
    if (!/^\d{4}$/.test(head)) throw new Error(`BR Code: bad TLV header at ${i}`);
    const id = head.slice(0, 2);
    const len = Number(head.slice(2));
    const value = text.slice(i + 4, i + 4 + len);
    if (value.length !== len) throw new Error(`BR Code: field ${id} declares ${len} chars, ${value.length} left`);
    if (fields.has(id)) throw new Error(`BR Code: duplicate field ${id}`);
    fields.set(id, value);
    i += 4 + len;
  }
  return fields;
}

/**
 * Parses a BR Code's top level and checks its frame: `00` = `01` first, `63` (4 hex) last, and the
 * templates 26 and 62 well-formed. Does not check the CRC value (see `verifyBrCodeCrc`).
 */
export function parseBrCode(code: string): Map<string, string> {
  const fields = parseTlv(code);
  const ids = [...fields.keys()];
  if (ids[0] !== '00' || fields.get('00') !== '01') throw new Error('BR Code: must start with 000201');
  if (ids.at(-1) !== '63' || !/^[0-9A-F]{4}$/.test(fields.get('63') ?? '')) throw new Error('BR Code: must end with 6304 + CRC');
  for (const template of ['26', '62']) {
    const value = fields.get(template);
    if (value !== undefined) parseTlv(value);
  }
  return fields;
}

/** True when the code ends with `6304` + the CRC of everything before it, itself included. */
export function verifyBrCodeCrc(code: string): boolean {
  const crcAt = code.length - 4;
  if (crcAt < 4 || code.slice(crcAt - 4, crcAt) !== '6304') return false;
  return code.slice(crcAt) === crc16ccittFalse(code.slice(0, crcAt));
}

const TXID_LENGTH = 25;

/** A fresh `[A-Za-z0-9]` txid: 25 characters (~148 bits) for a static BR Code; an API Pix charge takes 26 to 35. */
export const newTxid = (length = TXID_LENGTH): string => randomAlphanumeric(length);
