import { hash, timingSafeEqual } from 'node:crypto';

/** SHA-256 of a high-entropy secret: enough to store it (no slow password hash on the hot path). */
export function digestOf(secret: string): Buffer {
  // One call, no Hash object: this runs on every authenticated request.
  return hash('sha256', secret, 'buffer');
}

/** Constant-time comparison of a presented secret with one held in memory (a path secret, a CSRF token). */
export function sameSecret(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string') return false;
  // Digests first: equal lengths whatever was presented, so the time taken does not tell the secret's length.
  return timingSafeEqual(digestOf(presented), digestOf(expected));
}

/** Constant-time comparison of a presented secret with a stored digest. */
export function secretMatches(presented: string, storedDigest: Uint8Array): boolean {
  const presentedDigest = digestOf(presented);
  return storedDigest.length === presentedDigest.length && timingSafeEqual(presentedDigest, storedDigest);
}
