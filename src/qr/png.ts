/**
 * A minimal 1-bit grayscale PNG writer for QR matrices. `qrcode`'s own PNG path (pngjs, RGBA)
 * costs milliseconds a code; a 1-bit image of a few hundred bytes costs microseconds.
 */
import zlib from 'node:zlib';

export interface ModuleMatrix {
  size: number;
  /** Row-major, `size * size` entries; truthy = dark module. */
  data: Uint8Array | boolean[];
}

export interface PngOptions {
  /** Pixels per module. */
  scale?: number;
  /** Quiet zone, in modules, on every side (the QR spec asks for 4). */
  margin?: number;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
let crcTable: Uint32Array | undefined; // built on first use by the fallback only
// zlib.crc32 arrived in Node 20.15; keep a table fallback for older 20.x runtimes.
const crc32: (data: Buffer) => number = typeof zlib.crc32 === 'function' ? (data) => zlib.crc32(data) : tableCrc32;
const IEND = chunk('IEND', Buffer.alloc(0));

/** Encodes the matrix as a black-on-white 1-bit grayscale PNG (dark = bit 0, light = bit 1). */
export function encodePng1Bit(modules: ModuleMatrix, opts: PngOptions = {}): Buffer {
  const scale = opts.scale ?? 4;
  const margin = opts.margin ?? 4;
  // scale ≤ 16 keeps packRow's accumulator (≤ 7 pending + scale new bits) inside 32 bits.
  if (!Number.isInteger(scale) || scale < 1 || scale > 16 || !Number.isInteger(margin) || margin < 0) {
    throw new Error(`PNG: bad scale ${scale} or margin ${margin}`);
  }
  const side = (modules.size + 2 * margin) * scale;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 1; // bit depth; bytes 9..12 stay 0: grayscale, deflate, filter 0, no interlace
  const idat = zlib.deflateSync(scanlines(modules, side, scale, margin), { level: 1, memLevel: 4 });
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', idat), IEND]);
}

/**
 * The raw image: each row is a filter byte then packed bits. A module row is packed once (filter 0,
 * none); its `scale - 1` copies, and every quiet-zone row but the first, are filter 2 ("up": same
 * as the row above), all zero bytes. Deflate level 1 squeezes those runs about as well as level 6
 * would, in a fraction of the time; memLevel 4 (a smaller hash table) is enough for a 6 KB image
 * and cheaper to set up.
 */
function scanlines(modules: ModuleMatrix, side: number, scale: number, margin: number): Buffer {
  const stride = 1 + Math.ceil(side / 8);
  const raw = Buffer.alloc(stride * side); // zero: filter "none" on … "up" rows get their byte below
  raw.fill(0xff, 1, stride); // the first quiet-zone row: white
  for (let y = 1; y < side; y++) raw[y * stride] = 2;
  for (let r = 0; r < modules.size; r++) {
    const first = (margin + r) * scale * stride;
    raw[first] = 0;
    packRow(modules, r, margin, scale, raw, first + 1);
  }
  // The bottom quiet zone starts after a module row: its first row is white again, drawn as such.
  const bottom = (margin + modules.size) * scale * stride;
  if (bottom < raw.length) {
    raw[bottom] = 0;
    raw.fill(0xff, bottom + 1, bottom + stride);
  }
  return raw;
}

/**
 * Packs module row `r`, quiet zone included, into bits from `offset`: each module shifts `scale`
 * equal bits into an accumulator that is flushed a byte at a time (per module, not per pixel).
 */
function packRow(modules: ModuleMatrix, r: number, margin: number, scale: number, raw: Buffer, offset: number): void {
  const { size, data } = modules;
  if (scale === 4) {
    // The usual case, two modules a byte: one table-free step per byte instead of per module.
    const row = r * size;
    for (let k = -margin; k < size + margin; k += 2) {
      const lightA = k < 0 || k >= size || !data[row + k];
      const lightB = k + 1 < 0 || k + 1 >= size || !data[row + k + 1]; // past the end: padding, white
      raw[offset++] = (lightA ? 0xf0 : 0) | (lightB ? 0x0f : 0);
    }
    return;
  }
  const light = (1 << scale) - 1;
  const start = r * size - margin;
  const end = r * size + size + margin;
  let acc = 0;
  let bits = 0;
  for (let i = start; i < end; i++) {
    const isLight = i < r * size || i >= r * size + size || !data[i];
    acc = (acc << scale) | (isLight ? light : 0);
    for (bits += scale; bits >= 8; bits -= 8) raw[offset++] = acc >>> (bits - 8);
  }
  if (bits > 0) raw[offset] = (acc << (8 - bits)) | (0xff >> bits); // pad bits white
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** CRC-32 (PNG, zlib) by table: the fallback for runtimes without zlib.crc32; exported for tests. */
export function tableCrc32(data: Buffer): number {
  crcTable ??= Uint32Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const table = crcTable;
  let crc = 0xffffffff;
  for (const b of data) crc = table[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
