/**
 * A keyed write in one round trip (CONTRACT §3): the write and its key's stored answer are one
 * statement, atomic on its own, with no BEGIN, lock or look-up around it. The answer's insert is
 * the arbiter: a key another request answered (or claimed) writes nothing, and that answer is
 * replayed (or the key is in use). A request that calls a provider first claims its key before the
 * call (http/idempotency-claim.ts), and its statement ends that claim, writing nothing if the claim
 * is no longer its own: one key never makes two provider calls.
 */
import { randomBytes } from 'node:crypto';
import { retryWhileUnavailable } from '../db/retry-unavailable.ts';
import { one, run, type Sql, sql } from '../db/sql.ts';
import type { ProviderReference } from '../domain/provider-reference.ts';
import { type Refused, refusalError } from '../domain/result.ts';
import {
  type Answer,
  AnsweredMeanwhile,
  afterFailure,
  answerOf,
  type IdempotentRequest,
  inUse,
  keyExpiry,
  keyed,
  type Outcome,
  replayOf,
  type StoredResponse,
  storing,
  WorkRefused,
} from './idempotency.ts';
import { claimIs, claimKey, type KeyIds } from './idempotency-claim.ts';

/**
 * A keyed request's answer, stored by its write: its JSON text is `head`, the written row's id, then
 * `tail`. With a `claim_token`, the key was claimed before a provider call, and the write ends that claim.
 */
export interface KeyedAnswer {
  endpoint: string;
  key: string;
  request_hash: string;
  status: number;
  head: string;
  tail: string;
  expires_at: Date;
  claim_token: string | null;
}

/** A write that is one statement, storing the key's answer when given: the new row's id, or null when the key was another request's. */
export interface OneWrite {
  write(answer: KeyedAnswer | null): Promise<number | null>;
  answer(id: number): Outcome;
}

/** The written row's id beside the answer: null for a replay. */
export type Written = StoredResponse & { id: number | null };

// The answer is rendered before its row's id exists: this stands for the id in its JSON text, and the
// statement writes the id in its place. Random per process, so no request body can hold it.
const id_slot = `id-slot-${randomBytes(12).toString('hex')}`;

/**
 * What must run before the write, outside any transaction; `callsProvider`: it may call a provider,
 * so a keyed request claims its key first, and `run` gets the claim's reference for that call (null
 * without a key): the same for every request that takes the key over with the same body.
 */
export interface Preparation<P> {
  run(reference: ProviderReference | null): Promise<P>;
  callsProvider: boolean;
}

export async function idempotentWrite<P>(
  req: IdempotentRequest,
  plan: (prepared: P | null) => OneWrite | Refused,
  prepare?: Preparation<P>,
): Promise<Written> {
  if (req.key === undefined) {
    const planned = plan(prepare ? await prepare.run(null) : null);
    if ('ok' in planned) throw refusalError(planned.refusal);
    const id = await planned.write(null);
    if (id === null) throw new Error('an unkeyed write is always written');
    return { ...answerOf(planned.answer(id)), replayed: false, id };
  }
  const request = { ...req, key: req.key };
  const { ids, fingerprint } = keyed(request);
  if (!prepare?.callsProvider) {
    try {
      return await written(request, fingerprint, ids, plan(prepare ? await prepare.run(null) : null), null);
    } catch (error) {
      return { ...(await afterFailure(req, ids, fingerprint, error, (a) => keep(request, ids, fingerprint, a))), id: null };
    }
  }
  const claim = await claimKey(req.db, ids, fingerprint, req.now);
  if (claim.kind === 'held') throw inUse();
  if (claim.kind === 'answered') return { ...replayOf(claim.requestHash, claim.status, claim.body, fingerprint), id: null };
  try {
    const planned = plan(await prepare.run(claim.reference));
    const answer = await retryWhileUnavailable(() => written(request, fingerprint, ids, planned, claim.token), finish_within_ms);
    claim.stop(); // ended by the write
    return answer;
  } catch (error) {
    try {
      return {
        ...(await afterFailure(req, ids, fingerprint, error, (a) => keepEndingClaim(request, fingerprint, a, claimIs(ids, claim.token)))),
        id: null,
      };
    } finally {
      await claim.release(); // a no-op when the write or the kept refusal ended it, or another request took it over
    }
  }
}

// The provider has answered: its word is written down while the database comes back (a failover takes
// 10-20 s), within the client's patience (the SDK waits 30 s), rather than dropped for the client's
// retry to ask the provider again.
const finish_within_ms = 20_000;
/**
 * The write and its answer, in one statement; with a claim `token`, the claim ended by it. A key
 * another request answered or claimed meanwhile writes nothing (AnsweredMeanwhile).
 */
async function written(
  req: IdempotentRequest & { key: string },
  fingerprint: string,
  ids: KeyIds,
  planned: OneWrite | Refused,
  token: string | null,
) {
  if ('ok' in planned) throw new WorkRefused(refusalError(planned.refusal));
  const { status, body } = answerOf(planned.answer(id_slot as unknown as number));
  const [head, tail, ...more] = JSON.stringify(body).split(`"${id_slot}"`);
  if (tail === undefined || more.length > 0) throw new Error('an answer written by its statement shows its id once');
  const id = await planned.write({
    endpoint: ids.endpoint,
    key: ids.key,
    request_hash: fingerprint,
    status,
    head: head!,
    tail,
    expires_at: keyExpiry(req.now),
    claim_token: token,
  });
  if (id === null) throw new AnsweredMeanwhile();
  return { status, body: `${head}${id}${tail}`, replayed: false, id };
}

/** A live claim on the key: a request that called its provider and has yet to write its answer. */
const liveClaim = (ids: KeyIds) =>
  sql`SELECT 1 FROM idempotency_claims c WHERE c.seller_id = ${ids.sellerId} AND c.endpoint = ${ids.endpoint} AND c.key = ${ids.key}
    AND c.claimed_until > clock_timestamp()`;

/**
 * A refusal stored under the key in one statement; false when a live answer holds the key. A key
 * another request claimed is IDEMPOTENCY_KEY_IN_USE: its provider call is made, and its answer is
 * the key's, not this refusal.
 */
async function keep(req: IdempotentRequest, ids: KeyIds, fingerprint: string, answer: Answer): Promise<boolean> {
  const r = one(
    await run<{ kept: boolean; claimed: boolean }>(
      req.db,
      sql`WITH live AS (${liveClaim(ids)}),
        kept AS (${storing(req, fingerprint, answer.status, sql`${JSON.stringify(answer.body)}`, sql`FROM (SELECT 1) AS one WHERE NOT EXISTS (SELECT 1 FROM live)`)})
      SELECT EXISTS (SELECT 1 FROM kept) AS kept, EXISTS (SELECT 1 FROM live) AS claimed`,
    ),
  );
  if (r.claimed) throw inUse();
  return r.kept;
}

/** keep, ending the request's claim (`mine`) in the same statement: nothing stored once the claim is another's. */
async function keepEndingClaim(req: IdempotentRequest, fingerprint: string, answer: Answer, mine: Sql): Promise<boolean> {
  const r = await run(
    req.db,
    sql`WITH ended AS (DELETE FROM idempotency_claims WHERE ${mine} RETURNING 1)
      ${storing(req, fingerprint, answer.status, sql`${JSON.stringify(answer.body)}`, sql`FROM (SELECT 1) AS one WHERE EXISTS (SELECT 1 FROM ended)`)}`,
  );
  return r.rowCount === 1;
}
