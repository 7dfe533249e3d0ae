/**
 * QR segmentation and bit stream. A text is split into numeric, alphanumeric and byte segments
 * of least total length (Nayuki's linear dynamic programme over characters; `qrcode`'s own
 * Dijkstra over a segment graph costs ~0.3 ms a BR Code), then written as the symbol's data
 * codewords: mode, character count, data, terminator, byte padding, pad codewords (ISO 18004 §7.4).
 */
import type { QRCodeSegment } from 'qrcode';

const MODES = ['numeric', 'alphanumeric', 'byte'] as const;
type ModeIndex = 0 | 1 | 2;
/** Character-count bits per mode, for versions 1–9, 10–26, 27–40. */
const COUNT_BITS = [
  [10, 9, 8],
  [12, 11, 16],
  [14, 13, 16],
] as const;
const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';

export function versionBand(version: number): 0 | 1 | 2 {
  return version < 10 ? 0 : version < 27 ? 1 : 2;
}

/** ASCII codes that alphanumeric mode can carry. */
const ALPHANUMERIC_CODES = new Uint8Array(128).map((_, code) => Number(ALPHANUMERIC.includes(String.fromCharCode(code))));

function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/**
 * A cost no path reaches: "this mode cannot carry the character" (a multiple of 6, see below).
 * Small enough that every cost stays a 32-bit integer (a text that fits a symbol costs under 2²¹),
 * so `%` stays an integer operation, not a floating-point one.
 */
const IMPOSSIBLE = 6 * 2 ** 26;

/**
 * Splits `text` into the numeric/alphanumeric/byte segments of least bit length for a symbol of
 * `version` (Nayuki's dynamic programme): per character, the cheapest way to end in each mode.
 * Costs are in sixths of a bit, so numeric (10/3 bits a digit) and alphanumeric (11/2) stay integers.
 */
export function qrSegments(text: string, version: number): QRCodeSegment[] {
  const band = COUNT_BITS[versionBand(version)];
  const [h0, h1, h2] = [(4 + band[0]) * 6, (4 + band[1]) * 6, (4 + band[2]) * 6];
  const from = new Uint8Array(text.length * 3); // [i * 3 + m]: mode of char i on the best path ending in m
  const starts = new Int32Array(text.length + 1); // UTF-16 offset of each character (code point)
  let [c0, c1, c2] = [h0, h1, h2];
  let count = 0;
  for (let at = 0; at < text.length; count++) {
    starts[count] = at;
    let code = text.charCodeAt(at++);
    if (code >= 0xd800 && code < 0xdc00 && at < text.length) {
      const low = text.charCodeAt(at);
      if (low >= 0xdc00 && low < 0xe000) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        at++;
      }
    }
    c0 = code >= 0x30 && code <= 0x39 ? c0 + 20 : IMPOSSIBLE;
    c1 = code < 128 && ALPHANUMERIC_CODES[code] ? c1 + 33 : IMPOSSIBLE;
    c2 += utf8Length(code) * 48;
    // Or close the cheapest segment after this character (padded to a whole bit) and open mode m.
    const p0 = c0 + ((6 - (c0 % 6)) % 6);
    const p1 = c1 + ((6 - (c1 % 6)) % 6);
    const p2 = c2 + ((6 - (c2 % 6)) % 6);
    let closed = p0;
    let closedMode = 0;
    if (p1 < closed) [closed, closedMode] = [p1, 1];
    if (p2 < closed) [closed, closedMode] = [p2, 2];
    const i3 = count * 3;
    if (closed + h0 < c0) [c0, from[i3]] = [closed + h0, closedMode];
    else from[i3] = 0;
    if (closed + h1 < c1) [c1, from[i3 + 1]] = [closed + h1, closedMode];
    else from[i3 + 1] = 1;
    if (closed + h2 < c2) [c2, from[i3 + 2]] = [closed + h2, closedMode];
    else from[i3 + 2] = 2;
  }
  starts[count] = text.length;
  // Walk back from the cheapest final mode (the first on ties).
  let mode = c0 <= c1 && c0 <= c2 ? 0 : c1 <= c2 ? 1 : 2;
  const modes = new Uint8Array(count);
  for (let i = count - 1; i >= 0; i--) {
    mode = from[i * 3 + mode]!;
    modes[i] = mode;
  }
  const segments: QRCodeSegment[] = [];
  for (let i = 0, first = 0; i < count; i++) {
    if (i + 1 < count && modes[i + 1] === modes[i]) continue;
    const data = text.slice(starts[first], starts[i + 1]);
    const name = MODES[modes[i] as ModeIndex];
    segments.push(name === 'byte' ? { mode: name, data: Buffer.from(data, 'utf8') } : { mode: name, data });
    first = i + 1;
  }
  return segments;
}

const MODE_INDICATOR = { numeric: 0b0001, alphanumeric: 0b0010, byte: 0b0100 } as const;

/** Bits the segments take in a symbol of `version`. */
export function segmentsBits(segments: QRCodeSegment[], version: number): number {
  const band = COUNT_BITS[versionBand(version)];
  let bits = 0;
  for (const s of segments) {
    const mode = MODES.indexOf(s.mode as (typeof MODES)[number]);
    const n = (s.data as string | Uint8Array).length;
    bits +=
      4 + band[mode as ModeIndex] + (mode === 0 ? 10 * Math.floor(n / 3) + [0, 4, 7][n % 3]! : mode === 1 ? 11 * (n >> 1) + 6 * (n & 1) : 8 * n);
  }
  return bits;
}

/** The data codewords of `segments` in a symbol of `version` with `capacity` data codewords. */
export function dataCodewords(segments: QRCodeSegment[], version: number, capacity: number): Uint8Array {
  const out = new Uint8Array(capacity);
  let bit = 0;
  // Bits gather in `acc` (at most 7 pending + 16 new) and leave a byte at a time.
  let acc = 0;
  let pending = 0;
  const put = (value: number, length: number) => {
    acc = (acc << length) | value;
    pending += length;
    bit += length;
    while (pending >= 8) {
      pending -= 8;
      out[(bit - pending - 8) >> 3] = acc >>> pending;
      acc &= (1 << pending) - 1;
    }
  };
  const band = COUNT_BITS[versionBand(version)];
  for (const s of segments) {
    const mode = MODES.indexOf(s.mode as (typeof MODES)[number]) as ModeIndex;
    put(MODE_INDICATOR[MODES[mode]], 4);
    put((s.data as string | Uint8Array).length, band[mode]);
    if (mode === 2) {
      for (const byte of s.data as Uint8Array) put(byte, 8);
    } else if (mode === 1) {
      const text = s.data as string;
      for (let i = 0; i + 1 < text.length; i += 2) put(ALPHANUMERIC.indexOf(text[i]!) * 45 + ALPHANUMERIC.indexOf(text[i + 1]!), 11);
      if (text.length & 1) put(ALPHANUMERIC.indexOf(text[text.length - 1]!), 6);
    } else {
      const digits = s.data as string;
      for (let i = 0; i < digits.length; i += 3) {
        const group = digits.slice(i, i + 3);
        put(Number(group), [0, 4, 7, 10][group.length]!);
      }
    }
  }
  if (bit > capacity * 8) throw new Error(`QR: ${bit} bits do not fit version ${version}`);
  if (pending > 0) out[bit >> 3] = acc << (8 - pending);
  // The terminator (four zero bits, if they fit) and the padding to a whole byte are zeros,
  // already there; a terminator that ends on a byte boundary leaves a whole zero byte.
  if (bit + 4 <= capacity * 8) bit += 4;
  for (let i = Math.ceil(bit / 8), pad = 0; i < capacity; i++, pad ^= 1) out[i] = pad ? 0x11 : 0xec;
  return out;
}
