import { randomBytes } from 'node:crypto';
import { digestOf } from '../domain/secrets.ts';

const public_key_prefix = 'pk_';
const private_key_prefix = 'sk_';
const public_key_bytes = 18;
const private_key_bytes = 32; // 256 bits: a plain SHA-256 digest is enough, no slow password hash needed

export interface KeyPair {
  publicKey: string;
  privateKey: string;
  privateKeyDigest: Buffer;
}

export function generateKeyPair(): KeyPair {
  const publicKey = public_key_prefix + randomBytes(public_key_bytes).toString('base64url');
  const privateKey = private_key_prefix + randomBytes(private_key_bytes).toString('base64url');
  return { publicKey, privateKey, privateKeyDigest: digestOf(privateKey) };
}

/** The shape issued keys have: `pk_` and base64url. Anything else is refused before it reaches SQL. */
export const looksLikePublicKey = (v: string) => /^pk_[A-Za-z0-9_-]{1,61}$/.test(v);
