/**
 * The signature of location payloads: compact JWS (RFC 7515), ES256, with a P-256 key made per
 * process. A payer's app fetches the key from the `jku` URL and picks it by `kid`; a restart makes
 * a new key, which is harmless because every payload is signed when it is fetched.
 */
import { createHash, generateKeyPairSync, type JsonWebKey, type KeyObject, sign } from 'node:crypto';

export interface Jwks {
  keys: Array<JsonWebKey & { kid: string; use: 'sig'; alg: 'ES256' }>;
}

export interface JwsSigner {
  readonly jwks: Jwks;
  sign(payload: unknown, jku: string): string;
}

const b64url = (data: Buffer | string): string => Buffer.from(data).toString('base64url');

/** RFC 7638 thumbprint: the SHA-256 of the required members, in lexicographic order, as JSON. */
function thumbprint(jwk: JsonWebKey): string {
  const members = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return b64url(createHash('sha256').update(members).digest());
}

export function createJwsSigner(): JwsSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const kid = thumbprint(jwk);
  return {
    jwks: { keys: [{ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, use: 'sig', alg: 'ES256' }] },
    sign: (payload, jku) => signCompact(privateKey, { alg: 'ES256', typ: 'JWS', kid, jku }, payload),
  };
}

function signCompact(key: KeyObject, header: object, payload: unknown): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  // JWS wants ECDSA's r‖s (IEEE P1363), not node's default DER encoding.
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${b64url(signature)}`;
}
