import { randomFillSync } from 'node:crypto';

// Random bytes for ids, served from a pooled buffer: one CSPRNG call per 4 KiB rather than one
// per id (the call costs ~15 µs on our machines whatever its size), as Node's randomUUID does.
// Every byte is handed out once.
const pool = Buffer.alloc(4096);
let offset = pool.length;

export function randomBytes(n: number): Buffer {
  if (n > pool.length) return randomFillSync(Buffer.alloc(n));
  if (offset + n > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = Buffer.from(pool.subarray(offset, offset + n));
  offset += n;
  return out;
}

const alphanumerics = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters of [A-Za-z0-9], uniform: bytes of 248 and above are dropped (248 = 4 × 62). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length + 8)) {
      if (b < 248 && out.length < length) out += alphanumerics[b % 62];
    }
  }
  return out;
}
