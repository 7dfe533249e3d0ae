import { createHmac } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Db, Queryable } from '../db/db.ts';
import { maybeOne, one, run as runSql, type Sql, sql } from '../db/sql.ts';
import { canonicalJson, TooDeepError } from '../domain/canonical-json.ts';
import { ApiError, validationError } from '../domain/errors.ts';
import { type Refused, refusalError } from '../domain/result.ts';
import type { Job } from '../workers/job.ts';
import { errorBody } from './error-bodies.ts';
import { dropLapsedClaims, type KeyIds } from './idempotency-claim.ts';

const key_max_length = 255;
const retention_ms = 24 * 60 * 60 * 1000;
const expiry_batch_size = 1_000;
// Rows written before fingerprints were keyed (migration 006) replay whatever body comes with them.
const legacy_fingerprint = 'legacy-unkeyed';

/** `body` is the answer, or its JSON text: a replay's is the exact text first sent (key order included). */
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
  /** `run` writes with one statement, atomic on its own: without a key it then runs outside BEGIN/COMMIT. */
  singleStatement?: boolean;
}

export type Answer = { status: number; body: unknown };
/**
 * What a use case's work gives: a resource made, an action done, or one handed on to a provider, with
 * what it returns; the HTTP status of each is chosen here (201, 200, 202), never by the use case.
 */
export type Outcome = { made: unknown } | { done: unknown } | { accepted: unknown };
/** A work's outcome, or a refusal (nothing it wrote is kept). */
export type Work = Outcome | Refused;

export const answerOf = (outcome: Outcome): Answer =>
  'made' in outcome
    ? { status: 201, body: outcome.made }
    : 'accepted' in outcome
      ? { status: 202, body: outcome.accepted }
      : { status: 200, body: outcome.done };

/** The answer, or the refusal thrown, inside the work's transaction so that it rolls back. */
function answered(work: Work): Answer {
  if ('ok' in work) throw refusalError(work.refusal);
  return answerOf(work);
}

export const inUse = () => new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed');

/** The work refused (a 4xx or 5xx ApiError): its transaction rolls back, and a 4xx is then stored under the key. */
export class WorkRefused extends Error {
  constructor(readonly refusal: ApiError) {
    super(refusal.message);
  }
}
/** Another request stored an answer under the key after this one looked: its work rolls back, that answer is replayed. */
export class AnsweredMeanwhile extends Error {}

/** The work's answer, its ApiError refusals marked as the work's own (the key's own 409/422 are not stored). */
async function workOf(work: () => Promise<Work>): Promise<Answer> {
  try {
    return answered(await work());
  } catch (error) {
    throw error instanceof ApiError ? new WorkRefused(error) : error;
  }
}

/** A keyed request's ids and its body's fingerprint; a 400 for a key of the wrong length or a body too deep. */
export function keyed(req: IdempotentRequest & { key: string }): { ids: KeyIds; fingerprint: string } {
  if (req.key.length === 0 || req.key.length > key_max_length) {
    throw validationError([{ field: 'Idempotency-Key', message: `must be 1 to ${key_max_length} characters` }]);
  }
  const fingerprint = createHmac('sha256', req.fingerprintKey).update(canonicalBody(req.body)).digest('hex');
  return { ids: { sellerId: req.sellerId, endpoint: req.endpoint, key: req.key }, fingerprint };
}

/**
 * Runs `run` once per (seller, endpoint, key) within 24 h (CONTRACT §3). The key is held by an
 * advisory lock of the request's own transaction: a concurrent request with the same key is told
 * so at once, and the server frees it when that transaction ends, or when the connection of a
 * process that died mid-request goes. The answer is stored in the same transaction as the writes it
 * describes, so a crash cannot leave them without their stored answer; 4xx refusals are stored too,
 * 5xx never. Writes that are one statement take http/idempotent-write.ts instead, in one round trip.
 *
 * Round trips are what a keyed request costs most: the lock and the stored answer are one
 * statement, the answer's insert is the arbiter (a key answered by another request after this one
 * looked makes the insert find it, and this work rolls back), and a refusal's work is rolled back
 * whole rather than to a savepoint, the refusal stored after.
 */
export async function idempotent(req: IdempotentRequest, run: (q: Queryable) => Promise<Work>): Promise<StoredResponse> {
  if (req.key === undefined) {
    const answer = req.singleStatement ? answered(await run(req.db)) : await req.db.tx(async (q) => answered(await run(q)));
    return { ...answer, replayed: false };
  }
  const { ids, fingerprint } = keyed({ ...req, key: req.key });
  try {
    return await req.db.tx(async (q): Promise<StoredResponse> => {
      const found = await lookUp(q, ids, req.now);
      if (!found.held) throw inUse();
      if (found.request_hash !== null) return replayOf(found.request_hash, found.response_status!, found.response_body!, fingerprint);
      const answer = await workOf(() => run(q));
      if (!(await store(q, req, fingerprint, answer))) throw new AnsweredMeanwhile();
      return { ...answer, replayed: false };
    });
  } catch (error) {
    return afterFailure(req, ids, fingerprint, error, (answer) => store(req.db, req, fingerprint, answer));
  }
}

/**
 * A keyed request whose write did not commit. A 4xx refusal of its work is stored under the key
 * (`keep`, one statement: the work it interrupted is gone with the rollback). Otherwise an answer
 * stored by another request is what the key answers (this one ran second, or failed while the
 * first was answering); without one, the error stands.
 */
export async function afterFailure(
  req: IdempotentRequest,
  ids: KeyIds,
  fingerprint: string,
  error: unknown,
  keep: (answer: Answer) => Promise<boolean>,
): Promise<StoredResponse> {
  const refusal = error instanceof WorkRefused ? error.refusal : null;
  // A 5xx is not kept (CONTRACT §3): the client may retry at once.
  if (refusal && errorBody(refusal.code, '').status < 500) {
    const { status, body } = errorBody(refusal.code, refusal.message, refusal.details);
    if (await keep({ status, body })) throw refusal;
  }
  // A look-up that fails leaves the first error standing; a stored answer for another body is 422.
  const stored = await storedAnswer(req.db, ids, req.now, fingerprint).catch((e: unknown) => {
    if (e instanceof ApiError) throw e;
    return null;
  });
  if (stored) return stored;
  if (error instanceof AnsweredMeanwhile) throw inUse();
  throw refusal ?? error;
}

/** One round trip: the key's advisory lock and its stored answer. Keys claimed before a provider call are idempotentWrite's alone. */
async function lookUp(q: Queryable, ids: KeyIds, now: Date) {
  return one(
    await runSql<{ held: boolean; request_hash: string | null; response_status: number | null; response_body: string | null }>(
      q,
      sql`SELECT pg_try_advisory_xact_lock(hashtextextended(${[ids.sellerId, ids.endpoint, ids.key].join('\n')}, 0)) AS held,
            k.request_hash, k.response_status, k.response_body
          FROM (SELECT 1) AS one LEFT JOIN idempotency_keys k
            ON k.seller_id = ${ids.sellerId} AND k.endpoint = ${ids.endpoint} AND k.key = ${ids.key} AND k.expires_at > ${now}`,
    ),
  );
}

export function replayOf(requestHash: string, status: number, body: string, fingerprint: string): StoredResponse {
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
  const r = await runSql(q, storing(req, fingerprint, answer.status, sql`${JSON.stringify(answer.body)}`, sql``));
  return r.rowCount === 1;
}

/** An answer's insert into `idempotency_keys AS k`: over an expired answer only (its key then free again, CONTRACT §3). */
export const replacingExpired = sql`ON CONFLICT (seller_id, endpoint, key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
    response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, expires_at = EXCLUDED.expires_at,
    created_at = EXCLUDED.created_at
  WHERE k.expires_at <= EXCLUDED.created_at`;

/**
 * The statement storing an answer (`body`, SQL giving its JSON text) under the request's key, from
 * the rows of `from` (none: nothing stored); a live answer already there is left, and nothing returned.
 */
export function storing(req: IdempotentRequest, fingerprint: string, status: number, body: Sql, from: Sql): Sql {
  return sql`INSERT INTO idempotency_keys AS k (seller_id, endpoint, key, request_hash, response_status, response_body, expires_at, created_at)
    SELECT ${req.sellerId}::bigint, ${req.endpoint}::text, ${req.key}::text, ${fingerprint}::text, ${status}::int, (${body})::text,
      ${keyExpiry(req.now)}::timestamptz, ${req.now}::timestamptz ${from}
    ${replacingExpired}
    RETURNING 1`;
}

/** When an answer stored now stops being replayed (CONTRACT §3: 24 h). */
export const keyExpiry = (now: Date) => new Date(now.getTime() + retention_ms);

/** Deletes keys past their 24 h (CONTRACT §3), and the claims crashed holders left, a batch at a time. */
export const idempotencyExpiryJob: Job = {
  name: 'idempotency-expiry',
  idle_interval_ms: 60_000,
  async run(ctx) {
    const r = await runSql(
      ctx.db,
      // The expiry is tested again on the row deleted: a sale that stored a fresh answer over an
      // expired one meanwhile (its insert's ON CONFLICT) keeps it, and its key replays it.
      sql`DELETE FROM idempotency_keys WHERE (seller_id, endpoint, key) IN (
            SELECT seller_id, endpoint, key FROM idempotency_keys WHERE expires_at <= ${ctx.clock.now()} LIMIT ${expiry_batch_size})
          AND expires_at <= ${ctx.clock.now()}`,
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
  if (answer.replayed) void reply.header('idempotent-replayed', 'true');
  // JSON text already (a replay, or an answer written by its own statement): sent as is.
  if (typeof answer.body === 'string') void reply.serializer((s: unknown) => s as string);
  return reply.status(answer.status).type('application/json; charset=utf-8').send(answer.body);
}
