import { createHmac } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Db, Queryable } from '../db/db.ts';
import { maybeOne, one, run as runSql, type Sql, sql } from '../db/sql.ts';
import { canonicalJson, TooDeepError } from '../domain/canonical-json.ts';
import { ApiError, errorBody, validationError } from '../domain/errors.ts';
import { type Refused, refusalError } from '../domain/result.ts';
import type { Job } from '../workers/job.ts';
import { claimIs, claimKey, dropLapsedClaims, type KeyIds } from './idempotency-claim.ts';

const key_max_length = 255;
const retention_ms = 24 * 60 * 60 * 1000;
const expiry_batch_size = 1_000;
// Rows written before fingerprints were keyed (migration 006) replay whatever body comes with them.
const legacy_fingerprint = 'legacy-unkeyed';

/** A replayed body is the exact JSON text first sent (key order included). */
export interface StoredResponse {
  status: number;
  body: unknown;
  replayed: boolean;
}

export interface IdempotentRequest {
  db: Db;
  sellerId: number;
  endpoint: string;
  key: string | undefined;
  body: unknown;
  now: Date;
  /** Keys the stored request fingerprint: a body may hold a card number, and a plain digest of it can be searched. */
  fingerprintKey: string;
  /**
   * `run` writes with a single statement, which is atomic on its own: without a key it then runs
   * outside BEGIN/COMMIT, two round trips fewer. With a key it always shares a transaction with
   * the stored answer.
   */
  singleStatement?: boolean;
}

type Answer = { status: number; body: unknown };
/** What a request's work gives: its answer, or a refusal (nothing it wrote is kept). */
export type Work = Answer | Refused;

/** The answer, or the refusal thrown, inside the work's transaction so that it rolls back. */
function answered(work: Work): Answer {
  if ('ok' in work) throw refusalError(work.refusal);
  return work;
}

const inUse = () => new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed');

/** The work refused (a 4xx or 5xx ApiError): its transaction rolls back, and a 4xx is then stored under the key. */
class WorkRefused extends Error {
  constructor(readonly refusal: ApiError) {
    super(refusal.message);
  }
}
/** Another request stored an answer under the key after this one looked: its work rolls back, that answer is replayed. */
class AnsweredMeanwhile extends Error {}

/** The work's answer, its ApiError refusals marked as the work's own (the key's own 409/422 are not stored). */
async function workOf(work: () => Promise<Work>): Promise<Answer> {
  try {
    return answered(await work());
  } catch (error) {
    throw error instanceof ApiError ? new WorkRefused(error) : error;
  }
}

/**
 * Runs `run` once per (seller, endpoint, key) within 24 h (CONTRACT §3). The key is held by an
 * advisory lock of the request's own transaction: a concurrent request with the same key is told
 * so at once, and the server frees it when that transaction ends, or when the connection of a
 * process that died mid-request goes. A request that first calls a provider (`prepare`) claims its
 * key before that call (http/idempotency-claim.ts), so one key never makes two provider calls. The
 * answer is stored in the same transaction as the writes it describes, so a crash cannot leave a
 * sale created without its stored answer; 4xx refusals are stored too, 5xx never.
 *
 * Round trips are what a keyed request costs most: the lock, the live-claim check and the stored
 * answer are one statement, the answer's insert is the arbiter (a key answered by another request
 * after this one looked makes the insert find it, and this work rolls back), and a refusal's work
 * is rolled back whole rather than to a savepoint, the refusal stored after.
 */
export async function idempotent<P = null>(
  req: IdempotentRequest,
  run: (q: Queryable, prepared: P | null) => Promise<Work>,
  prepare?: () => Promise<P>,
): Promise<StoredResponse> {
  if (req.key === undefined) {
    const prepared = prepare ? await prepare() : null;
    const answer = req.singleStatement ? answered(await run(req.db, prepared)) : await req.db.tx(async (q) => answered(await run(q, prepared)));
    return { ...answer, replayed: false };
  }
  if (req.key.length === 0 || req.key.length > key_max_length) {
    throw validationError([{ field: 'Idempotency-Key', message: `must be 1 to ${key_max_length} characters` }]);
  }
  const fingerprint = createHmac('sha256', req.fingerprintKey).update(canonicalBody(req.body)).digest('hex');
  const ids = { sellerId: req.sellerId, endpoint: req.endpoint, key: req.key };
  if (prepare) return claimedFirst(req, ids, fingerprint, run, prepare);
  try {
    return await req.db.tx(async (q): Promise<StoredResponse> => {
      const found = await lookUp(q, ids, req.now);
      if (!found.held || found.claimed) throw inUse();
      if (found.request_hash !== null) return replayOf(found.request_hash, found.response_status!, found.response_body!, fingerprint);
      const answer = await workOf(() => run(q, null));
      if (!(await store(q, req, fingerprint, answer))) throw new AnsweredMeanwhile();
      return { ...answer, replayed: false };
    });
  } catch (error) {
    return afterFailure(req, ids, fingerprint, error, (q, answer) => store(q, req, fingerprint, answer));
  }
}

/**
 * The provider call is made once the key is this request's, outside any transaction; the write then
 * checks the claim still is. A refusal here is stored in the answer's own transaction, rolled back to
 * a savepoint: after a rollback the claim's lease, not renewed while that transaction held it, could
 * already be another request's, which would call the provider again.
 */
async function claimedFirst<P>(
  req: IdempotentRequest,
  ids: KeyIds,
  fingerprint: string,
  run: (q: Queryable, prepared: P | null) => Promise<Work>,
  prepare: () => Promise<P>,
): Promise<StoredResponse> {
  const claim = await claimKey(req.db, ids, req.now);
  if (claim.kind === 'held') throw inUse();
  if (claim.kind === 'answered') return replayOf(claim.requestHash, claim.status, claim.body, fingerprint);
  try {
    const prepared = await prepare();
    const outcome = await req.db.tx(async (q) => {
      if (!(await holdClaim(q, ids, claim.token))) throw inUse();
      await runSql(q, sql`SAVEPOINT idempotent_request`);
      const { answer, refusal } = await workOrKeptRefusal(q, () => run(q, prepared));
      if (!(await storeEndingClaim(q, req, fingerprint, answer, claim.token))) throw new AnsweredMeanwhile();
      return { answer, refusal };
    });
    claim.stop(); // ended by the commit
    if (outcome.refusal) throw outcome.refusal;
    return { ...outcome.answer, replayed: false };
  } catch (error) {
    try {
      return await afterFailure(req, ids, fingerprint, error);
    } finally {
      await claim.release(); // a no-op when the answer's commit ended it
    }
  }
}

/** The work's answer; a 4xx refusal instead, its work rolled back to the savepoint; a 5xx thrown. */
async function workOrKeptRefusal(q: Queryable, work: () => Promise<Work>): Promise<{ answer: Answer; refusal: ApiError | null }> {
  try {
    return { answer: await workOf(work), refusal: null };
  } catch (error) {
    if (!(error instanceof WorkRefused) || errorBody(error.refusal.code, '').status >= 500) throw error;
    await runSql(q, sql`ROLLBACK TO SAVEPOINT idempotent_request`);
    const { refusal } = error;
    const { status, body } = errorBody(refusal.code, refusal.message, refusal.details);
    return { answer: { status, body }, refusal };
  }
}

/**
 * A keyed request whose transaction did not commit. A 4xx refusal of its work is stored under the
 * key (in a transaction of its own: the work it interrupted is gone with the rollback). Otherwise an
 * answer stored by another request is what the key answers (this one ran second, or failed while the
 * first was answering); without one, the error stands.
 */
async function afterFailure(
  req: IdempotentRequest,
  ids: KeyIds,
  fingerprint: string,
  error: unknown,
  /** How a 4xx refusal is stored; none where the answer's transaction stored it. */
  keep?: (q: Queryable, answer: Answer) => Promise<boolean>,
): Promise<StoredResponse> {
  const refusal = error instanceof WorkRefused ? error.refusal : null;
  // A 5xx is not kept (CONTRACT §3): the client may retry at once.
  if (keep && refusal && errorBody(refusal.code, '').status < 500) {
    const { status, body } = errorBody(refusal.code, refusal.message, refusal.details);
    if (await req.db.tx((q) => keep(q, { status, body }))) throw refusal;
  }
  const stored = await storedAnswer(req.db, ids, req.now, fingerprint).catch(() => null);
  if (stored) return stored;
  if (error instanceof AnsweredMeanwhile) throw inUse();
  throw refusal ?? error;
}

/** One round trip: the key's advisory lock, another request's live claim on it, and its stored answer. */
async function lookUp(q: Queryable, ids: KeyIds, now: Date) {
  return one(
    await runSql<{ held: boolean; claimed: boolean; request_hash: string | null; response_status: number | null; response_body: string | null }>(
      q,
      sql`SELECT pg_try_advisory_xact_lock(hashtextextended(${[ids.sellerId, ids.endpoint, ids.key].join('\n')}, 0)) AS held,
            EXISTS (SELECT 1 FROM idempotency_claims c WHERE c.seller_id = ${ids.sellerId} AND c.endpoint = ${ids.endpoint} AND c.key = ${ids.key}
              AND c.claimed_until > clock_timestamp()) AS claimed,
            k.request_hash, k.response_status, k.response_body
          FROM (SELECT 1) AS one LEFT JOIN idempotency_keys k
            ON k.seller_id = ${ids.sellerId} AND k.endpoint = ${ids.endpoint} AND k.key = ${ids.key} AND k.expires_at > ${now}`,
    ),
  );
}

/** Inside the answer's transaction: the key's advisory lock, and the claim still this request's, locked until the commit. */
async function holdClaim(q: Queryable, ids: KeyIds, token: string): Promise<boolean> {
  const r = await runSql<{ held: boolean }>(
    q,
    sql`SELECT pg_try_advisory_xact_lock(hashtextextended(${[ids.sellerId, ids.endpoint, ids.key].join('\n')}, 0)) AS held
        FROM idempotency_claims WHERE ${claimIs(ids, token)} FOR UPDATE`,
  );
  return r.rows[0]?.held === true;
}

function replayOf(requestHash: string, status: number, body: string, fingerprint: string): StoredResponse {
  if (requestHash !== fingerprint && requestHash !== legacy_fingerprint) {
    throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body');
  }
  return { status, body, replayed: true };
}

/** The answer stored under this key, to replay; IDEMPOTENCY_KEY_REUSED when it was stored for another body. */
async function storedAnswer(q: Queryable, ids: KeyIds, now: Date, fingerprint: string): Promise<StoredResponse | null> {
  const stored = maybeOne(
    await runSql<{ request_hash: string; response_status: number; response_body: string }>(
      q,
      sql`SELECT request_hash, response_status, response_body FROM idempotency_keys
          WHERE seller_id = ${ids.sellerId} AND endpoint = ${ids.endpoint} AND key = ${ids.key} AND expires_at > ${now}`,
    ),
  );
  if (!stored) return null;
  return replayOf(stored.request_hash, stored.response_status, stored.response_body, fingerprint);
}

function canonicalBody(body: unknown): string {
  try {
    return canonicalJson(body);
  } catch (error) {
    if (error instanceof TooDeepError) throw validationError([{ field: 'body', message: error.message }]);
    throw error;
  }
}

/** Stores the answer unless a live one holds the key (another request answered after this one looked): false then. */
async function store(q: Queryable, req: IdempotentRequest, fingerprint: string, answer: Answer): Promise<boolean> {
  const r = await runSql(q, storing(req, fingerprint, answer, sql``));
  return r.rowCount === 1;
}

/** store, ending the request's claim in the same statement. */
async function storeEndingClaim(q: Queryable, req: IdempotentRequest, fingerprint: string, answer: Answer, token: string): Promise<boolean> {
  const ids = { sellerId: req.sellerId, endpoint: req.endpoint, key: req.key! };
  const r = await runSql(q, storing(req, fingerprint, answer, sql`WITH ended AS (DELETE FROM idempotency_claims WHERE ${claimIs(ids, token)})`));
  return r.rowCount === 1;
}

function storing(req: IdempotentRequest, fingerprint: string, answer: Answer, before: Sql): Sql {
  return sql`${before}
    INSERT INTO idempotency_keys AS k (seller_id, endpoint, key, request_hash, response_status, response_body, expires_at, created_at)
    VALUES (${req.sellerId}, ${req.endpoint}, ${req.key}, ${fingerprint}, ${answer.status}, ${JSON.stringify(answer.body)},
      ${new Date(req.now.getTime() + retention_ms)}, ${req.now})
    ON CONFLICT (seller_id, endpoint, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
      response_body = EXCLUDED.response_body, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
      WHERE k.expires_at <= ${req.now}
    RETURNING 1`;
}

/** Deletes keys past their 24 h (CONTRACT §3), and the claims crashed holders left, a batch at a time. */
export const idempotencyExpiryJob: Job = {
  name: 'idempotency-expiry',
  idle_interval_ms: 60_000,
  async run(ctx) {
    const r = await runSql(
      ctx.db,
      sql`DELETE FROM idempotency_keys WHERE (seller_id, endpoint, key) IN (
            SELECT seller_id, endpoint, key FROM idempotency_keys WHERE expires_at <= ${ctx.clock.now()} LIMIT ${expiry_batch_size})`,
    );
    return r.rowCount + (await dropLapsedClaims(ctx.db, expiry_batch_size));
  },
};

/**
 * Replaces a stored answer's body with what the request finally answered, for work finished after
 * its transaction (a refund handed to its provider): a replay then says what the first answer said.
 */
export async function finalAnswer(req: Pick<IdempotentRequest, 'db' | 'sellerId' | 'endpoint' | 'key'>, body: unknown): Promise<void> {
  if (req.key === undefined) return;
  await runSql(
    req.db,
    sql`UPDATE idempotency_keys SET response_body = ${JSON.stringify(body)} WHERE seller_id = ${req.sellerId} AND endpoint = ${req.endpoint} AND key = ${req.key}`,
  );
}

/** Sends an idempotent answer: a replay goes out as the exact text first sent, marked as such. */
export function sendAnswer(reply: FastifyReply, answer: StoredResponse) {
  if (answer.replayed) void reply.header('idempotent-replayed', 'true').serializer((s: unknown) => s as string);
  return reply.status(answer.status).type('application/json').send(answer.body);
}
