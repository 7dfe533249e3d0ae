/**
 * The embedded PSP's own encoders: the EMV BR Code of a charge (TLV fields, CRC-16/CCITT-FALSE) and a
 * boleto's FEBRABAN barcode and linha digitável. Written apart from the gateway's decoders on
 * purpose: a sandbox that borrowed them would hide a bug both sides share.
 */
const field = (id: string, value: string) => `${id}${value.length.toString().padStart(2, '0')}${value}`;

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over the UTF-8 bytes, four upper-case hex digits. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of new TextEncoder().encode(text)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = (crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** A BR Code of `fields` (id, value) in order, each template given as its nested fields; field 63 (the CRC) last. */
export function brCode(fields: [string, string | [string, string][]][]): string {
  const body = fields.map(([id, value]) => field(id, typeof value === 'string' ? value : value.map(([i, v]) => field(i, v)).join(''))).join('');
  const framed = `${body}6304`;
  return framed + crc16(framed);
}

/** Fields 59 and 60: accents and anything but A–Z, 0–9 and single spaces dropped, cut to `max`; null when nothing is left. */
export function merchantText(text: string, max: number): string | null {
  const plain = text
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '')
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter(Boolean)
    .join(' ');
  return plain === '' ? null : plain.slice(0, max).trimEnd();
}

// Boleto (FEBRABAN): barcode = bank(3) 9 DV factor(4) value(10) free(25); linha = three fields with a
// module-10 digit each, the barcode's DV, then factor and value.

const digitsOf = (text: string) => [...text].map(Number);

/** Module 10 of a linha's field: weights 2, 1, 2… from the right, the digits of each product summed. */
function module10(text: string): number {
  const sum = digitsOf(text)
    .reverse()
    .reduce((acc, d, i) => {
      const product = d * (i % 2 === 0 ? 2 : 1);
      return acc + Math.floor(product / 10) + (product % 10);
    }, 0);
  return (10 - (sum % 10)) % 10;
}

/** Module 11 of the barcode: weights 2 to 9 repeating from the right; 0, 10 and 11 are written 1. */
function module11(text: string): number {
  const sum = digitsOf(text)
    .reverse()
    .reduce((acc, d, i) => acc + d * (2 + (i % 8)), 0);
  const dv = 11 - (sum % 11);
  return dv >= 10 || dv === 0 ? 1 : dv;
}

/** Days since 1997-10-07, 1000 to 9999, starting over at 1000 after 9999 (2025-02-22 is 1000 again). */
function dueFactor(dueDate: string): number {
  const days = Math.round((Date.parse(`${dueDate}T00:00:00Z`) - Date.parse('1997-10-07T00:00:00Z')) / 86_400_000);
  if (!Number.isInteger(days) || days < 1000) throw new RangeError(`sandbox PSP: a boleto cannot be due ${dueDate}`);
  return days <= 9999 ? days : 1000 + ((days - 10_000) % 9000);
}

export interface BoletoCodes {
  barcode: string;
  /** 47 digits, no punctuation. */
  digitableLine: string;
}

/** A boleto of `cents` due `dueDate` at `bank`, its free field the charge's number written in 25 digits. */
export function boletoCodes(bank: string, cents: number, dueDate: string, chargeId: number): BoletoCodes {
  if (!/^\d{3}$/.test(bank) || !Number.isSafeInteger(cents) || cents < 0 || cents > 9_999_999_999)
    throw new RangeError('sandbox PSP: a boleto it cannot write');
  const free = chargeId.toString().padStart(25, '0');
  const rest = `${dueFactor(dueDate).toString().padStart(4, '0')}${cents.toString().padStart(10, '0')}${free}`;
  const head = `${bank}9`;
  const dv = module11(head + rest);
  const barcode = `${head}${dv}${rest}`;
  const parts = [head + free.slice(0, 5), free.slice(5, 15), free.slice(15, 25)];
  const digitableLine = `${parts.map((p) => p + module10(p)).join('')}${dv}${rest.slice(0, 14)}`;
  return { barcode, digitableLine };
}

/** The linha as banks print it: `00190.00009 01234.567004 00000.001172 9 13120000015090`. */
export function printedLine(line: string): string {
  const m = /^(\d{5})(\d{5})(\d{5})(\d{6})(\d{5})(\d{6})(\d)(\d{14})$/.exec(line);
  return m ? `${m[1]}.${m[2]} ${m[3]}.${m[4]} ${m[5]}.${m[6]} ${m[7]} ${m[8]}` : line;
}

/** A request body with keys sorted at every depth, so two bodies that mean the same compare equal. */
export function sortedJson(value: unknown, depth = 0): string {
  if (depth > 64) throw new RangeError('sandbox PSP: a body nested too deep');
  if (Array.isArray(value)) return `[${value.map((v) => sortedJson(v, depth + 1)).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v, depth + 1)}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}
