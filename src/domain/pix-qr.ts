/**
 * The QR image of a BR Code: `qrcode` encodes the symbol, our 1-bit writer draws it.
 *
 * `QRCode.create(text)` costs about 0.75 ms a BR Code here, nearly all in two steps we redo under
 * the same rules, leaving codewords, Reed-Solomon and module placement to the library (~0.05 ms):
 * - segmentation: its Dijkstra over a segment graph (~0.3 ms) becomes a linear dynamic programme
 *   over characters (Nayuki's), an optimal numeric/alphanumeric/byte mix in ~0.01 ms;
 * - mask choice: its penalty scoring through `BitMatrix.get` (~0.45 ms) becomes the same N1..N4
 *   rules, as `qrcode` 1.5 computes them, over flat arrays and lookup tables (~0.1 ms). The tests
 *   check that the symbol equals what `QRCode.create` builds from the same segments.
 */
import QRCode from 'qrcode';
import type { BitMatrix, QRCode as QrSymbol, QRCodeSegment } from 'qrcode';
import { encodePng1Bit } from './png.ts';

export interface QrMatrix {
  size: number;
  /** Row-major, 1 = dark. */
  data: Uint8Array;
  version: number;
  maskPattern: number;
}

/** `data:image/png;base64,...` of a QR (error correction M) encoding exactly `text`. */
export function qrPngDataUri(text: string): string {
  return `data:image/png;base64,${encodePng1Bit(qrMatrix(text)).toString('base64')}`;
}

/** The QR symbol (level M) of `text`: what `QRCode.create(qrSegments(text, v), { errorCorrectionLevel: 'M' })` gives. */
export function qrMatrix(text: string): QrMatrix {
  let qr = createMasked0(text, 1);
  // Character-count field widths change at versions 10 and 27; re-plan if we landed in another band.
  if (versionBand(qr.version) !== 0) {
    const other = createMasked0(text, qr.version);
    if (other.version <= qr.version) qr = other;
  }
  return chooseMask(qr.modules, qr.version);
}

function createMasked0(text: string, version: number): QrSymbol {
  return QRCode.create(qrSegments(text, version), { errorCorrectionLevel: 'M', maskPattern: 0 });
}

// ---- segmentation -------------------------------------------------------------------------

const MODES = ['numeric', 'alphanumeric', 'byte'] as const;
type ModeIndex = 0 | 1 | 2;
/** Character-count bits per mode, for versions 1–9, 10–26, 27–40. */
const COUNT_BITS = [
  [10, 9, 8],
  [12, 11, 16],
  [14, 13, 16],
] as const;
const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';

function versionBand(version: number): 0 | 1 | 2 {
  return version < 10 ? 0 : version < 27 ? 1 : 2;
}

/** ASCII codes that alphanumeric mode can carry. */
const ALPHANUMERIC_CODES = new Uint8Array(128).map((_, code) => Number(ALPHANUMERIC.includes(String.fromCharCode(code))));

/** Per-character costs in sixths of a bit, so numeric (10/3) and alphanumeric (11/2) stay integers. */
function charCost(code: number, mode: number): number {
  if (mode === 0) return code >= 0x30 && code <= 0x39 ? 20 : Infinity;
  if (mode === 1) return ALPHANUMERIC_CODES[code] ? 33 : Infinity; // undefined beyond ASCII
  return utf8Length(code) * 48;
}

function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/**
 * Splits `text` into the numeric/alphanumeric/byte segments of least bit length for a symbol of
 * `version` (Nayuki's dynamic programme): per character, the cheapest way to end in each mode.
 */
export function qrSegments(text: string, version: number): QRCodeSegment[] {
  const head = COUNT_BITS[versionBand(version)].map((bits) => (4 + bits) * 6);
  const chars = Array.from(text);
  const from = new Uint8Array(chars.length * 3); // [i * 3 + m]: mode of char i on the best path ending in m
  const costs = Float64Array.from(head);
  for (let i = 0; i < chars.length; i++) {
    const code = chars[i]!.codePointAt(0)!;
    for (let m = 0; m < 3; m++) costs[m] = costs[m]! + charCost(code, m);
    // Or close the cheapest segment after this character (padded to a whole bit) and open mode m.
    let closed = Infinity;
    let closedMode = 0;
    for (let m = 0; m < 3; m++) {
      const padded = Math.ceil(costs[m]! / 6) * 6;
      if (padded < closed) {
        closed = padded;
        closedMode = m;
      }
    }
    for (let m = 0; m < 3; m++) {
      const switched = closed + head[m]! < costs[m]!;
      if (switched) costs[m] = closed + head[m]!;
      from[i * 3 + m] = switched ? closedMode : m;
    }
  }
  return toSegments(chars, traceModes(from, costs));
}

/** The mode of each character on the cheapest path, walked back from the cheapest final mode. */
function traceModes(from: Uint8Array, costs: Float64Array): Uint8Array {
  let mode = costs.indexOf(Math.min(...costs));
  const modes = new Uint8Array(from.length / 3);
  for (let i = modes.length - 1; i >= 0; i--) {
    mode = from[i * 3 + mode]!;
    modes[i] = mode;
  }
  return modes;
}

function toSegments(chars: string[], modes: Uint8Array): QRCodeSegment[] {
  const segments: QRCodeSegment[] = [];
  let data = '';
  for (let i = 0; i < chars.length; i++) {
    data += chars[i];
    if (i + 1 < chars.length && modes[i + 1] === modes[i]) continue;
    const mode = MODES[modes[i] as ModeIndex];
    segments.push(mode === 'byte' ? { mode, data: Buffer.from(data, 'utf8') } : { mode, data });
    data = '';
  }
  return segments;
}

// ---- mask choice ----------------------------------------------------------------------------

const MASK_AT: ReadonlyArray<(i: number, j: number) => boolean> = [
  (i, j) => (i + j) % 2 === 0,
  (i) => i % 2 === 0,
  (_i, j) => j % 3 === 0,
  (i, j) => (i + j) % 3 === 0,
  (i, j) => (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0,
  (i, j) => ((i * j) % 2) + ((i * j) % 3) === 0,
  (i, j) => (((i * j) % 2) + ((i * j) % 3)) % 2 === 0,
  (i, j) => (((i * j) % 3) + ((i + j) % 2)) % 2 === 0,
];

/**
 * Per symbol size, the 8 masks as 0/1 bytes, 0 on function modules (fixed per version), padded
 * to whole 32-bit words so masks apply 4 modules per XOR.
 */
const maskLayers = new Map<number, Uint32Array[]>();

function layersFor(size: number, reserved: Uint8Array): Uint32Array[] {
  let layers = maskLayers.get(size);
  if (!layers) {
    layers = MASK_AT.map((at) => {
      const layer = paddedBytes(size * size);
      for (let i = 0; i < size; i++) {
        for (let j = 0; j < size; j++) layer[i * size + j] = !reserved[i * size + j] && at(i, j) ? 1 : 0;
      }
      return new Uint32Array(layer.buffer);
    });
    maskLayers.set(size, layers);
  }
  return layers;
}

/** `n` bytes over a buffer rounded up to whole 32-bit words. */
function paddedBytes(n: number): Uint8Array {
  return new Uint8Array(new ArrayBuffer(Math.ceil(n / 4) * 4), 0, n);
}

/** From a symbol masked with pattern 0, the symbol with the lowest-penalty mask (first on ties, as `qrcode`). */
function chooseMask(modules: BitMatrix, version: number): QrMatrix {
  const { size, data, reservedBit } = modules;
  const layers = layersFor(size, reservedBit);
  const plain = paddedBytes(data.length);
  plain.set(data);
  xorWords(words(plain), layers[0]!, words(plain)); // undo mask 0
  let best = paddedBytes(data.length);
  let candidate = paddedBytes(data.length);
  let bestPattern = -1;
  let lowest = Infinity;
  for (let p = 0; p < 8; p++) {
    xorWords(words(plain), layers[p]!, words(candidate));
    setFormatInfo(candidate, size, FORMAT_BITS_M[p]!);
    const score = penalty(candidate, size);
    if (score < lowest) {
      [best, candidate] = [candidate, best];
      [lowest, bestPattern] = [score, p];
    }
  }
  return { size, data: best, version, maskPattern: bestPattern };
}

function words(bytes: Uint8Array): Uint32Array {
  return new Uint32Array(bytes.buffer);
}

function xorWords(a: Uint32Array, b: Uint32Array, out: Uint32Array): void {
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
}

/** 15-bit format information for level M (bits 00) and each mask: BCH(15,5), then XOR 0x5412. */
const FORMAT_BITS_M = Array.from({ length: 8 }, (_, mask) => {
  let rem = mask << 10;
  for (let bit = 14; bit >= 10; bit--) if (rem & (1 << bit)) rem ^= 0x537 << (bit - 10);
  return ((mask << 10) | rem) ^ 0x5412;
});

/** Writes format bits where `qrcode`'s setupFormatInfo does (both copies, plus the dark module). */
function setFormatInfo(d: Uint8Array, size: number, bits: number): void {
  for (let i = 0; i < 15; i++) {
    const bit = (bits >> i) & 1;
    const row = i < 6 ? i : i < 8 ? i + 1 : size - 15 + i;
    d[row * size + 8] = bit;
    const col = i < 8 ? size - i - 1 : i < 9 ? 15 - i : 14 - i;
    d[8 * size + col] = bit;
  }
  d[(size - 8) * size + 8] = 1;
}

/**
 * The penalty of `qrcode` 1.5's MaskPattern (N1 + N2 + N3 + N4). It runs 8 times a code, so the
 * row/column rules N1 and N3 come from one table lookup per module (see LINE_SCORE).
 */
function penalty(d: Uint8Array, size: number): number {
  return lineScores(d, size, size, 1) + lineScores(d, size, 1, size) + blocksAndBalance(d, size);
}

/**
 * Line scores indexed by `phase << 11 | window`, window = the last 11 modules of a row or column
 * (newest in bit 0), phase = how far along the line we are (0: < 5 modules, 1: the 5th, 2: 6th to
 * 10th, 3: later). N1 (3 + (run − 5) per run of ≥ 5 same-colour modules) is paid as it grows: 3 when
 * a run reaches 5, then 1 per module. N3 is 40 per window 1:1:3:1:1 with 4 light modules on one side.
 */
const LINE_SCORE = new Uint8Array(4 << 11).map((_, index) => {
  const [phase, window] = [index >> 11, index & 0x7ff];
  const last5 = window & 0x1f;
  const inRun = phase >= 1 && (last5 === 0 || last5 === 0x1f);
  const runStarts = inRun && (phase === 1 || ((window >> 5) & 1) !== (window & 1));
  const finderLike = phase === 3 && (window === 0x5d0 || window === 0x05d);
  return (inRun ? 1 : 0) + (runStarts ? 2 : 0) + (finderLike ? 40 : 0);
});

/** N1 + N3 over every line: rows when `outer` = size, `inner` = 1; columns the other way round. */
function lineScores(d: Uint8Array, size: number, outer: number, inner: number): number {
  let score = 0;
  for (let a = 0; a < size; a++) {
    let window = 0;
    let i = a * outer;
    for (let b = 0; b < 10; b++, i += inner) {
      window = (window << 1) | d[i]!;
      score += LINE_SCORE[(b < 4 ? 0 : b === 4 ? 1 : 2) * 2048 + window]!;
    }
    for (let b = 10; b < size; b++, i += inner) {
      window = ((window << 1) | d[i]!) & 0x7ff;
      score += LINE_SCORE[3 * 2048 + window]!;
    }
  }
  return score;
}

/** 1 for a 2×2 block whose modules sum to 0 or 4 (a lookup, not a data-dependent branch). */
const SAME_BLOCK = Uint8Array.of(1, 0, 0, 0, 1);

/** N2: 3 per 2×2 block of one colour; N4: 10 per 5% step of the dark share away from 50%. */
function blocksAndBalance(d: Uint8Array, size: number): number {
  let blocks = 0;
  let dark = 0;
  for (let r = 0; r < size - 1; r++) {
    let i = r * size;
    dark += d[i]!;
    let left = d[i]! + d[i + size]!; // a column pair: 0, 1 or 2 dark
    for (let c = 1; c < size; c++) {
      i++;
      dark += d[i]!;
      const right = d[i]! + d[i + size]!;
      blocks += SAME_BLOCK[left + right]!;
      left = right;
    }
  }
  for (let i = (size - 1) * size; i < size * size; i++) dark += d[i]!;
  return blocks * 3 + Math.abs(Math.ceil((dark * 100) / (size * size) / 5) - 10) * 10;
}
