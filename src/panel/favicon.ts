/**
 * The panel's icon: an SVG the pages link to, and the same mark as a 16×16 PNG inside an ICO at
 * /favicon.ico (what a browser asks for on its own). Both built here, nothing to download.
 */
import { deflateSync } from 'node:zlib';

const brand = [0x0b, 0x5c, 0xad] as const;

/** A blue rounded square with a white "R$"-like bar: readable at 16 px, the panel's blue. */
export const favicon_svg =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0b5cad"/>' +
  '<path d="M4 4h5a2.5 2.5 0 0 1 0 5H6l4 3" fill="none" stroke="#fff" stroke-width="2"/><path d="M6 4v8" stroke="#fff" stroke-width="2"/></svg>';

const crc_table = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = crc_table[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** The 16×16 mark as a PNG: the blue square with a white frame inside. */
function png16(): Buffer {
  const size = 16;
  const rows: number[] = [];
  for (let y = 0; y < size; y++) {
    rows.push(0); // filter: none
    for (let x = 0; x < size; x++) {
      const white = (x === 5 || x === 6) && y >= 4 && y <= 11 ? true : (y === 4 || y === 8) && x >= 5 && x <= 10;
      rows.push(...(white ? [255, 255, 255] : brand));
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** An ICO holding one 16×16 PNG image. */
function ico(): Buffer {
  const image = png16();
  const head = Buffer.alloc(22);
  head.writeUInt16LE(0, 0); // reserved
  head.writeUInt16LE(1, 2); // icon
  head.writeUInt16LE(1, 4); // one image
  head.set([16, 16, 0, 0], 6); // width, height, no palette, reserved
  head.writeUInt16LE(1, 10); // planes
  head.writeUInt16LE(24, 12); // bits per pixel
  head.writeUInt32LE(image.length, 14);
  head.writeUInt32LE(22, 18); // offset of the image
  return Buffer.concat([head, image]);
}

export const favicon_ico = ico();
