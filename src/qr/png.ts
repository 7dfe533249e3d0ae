/**
 * A minimal 1-bit grayscale PNG writer for QR matrices. `qrcode`'s own PNG path (pngjs, RGBA)
 * costs milliseconds a code; a 1-bit image of a few hundred bytes, deflated by image-deflate.ts,
 * costs microseconds.
 */
import zlib from 'node:zlib';
import { deflateImage, type Scanlines, UP, WHITE } from './image-deflate.ts';

export interface ModuleMatrix {
  size: number;
  /** Row-major, `size * size` entries; 1 or true = dark module, 0 or false = light. */
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
  const idat = deflateImage(scanlines(modules, side, scale, margin));
  const png = Buffer.allocUnsafe(SIGNATURE.length + 12 + ihdr.length + 12 + idat.length + IEND.length);
  png.set(SIGNATURE, 0);
  let at = writeChunk(png, SIGNATURE.length, 'IHDR', ihdr);
  at = writeChunk(png, at, 'IDAT', idat);
  png.set(IEND, at);
  return png;
}

/**
 * The image's scanlines by content. A module row is packed once (filter 0, none); its `scale - 1`
 * copies, and every quiet-zone row but the first, are filter 2 ("up": same as the row above), all
 * zero bytes. Equal module rows next to each other share one packed row.
 */
function scanlines(modules: ModuleMatrix, side: number, scale: number, margin: number): Scanlines {
  const stride = 1 + Math.ceil(side / 8);
  const keys = new Int32Array(side);
  for (let y = 1; y < side; y++) keys[y] = UP;
  keys[0] = WHITE;
  const rows = new Uint8Array(modules.size * stride); // filter bytes stay 0: "none"
  let count = 0;
  for (let r = 0; r < modules.size; r++) {
    const at = count * stride;
    packRow(modules, r, margin, scale, rows, at + 1);
    if (count === 0 || !sameRow(rows, at - stride, at, stride)) count++;
    keys[(margin + r) * scale] = count - 1;
  }
  // The bottom quiet zone starts after a module row: its first row is white again, drawn as such.
  const bottom = (margin + modules.size) * scale;
  if (bottom < side) keys[bottom] = WHITE;
  return { stride, keys, rows: rows.subarray(0, count * stride), period: scale };
}

function sameRow(rows: Uint8Array, a: number, b: number, stride: number): boolean {
  for (let i = 0; i < stride; i++) if (rows[a + i] !== rows[b + i]) return false;
  return true;
}

/**
 * Packs module row `r`, quiet zone included, into bits from `offset`: each module shifts `scale`
 * equal bits into an accumulator that is flushed a byte at a time (per module, not per pixel).
 */
function packRow(modules: ModuleMatrix, r: number, margin: number, scale: number, raw: Uint8Array, offset: number): void {
  const { size, data } = modules;
  if (scale === 4) {
    // The usual case, two modules a byte. Branch-free per module: modules are about half dark, so
    // a test per module would mispredict half the time (only the quiet-zone bounds test branches).
    const row = r * size;
    for (let x = 0; x < size + 2 * margin; x += 2) {
      const a = x - margin;
      const darkA = a >= 0 && a < size ? +data[row + a]! : 0;
      const darkB = a + 1 >= 0 && a + 1 < size ? +data[row + a + 1]! : 0; // past the end: padding, white
      raw[offset++] = 0xff ^ (darkA * 0xf0) ^ (darkB * 0x0f);
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

function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  writeChunk(out, 0, type, data);
  return out;
}

/** Writes a chunk (length, type, data, CRC) at `at`; returns where it ends. */
function writeChunk(out: Buffer, at: number, type: string, data: Uint8Array): number {
  out.writeUInt32BE(data.length, at);
  out.write(type, at + 4, 'latin1');
  out.set(data, at + 8);
  const end = at + 8 + data.length;
  out.writeUInt32BE(crc32(out.subarray(at + 4, end)), end);
  return end + 4;
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
