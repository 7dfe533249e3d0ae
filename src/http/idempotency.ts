import { createHmac } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Db, Queryable } from '../db/db.ts';
import { maybeOne, one, run as runSql, sql } from '../db/sql.ts';
import { canonicalJson, TooDeepError } from '../domain/canonical-json.ts';
import { ApiError, errorBody, validationError } from '../domain/errors.ts';
import { type Refused, refusalError } from '../domain/result.ts';
import type { Job } from '../workers/job.ts';
import { claimedByAnother, claimKey, dropLapsedClaims, endClaim, type KeyIds, lockClaim } from './idempotency-claim.ts';

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
type Outcome = { answer: Answer } | { refusal: ApiError };

/** The answer, or the refusal thrown, inside the work's transaction so that it rolls back. */
function answered(work: Work): Answer {
  if ('ok' in work) throw refusalError(work.refusal);
  return work;
}

const inUse = () => new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed');

/**
 * Runs `run` once per (seller, endpoint, key) within 24 h (CONTRACT §3). The key is held by an
 * advisory lock of the request's own transaction: a concurrent request with the same key is told
 * so at once, and the server frees it when that transaction ends, or when the connection of a
 * process that died mid-request goes. A request that first calls a provider (`prepare`) claims its
 * key before that call (http/idempotency-claim.ts), so one key never makes two provider calls. The
 * answer is stored in the same transaction as the writes it describes, so a crash cannot leave a
 * sale created without its stored answer; 4xx refusals are stored too, 5xx never.
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
  let replay: StoredResponse | null = null;
  const outcome = await req.db.tx(async (q): Promise<Outcome | null> => {
    await holdKey(q, ids);
    if (await claimedByAnother(q, ids)) throw inUse();
    replay = await storedAnswer(q, ids, req.now, fingerprint);
    return replay ? null : answerOnce(q, req, fingerprint, () => run(q, null));
  });
  if (replay) return replay;
  return outcomeOf(outcome!);
}

/** The provider call is made once the key is this request's, outside any transaction; the write then checks the claim still is. */
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
      await holdKey(q, ids);
      if (!(await lockClaim(q, ids, claim.token))) throw inUse();
      const outcome = await answerOnce(q, req, fingerprint, () => run(q, prepared));
      await endClaim(q, ids, claim.token);
      return outcome;
    });
    return outcomeOf(outcome);
  } catch (error) {
    await claim.release();
    throw error;
  } finally {
    claim.stop();
  }
}

async function holdKey(q: Queryable, ids: KeyIds): Promise<void> {
  const held = await runSql<{ held: boolean }>(
    q,
    sql`SELECT pg_try_advisory_xact_lock(hashtextextended(${[ids.sellerId, ids.endpoint, ids.key].join('\n')}, 0)) AS held`,
  );
  if (!one(held).held) throw inUse();
}

/** `run`, its answer stored; a 4xx refusal is stored instead of the work it interrupted. */
async function answerOnce(q: Queryable, req: IdempotentRequest, fingerprint: string, work: () => Promise<Work>): Promise<Outcome> {
  await runSql(q, sql`SAVEPOINT idempotent_request`);
  let refusal: ApiError;
  try {
    const answer = await work();
    if (!('ok' in answer)) {
      await store(q, req, fingerprint, answer);
      return { answer };
    }
    refusal = refusalError(answer.refusal);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    refusal = error;
  }
  // The refusal is kept, the work it interrupted is not; a 5xx is not kept at all.
  if (errorBody(refusal.code, '').status >= 500) throw refusal;
  await runSql(q, sql`ROLLBACK TO SAVEPOINT idempotent_request`);
  const { status, body } = errorBody(refusal.code, refusal.message, refusal.details);
  await store(q, req, fingerprint, { status, body });
  return { refusal };
}

function outcomeOf(outcome: Outcome): StoredResponse {
  if ('refusal' in outcome) throw outcome.refusal;
  return { ...outcome.answer, replayed: false };
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

// Reached only when no live row holds the key: an expired one is overwritten.
async function store(q: Queryable, req: IdempotentRequest, fingerprint: string, answer: { status: number; body: unknown }): Promise<void> {
  await runSql(
    q,
    sql`INSERT INTO idempotency_keys AS k (seller_id, endpoint, key, request_hash, response_status, response_body, expires_at, created_at)
        VALUES (${req.sellerId}, ${req.endpoint}, ${req.key}, ${fingerprint}, ${answer.status}, ${JSON.stringify(answer.body)},
          ${new Date(req.now.getTime() + retention_ms)}, ${req.now})
        ON CONFLICT (seller_id, endpoint, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
          response_body = EXCLUDED.response_body, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at`,
  );
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
