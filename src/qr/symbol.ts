/**
 * The unmasked QR symbol (level M) of a text: version, data and error-correction codewords,
 * module placement. `qrcode` supplies what is fixed per version: the function patterns (from one
 * symbol it builds per version, cached) and the error-correction block table. The per-code work,
 * which `qrcode.create` does generically in ~0.12 ms, is done here over cached tables: codewords,
 * Reed-Solomon with log/antilog tables, and placement along a precomputed module order. The tests
 * check every symbol against `QRCode.create` bit for bit.
 */

import type { QRCodeSegment } from 'qrcode';
import QRCode from 'qrcode';
import ecCode from 'qrcode/lib/core/error-correction-code.js';
import ecLevel from 'qrcode/lib/core/error-correction-level.js';
import { dataCodewords, qrSegments, segmentsBits } from './segments.ts';

export interface UnmaskedSymbol {
  version: number;
  size: number;
  /** Row-major, 1 = dark; function patterns drawn, data unmasked, format area not yet written. */
  data: Uint8Array;
  /** 1 on function modules (finder, timing, alignment, version, format, dark module). */
  reserved: Uint8Array;
}

interface VersionTables {
  size: number;
  /** The function patterns, as drawn by `qrcode`. */
  template: Uint8Array;
  reserved: Uint8Array;
  /** Data modules in placement order (the two-column zigzag from the bottom right). */
  order: Uint32Array;
  dataCodewords: number;
  blocks: number;
  ecPerBlock: number;
}

const versions = new Map<number, VersionTables>();

function tablesFor(version: number): VersionTables {
  let t = versions.get(version);
  if (t) return t;
  const { modules } = QRCode.create('0', { version, errorCorrectionLevel: 'M', maskPattern: 0 });
  const { size, reservedBit } = modules;
  const order: number[] = [];
  for (let col = size - 1, upward = true; col > 0; col -= 2, upward = !upward) {
    if (col === 6) col--; // the vertical timing pattern
    for (let i = 0; i < size; i++) {
      const row = upward ? size - 1 - i : i;
      for (const c of [col, col - 1]) if (!reservedBit[row * size + c]) order.push(row * size + c);
    }
  }
  const total = Math.floor(order.length / 8);
  const ecTotal = ecCode.getTotalCodewordsCount(version, ecLevel.M);
  const blocks = ecCode.getBlocksCount(version, ecLevel.M);
  t = {
    size,
    template: Uint8Array.from(modules.data),
    reserved: Uint8Array.from(reservedBit),
    order: Uint32Array.from(order),
    dataCodewords: total - ecTotal,
    blocks,
    ecPerBlock: ecTotal / blocks,
  };
  versions.set(version, t);
  return t;
}

/** The symbol of the smallest version that holds `text`, segmented optimally for that version. */
export function unmaskedSymbol(text: string): UnmaskedSymbol {
  for (const [first, last] of [
    [1, 9],
    [10, 26],
    [27, 40],
  ] as const) {
    const segments = qrSegments(text, first);
    const bits = segmentsBits(segments, first);
    for (let version = first; version <= last; version++) {
      if (bits <= tablesFor(version).dataCodewords * 8) return place(segments, version);
    }
  }
  throw new Error(`QR: ${text.length} characters do not fit a level M symbol`);
}

function place(segments: QRCodeSegment[], version: number): UnmaskedSymbol {
  const t = tablesFor(version);
  const codewords = interleaved(dataCodewords(segments, version, t.dataCodewords), t);
  const data = t.template.slice();
  const { order } = t;
  let m = 0;
  for (let i = 0; i < codewords.length; i++) {
    const byte = codewords[i]!;
    for (let bit = 7; bit >= 0; bit--) data[order[m++]!] = (byte >> bit) & 1;
  }
  while (m < order.length) data[order[m++]!] = 0; // remainder bits are light
  return { version, size: t.size, data, reserved: t.reserved };
}

/** Data split into blocks (the later ones a codeword longer), each with its EC codewords, interleaved. */
function interleaved(data: Uint8Array, t: VersionTables): Uint8Array {
  const shortLength = Math.floor(t.dataCodewords / t.blocks);
  const longBlocks = t.dataCodewords % t.blocks;
  const out = new Uint8Array(t.dataCodewords + t.blocks * t.ecPerBlock);
  let offset = 0;
  for (let b = 0; b < t.blocks; b++) {
    const length = shortLength + (b >= t.blocks - longBlocks ? 1 : 0);
    const block = data.subarray(offset, offset + length);
    offset += length;
    for (let i = 0; i < length; i++) out[i < shortLength ? i * t.blocks + b : shortLength * t.blocks + (b - (t.blocks - longBlocks))] = block[i]!;
    const ec = reedSolomon(block, t.ecPerBlock);
    for (let i = 0; i < ec.length; i++) out[t.dataCodewords + i * t.blocks + b] = ec[i]!;
  }
  return out;
}

// GF(256) over x^8 + x^4 + x^3 + x^2 + 1 (0x11d), as QR codes use.
const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
for (let i = 0, x = 1; i < 255; i++) {
  EXP[i] = x;
  LOG[x] = i;
  x = x & 0x80 ? ((x << 1) ^ 0x11d) & 0xff : x << 1;
}
for (let i = 255; i < 512; i++) EXP[i] = EXP[i - 255]!;

/** Generator polynomials Π (x − αⁱ), i < degree, coefficients from the highest power; as logs. */
const generators = new Map<number, Uint8Array>();

function generatorLogs(degree: number): Uint8Array {
  let logs = generators.get(degree);
  if (!logs) {
    let poly = Uint8Array.of(1);
    for (let i = 0; i < degree; i++) {
      const next = new Uint8Array(poly.length + 1);
      for (let j = 0; j < poly.length; j++) {
        next[j]! ^= poly[j]!;
        if (poly[j]) next[j + 1]! ^= EXP[LOG[poly[j]!]! + i]!;
      }
      poly = next;
    }
    logs = poly.subarray(1).map((c) => LOG[c]!); // no zero coefficient in these generators
    generators.set(degree, logs);
  }
  return logs;
}

/** Per degree: [f · degree + j] = the generator's coefficient j times αᶠ, for f = 0 … 254. */
const products = new Map<number, Uint8Array>();

function generatorProducts(degree: number): Uint8Array {
  let table = products.get(degree);
  if (!table) {
    const g = generatorLogs(degree);
    table = new Uint8Array(255 * degree);
    for (let f = 0; f < 255; f++) for (let j = 0; j < degree; j++) table[f * degree + j] = EXP[g[j]! + f]!;
    products.set(degree, table);
  }
  return table;
}

/** The `degree` error-correction codewords of a block: the remainder of data · x^degree by the generator. */
export function reedSolomon(block: Uint8Array, degree: number): Uint8Array {
  const products = generatorProducts(degree);
  const r = new Uint8Array(degree);
  const last = degree - 1;
  for (let i = 0; i < block.length; i++) {
    const factor = block[i]! ^ r[0]!;
    if (factor === 0) {
      for (let j = 0; j < last; j++) r[j] = r[j + 1]!;
      r[last] = 0;
      continue;
    }
    // Shift by one codeword and add factor · generator in the same pass.
    const at = LOG[factor]! * degree;
    for (let j = 0; j < last; j++) r[j] = r[j + 1]! ^ products[at + j]!;
    r[last] = products[at + last]!;
  }
  return r;
}
