/**
 * The QR image of a BR Code (level M), built in three steps with one job each: the unmasked
 * symbol (qr-symbol.ts, over `qrcode`'s per-version patterns and tables), the mask choice
 * (qr-mask.ts) and a 1-bit PNG (png.ts). The tests check the symbol against `QRCode.create` bit
 * for bit and decode the PNG back with `jsqr`.
 */

import { chooseMask, type QrMatrix } from './mask.ts';
import { encodePng1Bit } from './png.ts';
import { unmaskedSymbol } from './symbol.ts';

export type { QrMatrix } from './mask.ts';
export { qrSegments } from './segments.ts';

/** `data:image/png;base64,...` of a QR (error correction M) encoding exactly `text`. */
export function qrPngDataUri(text: string): string {
  return `data:image/png;base64,${encodePng1Bit(qrMatrix(text)).toString('base64')}`;
}

/** The QR symbol (level M) of `text`: what `QRCode.create(qrSegments(text, v), { errorCorrectionLevel: 'M' })` gives. */
export function qrMatrix(text: string): QrMatrix {
  return chooseMask(unmaskedSymbol(text));
}
