/** The sellers' Standard Webhooks signing secrets (CONTRACT §13): read, created with the seller, rotated. */
import type { Queryable } from '../db/db.ts';
import { one, raw, run, type Sql, sql } from '../db/sql.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
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
  await run(q, sql`INSERT INTO signing_secrets (seller_id, secret, created_at) VALUES (${sellerId}, ${newSigningSecret()}, ${now})`);
}

export async function currentSigningSecret(q: Queryable, sellerId: number, now: Date): Promise<Result<SigningSecret>> {
  const r = await run<{ secret: string; created_at: Date; previous_expires_at: Date | null }>(
    q,
    sql`SELECT c.secret, c.created_at,
          (SELECT max(p.expires_at) FROM signing_secrets p WHERE p.seller_id = c.seller_id AND p.expires_at > ${now}) AS previous_expires_at
        FROM signing_secrets c WHERE c.seller_id = ${sellerId} AND c.expires_at IS NULL`,
  );
  const row = r.rows[0];
  // Every seller has one (created with the seller, or by migration 013): none is a broken invariant.
  if (!row) return refuse('INTERNAL', 'The seller has no signing secret');
  return ok({ secret: row.secret, createdAt: row.created_at, previousSecretExpiresAt: row.previous_expires_at });
}

/**
 * A new current secret; the one it replaces signs for 24 h more, and any older one still overlapping
 * stops now, so at most two ever sign. Run in a transaction: the seller's row lock serialises
 * concurrent rotations, and a refusal (no current secret after all) is thrown by the caller to roll it back.
 */
export async function rotateSigningSecret(q: Queryable, sellerId: number, now: Date): Promise<Result<SigningSecret>> {
  one(await run(q, sql`SELECT id FROM sellers WHERE id = ${sellerId} FOR UPDATE`));
  await run(q, sql`UPDATE signing_secrets SET expires_at = ${now} WHERE seller_id = ${sellerId} AND expires_at > ${now}`);
  const overlapEnd = new Date(now.getTime() + rotation_overlap_ms);
  await run(q, sql`UPDATE signing_secrets SET expires_at = ${overlapEnd} WHERE seller_id = ${sellerId} AND expires_at IS NULL`);
  await insertSigningSecret(q, sellerId, now);
  return currentSigningSecret(q, sellerId, now);
}

/** The secrets that sign at `now`, newest first, of the seller in `sellerColumn` (a column: per row of the claim). */
export const liveSecretsSql = (sellerColumn: string, now: Date): Sql => sql`
  ARRAY(SELECT s.secret FROM signing_secrets s
    WHERE s.seller_id = ${raw(sellerColumn)} AND (s.expires_at IS NULL OR s.expires_at > ${now}) ORDER BY s.id DESC)`;
