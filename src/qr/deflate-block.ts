/**
 * A deflate (RFC 1951) block writer for image-deflate.ts: one dynamic-Huffman block whose code
 * table is fixed at load, shaped for QR images at scale 4, behind the zlib header that starts
 * every stream (`PREFIX`, written once).
 */

export const MIN_MATCH = 3;
const MAX_MATCH = 258;
export const END_OF_BLOCK = 256;
// RFC 1951 §3.2.5: length codes 257…285 and distance codes 0…29, by base value and extra bits.
const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DISTANCE_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DISTANCE_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
export const MAX_DISTANCE = 32768;

interface Code {
  /** Bit-reversed codes (deflate sends Huffman codes most significant bit first, into an LSB-first stream). */
  codes: Uint16Array;
  lengths: Uint8Array;
}

export class BitWriter {
  out: Uint8Array;
  at = 0;
  private acc = 0;
  private bits = 0;
  constructor(capacity: number) {
    this.out = scratch(capacity);
  }
  put(value: number, length: number): void {
    this.acc |= value << this.bits;
    this.bits += length;
    while (this.bits >= 8) {
      this.out[this.at++] = this.acc & 0xff;
      this.acc >>>= 8;
      this.bits -= 8;
    }
  }
  /** The bytes as literals: the hot loop, on locals. */
  literals(bytes: Uint8Array, from: number, count: number): void {
    const { codes, lengths } = LITERALS;
    const out = this.out;
    let { acc, bits, at } = this;
    for (let i = from; i < from + count; i++) {
      const b = bytes[i]!;
      acc |= codes[b]! << bits;
      bits += lengths[b]!;
      if (bits >= 16) {
        out[at++] = acc & 0xff;
        out[at++] = (acc >>> 8) & 0xff;
        acc >>>= 16;
        bits -= 16;
      }
    }
    this.acc = acc;
    this.bits = bits;
    this.at = at;
    this.put(0, 0);
  }
  code(table: Code, symbol: number): void {
    this.put(table.codes[symbol]!, table.lengths[symbol]!);
  }
  /** A copy of `length` bytes from `distance` back, split into matches deflate can say. */
  match(length: number, distance: number): void {
    if (distance > MAX_DISTANCE) throw new Error(`deflate: distance ${distance} out of reach`);
    const d = codeFor(DISTANCE_BASE, distance);
    while (length > 0) {
      // Never leave a tail shorter than a match can be.
      const n = length <= MAX_MATCH ? length : length - MAX_MATCH < MIN_MATCH ? length - MIN_MATCH : MAX_MATCH;
      const l = codeFor(LENGTH_BASE, n);
      this.code(LITERALS, 257 + l);
      this.put(n - LENGTH_BASE[l]!, LENGTH_EXTRA[l]!);
      this.code(DISTANCES, d);
      this.put(distance - DISTANCE_BASE[d]!, DISTANCE_EXTRA[d]!);
      length -= n;
    }
  }
  /** Pads the last byte with zero bits. */
  flush(): void {
    if (this.bits > 0) this.out[this.at++] = this.acc & 0xff;
    this.acc = 0;
    this.bits = 0;
  }
  /** The bits not yet written out as a whole byte. */
  pending(): { acc: number; bits: number } {
    return { acc: this.acc, bits: this.bits };
  }
}

let scratchBuffer = new Uint8Array(16 * 1024);

/** One reused output buffer: the encoder is synchronous, and its caller copies what it needs. */
function scratch(capacity: number): Uint8Array {
  if (scratchBuffer.length < capacity) scratchBuffer = new Uint8Array(capacity);
  return scratchBuffer;
}

/** The index of the last base ≤ value. */
function codeFor(bases: readonly number[], value: number): number {
  let i = bases.length - 1;
  while (bases[i]! > value) i--;
  return i;
}

/** Huffman code lengths for `weights` (RFC 1951 needs ≤ `maxBits`; checked, the weights are ours). */
function huffmanLengths(weights: readonly number[], maxBits: number): Uint8Array {
  const lengths = new Uint8Array(weights.length);
  // Nodes: [weight, symbols under it]; merge the two lightest until one is left (n ≤ 286, once).
  let nodes = weights.flatMap((weight, symbol) => (weight > 0 ? [{ weight, symbols: [symbol] }] : []));
  while (nodes.length > 1) {
    nodes.sort((a, b) => a.weight - b.weight);
    const [x, y] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    for (const s of [...x.symbols, ...y.symbols]) lengths[s]!++;
    nodes = [{ weight: x.weight + y.weight, symbols: [...x.symbols, ...y.symbols] }, ...nodes.slice(2)];
  }
  if (Math.max(...lengths) > maxBits) throw new Error('deflate: a code is too long');
  return lengths;
}

/** Canonical codes for `lengths` (RFC 1951 §3.2.2), bit-reversed for the LSB-first stream. */
function canonical(lengths: Uint8Array): Code {
  const count = new Uint16Array(16);
  for (const l of lengths) if (l) count[l]!++;
  const next = new Uint16Array(16);
  for (let bits = 2, code = 0; bits < 16; bits++) {
    code = (code + count[bits - 1]!) << 1;
    next[bits] = code;
  }
  const codes = new Uint16Array(lengths.length);
  for (let s = 0; s < lengths.length; s++) {
    const l = lengths[s]!;
    if (l === 0) continue;
    let c = next[l]!++;
    let reversed = 0;
    for (let k = 0; k < l; k++, c >>= 1) reversed = (reversed << 1) | (c & 1);
    codes[s] = reversed;
  }
  return { codes, lengths };
}

/**
 * Symbol weights for scale 4: a module row is bytes 0x00, 0xFF (two dark or two light modules)
 * and 0x0F, 0xF0 (one of each); filter bytes 0 and 2; every other byte and every length a little.
 */
function literalWeights(): number[] {
  const weights = Array.from({ length: 286 }, () => 1);
  weights[0x00] = 4000;
  weights[0xff] = 4000;
  weights[0x0f] = 1800;
  weights[0xf0] = 1800;
  weights[0x02] = 60;
  for (let s = 257; s < 286; s++) weights[s] = 8;
  return weights;
}

export const LITERALS = canonical(huffmanLengths(literalWeights(), 15));
const DISTANCES = canonical(
  huffmanLengths(
    Array.from({ length: 30 }, () => 1),
    15,
  ),
);

/** The zlib header and the block header (its code table), the same for every image. */
export const PREFIX = (() => {
  const w = new BitWriter(512);
  w.put(0x78, 8); // CMF: deflate, 32 KB window
  w.put(0x01, 8); // FLG: no dictionary, check bits so that (CMF·256 + FLG) % 31 = 0
  w.put(1, 1); // BFINAL
  w.put(2, 2); // BTYPE: dynamic Huffman
  const all = [...LITERALS.lengths, ...DISTANCES.lengths];
  // The code lengths are sent one symbol each (0–15, no run-length codes) under their own code.
  const frequency = Array.from({ length: 19 }, () => 0);
  for (const l of all) frequency[l]!++;
  const lengthCode = canonical(huffmanLengths(frequency, 7));
  const order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
  let sent = order.length;
  while (sent > 4 && lengthCode.lengths[order[sent - 1]!] === 0) sent--;
  w.put(LITERALS.lengths.length - 257, 5);
  w.put(DISTANCES.lengths.length - 1, 5);
  w.put(sent - 4, 4);
  for (let i = 0; i < sent; i++) w.put(lengthCode.lengths[order[i]!]!, 3);
  for (const l of all) w.code(lengthCode, l);
  const { acc, bits } = w.pending();
  return { bytes: w.out.slice(0, w.at), acc, bits };
})();
