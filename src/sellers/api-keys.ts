import type { AppContext } from '../context.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
import { looksLikePublicKey } from './keys.ts';
import { revokeKey } from './sellers-repo.ts';

/** Revokes one of the seller's keys at once, in every process (operator API and the seller's panel). */
export async function revokeSellerKey(ctx: AppContext, sellerId: number, publicKey: string): Promise<Result<void>> {
  if (!looksLikePublicKey(publicKey)) return refuse('BAD_REQUEST', 'publicKey must be a public key as issued (pk_…)');
  const revoked = await ctx.db.tx((q) => revokeKey(q, sellerId, publicKey));
  if (!revoked) return refuse('NOT_FOUND', 'Key not found for this seller');
  ctx.authenticator.forget(publicKey);
  return ok(undefined);
}
