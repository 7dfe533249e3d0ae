/**
 * A key claimed before a provider call (CONTRACT §3, §11): the request that calls a provider before
 * its write claims its Idempotency-Key first, so a concurrent request with the same key is told
 * IDEMPOTENCY_KEY_IN_USE instead of making a second provider call. The claim is a lease on the
 * database's clock, renewed while its holder works: a holder that crashed frees the key within
 * `claim_lease_ms`. The statement that stores the answer deletes the claim.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/db.ts';
import { one, run, type Sql, sql } from '../db/sql.ts';

export const claim_lease_ms = 3_000;
// Renewed well before it lapses: two renewals may fail before another request can take the key over.
const renew_every_ms = 1_000;

export interface KeyIds {
  sellerId: number;
  endpoint: string;
  key: string;
}

/** What a claim found: the key is ours now, or it holds an answer to replay, or another request holds it. */
export type Claim =
  | { kind: 'claimed'; token: string; release(): Promise<void>; stop(): void }
  | { kind: 'answered'; requestHash: string; status: number; body: string }
  | { kind: 'held' };

const lease = sql`clock_timestamp() + ${`${claim_lease_ms} milliseconds`}::interval`;
const keyIs = (ids: KeyIds) => sql`seller_id = ${ids.sellerId} AND endpoint = ${ids.endpoint} AND key = ${ids.key}`;

/** The claim `token` on the key: what the statement storing the answer deletes. */
export const claimIs = (ids: KeyIds, token: string) => sql`${keyIs(ids)} AND claimed_by = ${token}`;

/**
 * Claims the key unless another request's claim lives; a lapsed one is taken over. One round trip
 * (claim_idempotency_key, migration 020): the claim, then its answer looked for with a snapshot
 * taken after it, so either another request's claim was still there (held) or its answer is
 * (replayed); a replay's claim is dropped in the same call.
 */
export async function claimKey(db: Db, ids: KeyIds, now: Date): Promise<Claim> {
  const token = randomBytes(16).toString('hex');
  const r = one(
    await run<{ claimed: boolean; request_hash: string | null; response_status: number | null; response_body: string | null }>(
      db,
      sql`SELECT * FROM claim_idempotency_key(${ids.sellerId}, ${ids.endpoint}, ${ids.key}, ${token}, ${`${claim_lease_ms} milliseconds`}::interval, ${now})`,
    ),
  );
  if (!r.claimed) return { kind: 'held' };
  if (r.request_hash !== null) return { kind: 'answered', requestHash: r.request_hash, status: r.response_status!, body: r.response_body! };
  return holding(db, claimIs(ids, token), token);
}

function holding(db: Db, mine: Sql, token: string): Extract<Claim, { kind: 'claimed' }> {
  const timer = setInterval(() => {
    // Skipped while the statement storing the answer holds it: nobody can take it over then.
    run(
      db,
      sql`UPDATE idempotency_claims SET claimed_until = ${lease} WHERE ${mine} AND ctid = (SELECT ctid FROM idempotency_claims WHERE ${mine} FOR UPDATE SKIP LOCKED)`,
    ).catch(() => {});
  }, renew_every_ms);
  timer.unref();
  return {
    kind: 'claimed',
    token,
    stop: () => clearInterval(timer),
    // The request ended without a stored answer (a 5xx is not kept, CONTRACT §3): the key is free for a retry at once.
    release: async () => {
      clearInterval(timer);
      await run(db, sql`DELETE FROM idempotency_claims WHERE ${mine}`).catch(() => {});
    },
  };
}

/** Claims whose holder died (lapsed, and not taken over since): nothing waits on them any more. */
export async function dropLapsedClaims(db: Db, limit: number): Promise<number> {
  const r = await run(
    db,
    // The lapse is tested again on the row deleted: a claim taken over meanwhile (its lease renewed)
    // is its new holder's, whose provider call it guards.
    sql`DELETE FROM idempotency_claims WHERE (seller_id, endpoint, key) IN (
          SELECT seller_id, endpoint, key FROM idempotency_claims WHERE claimed_until < clock_timestamp() LIMIT ${limit})
        AND claimed_until < clock_timestamp()`,
  );
  return r.rowCount;
}
