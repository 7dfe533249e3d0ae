import type { Queryable } from '../db/db.ts';
import { maybeOne, one } from '../db/sql.ts';
import { insertSigningSecret } from '../notifications/signing-secrets.ts';
import { generateKeyPair } from './keys.ts';

export interface SellerRow {
  id: number;
  name: string;
  email: string;
  document: string | null;
  api_withdrawal_enabled: boolean;
  transfer_allowed: boolean;
  fee_schedule: unknown | null;
  created_at: Date;
  updated_at: Date;
}

export interface IssuedKey {
  publicKey: string;
  privateKey: string;
  createdAt: Date;
}

export async function insertSeller(q: Queryable, input: { name: string; email: string; document: string | null }): Promise<SellerRow> {
  const r = await q.query<SellerRow>('INSERT INTO sellers (name, email, document) VALUES ($1, $2, $3) RETURNING *', [
    input.name,
    input.email,
    input.document,
  ]);
  const seller = one(r);
  // The spec's "balance record created automatically with all values zero", created up front.
  await q.query('INSERT INTO balances (seller_id) VALUES ($1)', [seller.id]);
  await insertSigningSecret(q, seller.id, seller.created_at);
  return seller;
}

export async function findSeller(q: Queryable, id: number, forUpdate = false): Promise<SellerRow | null> {
  const r = await q.query<SellerRow>(`SELECT * FROM sellers WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return maybeOne(r);
}

export async function updateSeller(
  q: Queryable,
  id: number,
  patch: Partial<Pick<SellerRow, 'name' | 'email' | 'api_withdrawal_enabled' | 'transfer_allowed' | 'fee_schedule'>>,
): Promise<SellerRow | null> {
  const columns = Object.keys(patch) as (keyof typeof patch)[];
  if (columns.length === 0) return findSeller(q, id);
  const sets = columns.map((c, i) => `${c} = $${i + 2}`).join(', ');
  const values = columns.map((c) => (c === 'fee_schedule' && patch[c] !== null ? JSON.stringify(patch[c]) : patch[c]));
  const r = await q.query<SellerRow>(`UPDATE sellers SET ${sets}, updated_at = now() WHERE id = $1 RETURNING *`, [id, ...values]);
  return maybeOne(r);
}

export async function issueKey(q: Queryable, sellerId: number): Promise<IssuedKey> {
  const pair = generateKeyPair();
  const r = await q.query<{ created_at: Date }>(
    'INSERT INTO api_keys (public_key, seller_id, private_key_digest) VALUES ($1, $2, $3) RETURNING created_at',
    [pair.publicKey, sellerId, pair.privateKeyDigest],
  );
  return { publicKey: pair.publicKey, privateKey: pair.privateKey, createdAt: one(r).created_at };
}

export interface KeySummary {
  publicKey: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export async function listKeys(q: Queryable, sellerId: number): Promise<KeySummary[]> {
  const r = await q.query<{ public_key: string; created_at: Date; revoked_at: Date | null }>(
    'SELECT public_key, created_at, revoked_at FROM api_keys WHERE seller_id = $1 ORDER BY created_at, public_key',
    [sellerId],
  );
  return r.rows.map((k) => ({ publicKey: k.public_key, createdAt: k.created_at, revokedAt: k.revoked_at }));
}

/** Revokes a key and tells every process (NOTIFY is delivered at commit); false when unknown. */
export async function revokeKey(q: Queryable, sellerId: number, publicKey: string): Promise<boolean> {
  const r = await q.query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE seller_id = $1 AND public_key = $2 RETURNING 1', [
    sellerId,
    publicKey,
  ]);
  if (r.rowCount === 0) return false;
  await q.query('SELECT pg_notify($1, $2)', [KEY_REVOKED_CHANNEL, publicKey]);
  return true;
}

export const KEY_REVOKED_CHANNEL = 'api_key_revoked';

export interface ActiveKey {
  sellerId: number;
  digest: Uint8Array;
}

export async function findActiveKey(q: Queryable, publicKey: string): Promise<ActiveKey | null> {
  const r = await q.query<{ seller_id: number; private_key_digest: Uint8Array }>(
    'SELECT seller_id, private_key_digest FROM api_keys WHERE public_key = $1 AND revoked_at IS NULL',
    [publicKey],
  );
  const row = maybeOne(r);
  return row ? { sellerId: row.seller_id, digest: row.private_key_digest } : null;
}
