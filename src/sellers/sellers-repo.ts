import type { Queryable } from '../db/db.ts';
import { maybeOne, one, run, sql } from '../db/sql.ts';
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
  const r = await run<SellerRow>(
    q,
    sql`INSERT INTO sellers (name, email, document) VALUES (${input.name}, ${input.email}, ${input.document}) RETURNING *`,
  );
  const seller = one(r);
  // The spec's "balance record created automatically with all values zero", created up front.
  await run(q, sql`INSERT INTO balances (seller_id) VALUES (${seller.id})`);
  await insertSigningSecret(q, seller.id, seller.created_at);
  return seller;
}

export async function findSeller(q: Queryable, id: number, forUpdate = false): Promise<SellerRow | null> {
  const r = forUpdate
    ? await run<SellerRow>(q, sql`SELECT * FROM sellers WHERE id = ${id} FOR UPDATE`)
    : await run<SellerRow>(q, sql`SELECT * FROM sellers WHERE id = ${id}`);
  return maybeOne(r);
}

export async function updateSeller(
  q: Queryable,
  id: number,
  patch: Partial<Pick<SellerRow, 'name' | 'email' | 'api_withdrawal_enabled' | 'transfer_allowed' | 'fee_schedule'>>,
): Promise<SellerRow | null> {
  if (Object.keys(patch).length === 0) return findSeller(q, id);
  // One statement for every patch: a column the patch does not name keeps its value.
  const named = (column: keyof typeof patch) => column in patch;
  const { name = null, email = null, api_withdrawal_enabled: withdrawal = null, transfer_allowed: transfer = null } = patch;
  const feeSchedule = patch.fee_schedule === undefined || patch.fee_schedule === null ? null : JSON.stringify(patch.fee_schedule);
  const r = await run<SellerRow>(
    q,
    sql`UPDATE sellers SET name = CASE WHEN ${named('name')} THEN ${name} ELSE name END,
          email = CASE WHEN ${named('email')} THEN ${email} ELSE email END,
          api_withdrawal_enabled = CASE WHEN ${named('api_withdrawal_enabled')} THEN ${withdrawal} ELSE api_withdrawal_enabled END,
          transfer_allowed = CASE WHEN ${named('transfer_allowed')} THEN ${transfer} ELSE transfer_allowed END,
          fee_schedule = CASE WHEN ${named('fee_schedule')} THEN ${feeSchedule}::jsonb ELSE fee_schedule END,
          updated_at = now()
        WHERE id = ${id} RETURNING *`,
  );
  return maybeOne(r);
}

export async function issueKey(q: Queryable, sellerId: number): Promise<IssuedKey> {
  const pair = generateKeyPair();
  const r = await run<{ created_at: Date }>(
    q,
    sql`INSERT INTO api_keys (public_key, seller_id, private_key_digest) VALUES (${pair.publicKey}, ${sellerId}, ${pair.privateKeyDigest})
        RETURNING created_at`,
  );
  return { publicKey: pair.publicKey, privateKey: pair.privateKey, createdAt: one(r).created_at };
}

export interface KeySummary {
  publicKey: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export async function listKeys(q: Queryable, sellerId: number): Promise<KeySummary[]> {
  const r = await run<{ public_key: string; created_at: Date; revoked_at: Date | null }>(
    q,
    sql`SELECT public_key, created_at, revoked_at FROM api_keys WHERE seller_id = ${sellerId} ORDER BY created_at, public_key`,
  );
  return r.rows.map((k) => ({ publicKey: k.public_key, createdAt: k.created_at, revokedAt: k.revoked_at }));
}

/** Revokes a key and tells every process (NOTIFY is delivered at commit); false when unknown. */
export async function revokeKey(q: Queryable, sellerId: number, publicKey: string): Promise<boolean> {
  const r = await run(
    q,
    sql`UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE seller_id = ${sellerId} AND public_key = ${publicKey} RETURNING 1`,
  );
  if (r.rowCount === 0) return false;
  await run(q, sql`SELECT pg_notify(${KEY_REVOKED_CHANNEL}, ${publicKey})`);
  return true;
}

export const KEY_REVOKED_CHANNEL = 'api_key_revoked';

export interface ActiveKey {
  sellerId: number;
  digest: Uint8Array;
}

export async function findActiveKey(q: Queryable, publicKey: string): Promise<ActiveKey | null> {
  const r = await run<{ seller_id: number; private_key_digest: Uint8Array }>(
    q,
    sql`SELECT seller_id, private_key_digest FROM api_keys WHERE public_key = ${publicKey} AND revoked_at IS NULL`,
  );
  const row = maybeOne(r);
  return row ? { sellerId: row.seller_id, digest: row.private_key_digest } : null;
}
