/**
 * A key claimed before a provider call (CONTRACT §3, §11): the request that calls a provider before
 * its write claims its Idempotency-Key first, so a concurrent request with the same key is told
 * IDEMPOTENCY_KEY_IN_USE instead of making a second provider call. The claim is a lease on the
 * database's clock, renewed while its holder works: a holder that crashed frees the key within
 * `claim_lease_ms`. The statement that stores the answer deletes the claim.
 *
 * A lease can lapse under a holder that is alive (the database stalled past its renewals) or whose
 * call ended in a 5xx that the client retries. So the claim also carries the reference its provider
 * call is made with: whoever takes the key over with the same body soon after calls with the same
 * reference, and the provider answers with the charge already made under it, never a second one.
 */
import type { Db } from '../db/db.ts';
import { groupWriterPer, waitingAsForAConnection } from '../db/group-write.ts';
import { run, type Sql, sql } from '../db/sql.ts';
import { type ProviderReference, reference_kept_ms } from '../domain/provider-reference.ts';
import { randomAlphanumeric, randomBytes } from '../domain/random.ts';

export const claim_lease_ms = 3_000;
// Renewed well before it lapses: two renewals may fail before another request can take the key over.
const renew_every_ms = 1_000;
const reference_length = 20;

export interface KeyIds {
  sellerId: number;
  endpoint: string;
  key: string;
}

/** What a claim found: the key is ours now, or it holds an answer to replay, or another request holds it. */
export type Claim =
  | { kind: 'claimed'; token: string; reference: ProviderReference; release(): Promise<void>; stop(): void }
  | { kind: 'answered'; requestHash: string; status: number; body: string }
  | { kind: 'held' };

const lease = sql`clock_timestamp() + ${`${claim_lease_ms} milliseconds`}::interval`;
const keyIs = (ids: KeyIds) => sql`seller_id = ${ids.sellerId} AND endpoint = ${ids.endpoint} AND key = ${ids.key}`;

/** The claim `token` on the key: what the statement storing the answer deletes. */
export const claimIs = (ids: KeyIds, token: string) => sql`${keyIs(ids)} AND claimed_by = ${token}`;

interface ClaimWrite {
  ids: KeyIds;
  fingerprint: string;
  token: string;
  reference: string;
  now: Date;
}

type ClaimRow = {
  claimed: boolean;
  claim_reference: string | null;
  request_hash: string | null;
  response_status: number | null;
  response_body: string | null;
};

// Claims go in groups as sales do (db/group-write.ts): a burst of keyed provider calls pays for one
// round trip and one commit.
const claimInGroup = groupWriterPer((db: Db) => ({
  flush: (claims: ClaimWrite[]) => claimKeys(db, claims),
  slot: (c: ClaimWrite) => `${c.ids.sellerId}\n${c.ids.endpoint}\n${c.ids.key}`,
  inFlight: 1,
  maxItems: 32,
  ...waitingAsForAConnection('claims'),
}));

/**
 * Claims the key unless another request's claim lives; a lapsed one is taken over, keeping its
 * reference when the body (`fingerprint`) is the same. One round trip, shared with the claims that
 * arrive meanwhile (claim_idempotency_keys_with_references, migrations 021 and 023): the claims,
 * then each answer looked for with a snapshot taken after them, so either another request's claim
 * was still there (held) or its answer is (replayed); a replay's claim is dropped in the same call.
 */
export async function claimKey(db: Db, ids: KeyIds, fingerprint: string, now: Date): Promise<Claim> {
  const token = randomBytes(16).toString('hex');
  const drawn = randomAlphanumeric(reference_length);
  const r = await claimInGroup(db, { ids, fingerprint, token, reference: drawn, now });
  if (!r.claimed) return { kind: 'held' };
  if (r.request_hash !== null) return { kind: 'answered', requestHash: r.request_hash, status: r.response_status!, body: r.response_body! };
  if (r.claim_reference === null) throw new Error('a claim made answers its reference');
  return holding(db, claimIs(ids, token), token, { value: r.claim_reference, kept: r.claim_reference !== drawn });
}

async function claimKeys(db: Db, claims: ClaimWrite[]): Promise<ClaimRow[]> {
  const input = JSON.stringify(
    claims.map((c, n) => ({
      n,
      seller_id: c.ids.sellerId,
      endpoint: c.ids.endpoint,
      key: c.ids.key,
      token: c.token,
      hash: c.fingerprint,
      reference: c.reference,
      now: c.now,
    })),
  );
  const r = await run<ClaimRow & { ord: number }>(
    db,
    sql`SELECT * FROM claim_idempotency_keys_with_references(${input}::jsonb, ${`${claim_lease_ms} milliseconds`}::interval,
      ${`${reference_kept_ms} milliseconds`}::interval)`,
  );
  const byOrd = new Map(r.rows.map((row) => [row.ord, row]));
  return claims.map((_, n) => {
    const row = byOrd.get(n);
    if (!row) throw new Error(`a group of ${claims.length} claims answered none for claim ${n}`);
    return row;
  });
}

function holding(db: Db, mine: Sql, token: string, reference: ProviderReference): Extract<Claim, { kind: 'claimed' }> {
  const timer = setInterval(() => {
    // Skipped while the statement storing the answer holds it: nobody can take it over then.
    run(
      db,
      // A live lease only: a renewal that reaches the database after the release must not revive it.
      sql`UPDATE idempotency_claims SET claimed_until = ${lease} WHERE ${mine} AND claimed_until > clock_timestamp()
        AND ctid = (SELECT ctid FROM idempotency_claims WHERE ${mine} FOR UPDATE SKIP LOCKED)`,
    ).catch(() => {});
  }, renew_every_ms);
  timer.unref();
  return {
    kind: 'claimed',
    token,
    reference,
    stop: () => clearInterval(timer),
    // The request ended without a stored answer (a 5xx is not kept, CONTRACT §3): the key is free for
    // a retry at once. The claim lapses rather than goes: its call may have reached the provider, and
    // a retry of the same body takes its reference over.
    release: async () => {
      clearInterval(timer);
      await run(db, sql`UPDATE idempotency_claims SET claimed_until = clock_timestamp() WHERE ${mine}`).catch(() => {});
    },
  };
}

/** Claims lapsed (and not taken over since) longer than their reference serves: nothing needs them any more. */
export async function dropLapsedClaims(db: Db, limit: number): Promise<number> {
  const spent = sql`claimed_until < clock_timestamp() - ${`${reference_kept_ms} milliseconds`}::interval`;
  const r = await run(
    db,
    // The lapse is tested again on the row deleted: a claim taken over meanwhile (its lease renewed)
    // is its new holder's, whose provider call it guards.
    sql`DELETE FROM idempotency_claims WHERE (seller_id, endpoint, key) IN (
          SELECT seller_id, endpoint, key FROM idempotency_claims WHERE ${spent} LIMIT ${limit})
        AND ${spent}`,
  );
  return r.rowCount;
}
