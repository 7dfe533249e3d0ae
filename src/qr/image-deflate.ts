/**
 * The zlib stream (RFC 1950/1951) of a QR image's scanlines, written straight from the module
 * rows. A QR image is a few distinct module rows, each drawn `scale` times, inside a white quiet
 * zone, so its scanlines are either a module row (filter 0, literal bytes) or a copy of a row
 * `1` or `scale` rows above: one deflate match per run of such rows. Node's zlib spends ~30 µs a
 * code setting up and tearing down its state for a 7 KB image, and a general-purpose compressor
 * has to find what this one knows; this writes a ~700-byte stream in a few microseconds, without
 * ever building the 7 KB of raw scanlines.
 *
 * One dynamic-Huffman block (deflate-block.ts) whose code table gives the four bytes a module row
 * is made of at scale 4 (the gateway's) 2–3 bit codes. The Adler-32 of the raw scanlines is
 * computed per row from each row's byte sum and weighted sum, so copied rows cost O(1).
 */

import { BitWriter, END_OF_BLOCK, LITERALS, MAX_DISTANCE, MIN_MATCH, PREFIX } from './deflate-block.ts';

/** A QR image's scanlines, by content. */
export interface Scanlines {
  /** Scanline length in bytes, filter byte included. */
  stride: number;
  /**
   * Per scanline: `WHITE` (filter 0, all white), `UP` (filter 2 "up", all zero: the row above
   * again) or the index of its bytes in `rows`.
   */
  keys: Int32Array;
  /** The distinct module rows back to back, `stride` bytes each, filter byte (0) first. */
  rows: Uint8Array;
  /** How far apart equal scanlines also are, besides next to each other: pixels per module. */
  period: number;
}

export const WHITE = -1;
export const UP = -2;

/** The zlib stream of `image`'s scanlines. */
export function deflateImage(image: Scanlines): Uint8Array {
  const { stride, keys, rows, period } = image;
  // Bound: a literal row is < 2 bytes a byte; a copy, < 6 bytes per 258 copied plus 6.
  const w = new BitWriter(PREFIX.bytes.length + 16 + keys.length * (12 + Math.ceil(stride / 32)) + 2 * rows.length + 4 * stride);
  w.out.set(PREFIX.bytes);
  w.at = PREFIX.bytes.length;
  w.put(PREFIX.acc, PREFIX.bits);
  const adler = new Adler(rows, stride);
  for (let y = 0; y < keys.length; ) {
    // Copies reach 32 KB back at most: images too wide for them (far beyond a QR's) get literals.
    const near = stride <= MAX_DISTANCE ? repeats(keys, y, 1) : 0;
    const far = period * stride <= MAX_DISTANCE ? repeats(keys, y, period) : 0;
    const run = Math.max(near, far);
    if (run * stride >= MIN_MATCH) {
      w.match(run * stride, (near >= far ? 1 : period) * stride);
      for (let k = y; k < y + run; k++) adler.row(keys[k]!);
      y += run;
      continue;
    }
    const key = keys[y]!;
    if (key >= 0) w.literals(rows, key * stride, stride);
    else writeConstantRow(w, key === WHITE ? 0 : 2, key === WHITE ? 255 : 0, stride);
    adler.row(key);
    y++;
  }
  w.code(LITERALS, END_OF_BLOCK);
  w.flush();
  const checksum = adler.value();
  for (const shift of [24, 16, 8, 0]) w.out[w.at++] = (checksum >>> shift) & 0xff;
  return w.out.subarray(0, w.at);
}

/** How many scanlines from `y` on equal the one `d` above. */
function repeats(keys: Int32Array, y: number, d: number): number {
  let n = 0;
  while (y + n >= d && y + n < keys.length && keys[y + n] === keys[y + n - d]) n++;
  return n;
}

/** A filter byte then `stride - 1` bytes of `fill`: two literals and a match at distance 1. */
function writeConstantRow(w: BitWriter, filter: number, fill: number, stride: number): void {
  w.code(LITERALS, filter);
  if (stride < 2) return;
  w.code(LITERALS, fill);
  if (stride - 2 >= MIN_MATCH) w.match(stride - 2, 1);
  else for (let i = 2; i < stride; i++) w.code(LITERALS, fill);
}

// ---- Adler-32 ---------------------------------------------------------------------------------

const ADLER_MOD = 65521;

/**
 * Adler-32 of the scanlines, a row at a time: after bytes x₀ … x_{m−1}, a += Σ xⱼ and
 * b += m·a + Σ (m − j)·xⱼ. Both sums are taken once per distinct row, so a copied row costs O(1).
 */
class Adler {
  private a = 1;
  private b = 0;
  /** [key + 2]: a row's Σ xⱼ, and its Σ (m − j)·xⱼ, mod 65521. */
  private readonly sum: Int32Array;
  private readonly weighted: Int32Array;
  constructor(
    rows: Uint8Array,
    private readonly stride: number,
  ) {
    const count = rows.length / stride;
    this.sum = new Int32Array(count + 2);
    this.weighted = new Int32Array(count + 2);
    const n = stride - 1;
    // WHITE (-1): filter 0 then n bytes 255; UP (-2): filter 2 then n zeros.
    this.sum[WHITE + 2] = (255 * n) % ADLER_MOD;
    this.weighted[WHITE + 2] = ((255 * n * (n + 1)) / 2) % ADLER_MOD;
    this.sum[UP + 2] = 2;
    this.weighted[UP + 2] = (2 * stride) % ADLER_MOD;
    for (let k = 0; k < count; k++) {
      let sum = 0;
      let weighted = 0;
      for (let j = 0, at = k * stride; j < stride; j++, at++) {
        sum += rows[at]!;
        weighted += (stride - j) * rows[at]!;
      }
      this.sum[k + 2] = sum % ADLER_MOD;
      this.weighted[k + 2] = weighted % ADLER_MOD;
    }
  }
  row(key: number): void {
    this.b = (this.b + this.stride * this.a + this.weighted[key + 2]!) % ADLER_MOD;
    this.a = (this.a + this.sum[key + 2]!) % ADLER_MOD;
  }
  value(): number {
    return ((this.b << 16) | this.a) >>> 0;
  }
}
