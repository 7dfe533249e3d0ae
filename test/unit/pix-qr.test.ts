import assert from 'node:assert/strict';
import { test } from 'node:test';
import zlib from 'node:zlib';
import jsQRImport from 'jsqr';
import pngjs from 'pngjs';
import QRCode from 'qrcode';
import { type BrCodeInput, buildBrCode, newTxid } from '../../src/domain/pix-brcode.ts';
import { qrMatrix, qrPngDataUri, qrSegments } from '../../src/qr/pix-qr.ts';
import { encodePng1Bit, tableCrc32 } from '../../src/qr/png.ts';

// jsqr is CommonJS with `exports.default`: plain Node hands over the exports object, tsx the function.
const jsQR = (typeof jsQRImport === 'function' ? jsQRImport : jsQRImport.default) as typeof jsQRImport.default;
const { PNG } = pngjs;
const PREFIX = 'data:image/png;base64,';
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Bitwise CRC-32, independent of both the code under test's paths (zlib.crc32 and its table). */
function bitwiseCrc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

interface Chunk {
  type: string;
  data: Buffer;
}

/** Splits a PNG into chunks, checking the signature and every chunk CRC. */
function readChunks(png: Buffer): Chunk[] {
  assert.deepEqual(png.subarray(0, 8), SIGNATURE);
  const chunks: Chunk[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    assert.equal(png.readUInt32BE(at + 8 + length), bitwiseCrc32(png.subarray(at + 4, at + 8 + length)), `${type} CRC`);
    chunks.push({ type, data });
    at += 12 + length;
  }
  return chunks;
}

interface Gray {
  width: number;
  height: number;
  white: (x: number, y: number) => boolean;
}

/** A tiny decoder for exactly what we emit: 1-bit grayscale, filter 0 rows, one IDAT. */
function decodePng(png: Buffer): Gray {
  const chunks = readChunks(png);
  assert.deepEqual(
    chunks.map((c) => c.type),
    ['IHDR', 'IDAT', 'IEND'],
  );
  const ihdr = chunks[0]!.data;
  assert.equal(ihdr.length, 13);
  const [width, height] = [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4)];
  assert.deepEqual([...ihdr.subarray(8)], [1, 0, 0, 0, 0], 'bit depth 1, grayscale, deflate, filter 0, no interlace');
  assert.equal(chunks[2]!.data.length, 0);
  // Scanlines may use filters 0 (none) and 2 (up); pixels come from pngjs, an independent decoder.
  const raw = zlib.inflateSync(chunks[1]!.data);
  const stride = 1 + Math.ceil(width / 8);
  assert.equal(raw.length, stride * height);
  for (let y = 0; y < height; y++) assert.ok([0, 2].includes(raw[y * stride]!), `row ${y} filter ${raw[y * stride]}`);
  const { data } = PNG.sync.read(png);
  const white = (x: number, y: number) => {
    const v = data[(y * width + x) * 4]!;
    assert.ok(v === 0 || v === 255, 'pure black or white');
    return v === 255;
  };
  return { width, height, white };
}

function toRgba({ width, height, white }: Gray): Uint8ClampedArray {
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = white(x, y) ? 255 : 0;
      rgba.set([v, v, v, 255], (y * width + x) * 4);
    }
  }
  return rgba;
}

function scanDataUri(uri: string): string | undefined {
  assert.ok(uri.startsWith(PREFIX));
  const image = decodePng(Buffer.from(uri.slice(PREFIX.length), 'base64'));
  return jsQR(toRgba(image), image.width, image.height)?.data;
}

const base: BrCodeInput = {
  key: '123e4567-e12b-12d1-a456-426655440000',
  amountCents: 1050,
  merchantName: 'Loja Exemplo Ltda',
  merchantCity: 'São Paulo',
  txid: 'ABC123',
};

function sampleCodes(count: number): string[] {
  const keys = ['123e4567-e12b-12d1-a456-426655440000', '52998224725', '+5511987654321', 'fulano@example.com', `${'a'.repeat(65)}@example.com`];
  return Array.from({ length: count }, (_, i) =>
    buildBrCode({
      key: keys[i % keys.length]!,
      amountCents: i % 5 === 0 ? null : 1 + i * 7919,
      merchantName: `Loja ${i} Comércio de Pães`,
      merchantCity: i % 2 ? 'Belo Horizonte' : 'Ji-Paraná',
      txid: i % 4 === 0 ? '***' : newTxid(),
      description: i % 3 === 0 ? `Pedido ${i} ${'item '.repeat(i % 9)}` : undefined,
    }),
  );
}

test('QR data URI decodes through jsQR to exactly the BR Code', () => {
  const codes = [buildBrCode(base), buildBrCode({ ...base, amountCents: null, txid: '***' }), ...sampleCodes(12)];
  for (const code of codes) assert.equal(scanDataUri(qrPngDataUri(code)), code);
});

test('PNG structure: signature, IHDR, chunk CRCs, geometry of scale 4 and a 4-module quiet zone', () => {
  const code = buildBrCode(base);
  const { size } = qrMatrix(code);
  const png = Buffer.from(qrPngDataUri(code).slice(PREFIX.length), 'base64');
  const image = decodePng(png);
  assert.equal(image.width, (size + 8) * 4);
  assert.equal(image.height, image.width);
  for (let i = 0; i < image.width; i++) {
    for (const edge of [0, 15, image.width - 16, image.width - 1]) {
      assert.ok(image.white(i, edge) && image.white(edge, i), 'quiet zone is white');
    }
  }
  // The top-left finder pattern starts right after the quiet zone: a 7×7 dark ring, 4 px per module.
  assert.equal(image.white(16, 16), false);
  assert.equal(image.white(16 + 4 * 6 + 3, 16), false);
  assert.equal(image.white(16 + 4, 16 + 4), true);
});

test('encodePng1Bit draws a hand-made matrix pixel for pixel (Uint8Array and boolean[])', () => {
  const data = [1, 0, 1, 0, 1, 0, 0, 0, 1];
  for (const matrix of [
    { size: 3, data: Uint8Array.from(data) },
    { size: 3, data: data.map(Boolean) },
  ]) {
    for (const [scale, margin] of [
      [1, 0],
      [2, 1],
      [3, 2],
      [4, 0],
      [4, 1],
      [4, 4],
      [5, 4],
    ] as const) {
      const image = decodePng(encodePng1Bit(matrix, { scale, margin }));
      const side = (3 + 2 * margin) * scale;
      assert.deepEqual([image.width, image.height], [side, side]);
      for (let y = 0; y < side; y++) {
        for (let x = 0; x < side; x++) {
          const [r, c] = [Math.floor(y / scale) - margin, Math.floor(x / scale) - margin];
          const dark = r >= 0 && r < 3 && c >= 0 && c < 3 && data[r * 3 + c] === 1;
          assert.equal(image.white(x, y), !dark, `scale ${scale} margin ${margin} pixel ${x},${y}`);
        }
      }
    }
  }
  assert.throws(() => encodePng1Bit({ size: 1, data: [true] }, { scale: 0 }), /scale/);
  assert.throws(() => encodePng1Bit({ size: 1, data: [true] }, { scale: 17 }), /scale/);
  assert.throws(() => encodePng1Bit({ size: 1, data: [true] }, { margin: -1 }), /margin/);
});

test('encodePng1Bit: random matrices of every shape, scale and margin decode pixel for pixel', () => {
  // Sizes 1–60, scales 1–16, margins 0–4, sparse to dense, some with runs of equal rows (what the
  // encoder turns into copies); zlib checks the stream's Adler-32, pngjs draws the pixels.
  let seed = 20261124;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  for (let t = 0; t < 150; t++) {
    const size = 1 + Math.floor(next() * 60);
    const [scale, margin, density] = [1 + Math.floor(next() * 16), Math.floor(next() * 5), next()];
    const data = Uint8Array.from({ length: size * size }, () => (next() < density ? 1 : 0));
    if (t % 3 === 0) for (let r = 1; r < size; r++) if (next() < 0.5) data.copyWithin(r * size, (r - 1) * size, r * size);
    const matrix = t % 2 ? { size, data } : { size, data: [...data].map(Boolean) };
    const image = decodePng(encodePng1Bit(matrix, { scale, margin }));
    const side = (size + 2 * margin) * scale;
    assert.deepEqual([image.width, image.height], [side, side]);
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        const [r, c] = [Math.floor(y / scale) - margin, Math.floor(x / scale) - margin];
        const dark = r >= 0 && r < size && c >= 0 && c < size && data[r * size + c] === 1;
        if (image.white(x, y) === dark) assert.fail(`size ${size} scale ${scale} margin ${margin}: pixel ${x},${y}`);
      }
    }
  }
});

test('encodePng1Bit: an image too wide for deflate copies of whole module rows still encodes', () => {
  // 16 px a module and a 512-module quiet zone: a row of 2,051 bytes, 16 rows of it (32,816) are
  // beyond deflate's 32 KB reach, so those copies become literals.
  const [scale, margin] = [16, 512];
  const raw = zlib.inflateSync(encodePng1Bit({ size: 1, data: [true] }, { scale, margin }).subarray(33 + 8, -16));
  const side = (1 + 2 * margin) * scale;
  const stride = 1 + Math.ceil(side / 8);
  assert.equal(raw.length, stride * side);
  const middle = margin * scale * stride; // the dark module's first pixel row, filter 0
  assert.equal(raw[middle], 0);
  assert.equal(raw[middle + 1 + (margin * scale) / 8], 0x00, 'the dark module');
  assert.equal(raw[middle + 1 + (margin * scale) / 8 - 1], 0xff, 'white before it');
});

test('a BR Code image stays small: under 1 KB of PNG for a dynamic charge', () => {
  const png = Buffer.from(qrPngDataUri(buildBrCode(base)).slice(PREFIX.length), 'base64');
  assert.ok(png.length < 1024, `${png.length} bytes`);
});

test('table CRC-32 fallback matches zlib and the check value', () => {
  assert.equal(tableCrc32(Buffer.from('123456789')), 0xcbf43926);
  const sample = Buffer.from(qrPngDataUri(buildBrCode(base)).slice(PREFIX.length), 'base64');
  assert.equal(tableCrc32(sample), bitwiseCrc32(sample));
});

test('qrMatrix is the symbol qrcode builds for the same segments, mask choice included', () => {
  for (const code of sampleCodes(60)) {
    const ours = qrMatrix(code);
    const theirs = QRCode.create(qrSegments(code, ours.version), { errorCorrectionLevel: 'M' });
    assert.equal(ours.version, theirs.version);
    assert.equal(ours.maskPattern, theirs.maskPattern, code);
    assert.deepEqual(ours.data, theirs.modules.data, code);
    // and never a bigger symbol than qrcode's own segmentation of the text
    assert.ok(ours.version <= QRCode.create(code, { errorCorrectionLevel: 'M' }).version);
  }
});

test("mask choice equals qrcode's at every line width: symbols of 21 to 117 modules", () => {
  // Lines of 1 to 4 packed words, and sizes that fill a word exactly or leave one module over.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 $%*+-./:abcdefghijklmnopqrstuvwxyzçã';
  let seed = 20261121;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const versions = new Set<number>();
  for (let length = 1; length <= 1200; length += 1 + (length >> 3)) {
    const text = Array.from({ length }, () => alphabet[next() % alphabet.length]).join('');
    const ours = qrMatrix(text);
    const theirs = QRCode.create(qrSegments(text, ours.version), { errorCorrectionLevel: 'M' });
    assert.equal(ours.maskPattern, theirs.maskPattern, `length ${length}, version ${ours.version}`);
    assert.deepEqual(ours.data, theirs.modules.data);
    versions.add(ours.version);
  }
  assert.ok(Math.max(...versions) >= 25 && versions.has(1) && versions.size >= 15, [...versions].join(','));
});

test('qrSegments: one segment per mode run, byte data as UTF-8', () => {
  assert.deepEqual(qrSegments('0123456789', 1), [{ mode: 'numeric', data: '0123456789' }]);
  assert.deepEqual(qrSegments('HELLO WORLD', 1), [{ mode: 'alphanumeric', data: 'HELLO WORLD' }]);
  assert.deepEqual(qrSegments('ação', 1), [{ mode: 'byte', data: Buffer.from('ação') }]);
  const segments = qrSegments(buildBrCode(base), 1);
  const text = segments.map((s) => (typeof s.data === 'string' ? s.data : Buffer.from(s.data as Uint8Array).toString()));
  assert.equal(text.join(''), buildBrCode(base));
  assert.ok(segments.some((s) => s.mode === 'numeric') && segments.some((s) => s.mode === 'byte'));
});
