/** The sellers' Standard Webhooks signing secrets (CONTRACT §13): read, created with the seller, rotated. */
import type { Queryable } from '../db/db.ts';
import { one } from '../db/sql.ts';
import { ApiError } from '../domain/errors.ts';
import { newSigningSecret } from '../domain/standard-webhooks.ts';

// After a rotation the replaced secret still signs for this long, so receivers can switch over.
export const rotation_overlap_ms = 24 * 60 * 60 * 1000;

export interface SigningSecret {
  secret: string;
  createdAt: Date;
  /** When the secret this one replaced stops signing; null when none does any more. */
  previousSecretExpiresAt: Date | null;
}

export async function insertSigningSecret(q: Queryable, sellerId: number, now: Date): Promise<void> {
  await q.query('INSERT INTO signing_secrets (seller_id, secret, created_at) VALUES ($1, $2, $3)', [sellerId, newSigningSecret(), now]);
}

const current_sql = `
  SELECT c.secret, c.created_at,
    (SELECT max(p.expires_at) FROM signing_secrets p WHERE p.seller_id = c.seller_id AND p.expires_at > $2) AS previous_expires_at
  FROM signing_secrets c WHERE c.seller_id = $1 AND c.expires_at IS NULL`;

export async function currentSigningSecret(q: Queryable, sellerId: number, now: Date): Promise<SigningSecret> {
  const r = await q.query<{ secret: string; created_at: Date; previous_expires_at: Date | null }>(current_sql, [sellerId, now]);
  const row = r.rows[0];
  // Every seller has one (created with the seller, or by migration 013): none is a broken invariant.
  if (!row) throw new ApiError('INTERNAL', 'The seller has no signing secret');
  return { secret: row.secret, createdAt: row.created_at, previousSecretExpiresAt: row.previous_expires_at };
}

/**
 * A new current secret; the one it replaces signs for 24 h more, and any older one still overlapping
 * stops now, so at most two ever sign. Run in a transaction: the seller's row lock serialises
 * concurrent rotations.
 */
export async function rotateSigningSecret(q: Queryable, sellerId: number, now: Date): Promise<SigningSecret> {
  one(await q.query('SELECT id FROM sellers WHERE id = $1 FOR UPDATE', [sellerId]));
  await q.query('UPDATE signing_secrets SET expires_at = $2 WHERE seller_id = $1 AND expires_at > $2', [sellerId, now]);
  await q.query('UPDATE signing_secrets SET expires_at = $2 WHERE seller_id = $1 AND expires_at IS NULL', [
    sellerId,
    new Date(now.getTime() + rotation_overlap_ms),
  ]);
  await insertSigningSecret(q, sellerId, now);
  return currentSigningSecret(q, sellerId, now);
}

/** The secrets that sign now, newest first (the claim query reads the same, per notification). */
export const live_secrets_sql = (sellerColumn: string, nowParam: string) => `
  ARRAY(SELECT s.secret FROM signing_secrets s
    WHERE s.seller_id = ${sellerColumn} AND (s.expires_at IS NULL OR s.expires_at > ${nowParam}) ORDER BY s.id DESC)`;
