import { createHmac } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Db, Queryable } from '../db/db.ts';
import { maybeOne, one } from '../db/sql.ts';
import { canonicalJson, TooDeepError } from '../domain/canonical-json.ts';
import { ApiError, errorBody, validationError } from '../domain/errors.ts';
import type { Job } from '../workers/job.ts';

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

type Outcome = { answer: { status: number; body: unknown } } | { refusal: ApiError };

/**
 * Runs `run` once per (seller, endpoint, key) within 24 h (CONTRACT §3). The key is held by an
 * advisory lock of the request's own transaction: a concurrent request with the same key is told
 * so at once, and the server frees it when that transaction ends, or when the connection of a
 * process that died mid-request goes. The answer is stored in the same transaction as the writes
 * it describes, so a crash cannot leave a sale created without its stored answer; 4xx refusals are
 * stored too, 5xx never.
 */
export async function idempotent<P = null>(
  req: IdempotentRequest,
  run: (q: Queryable, prepared: P | null) => Promise<{ status: number; body: unknown }>,
  prepare?: () => Promise<P>,
): Promise<StoredResponse> {
  if (req.key === undefined) {
    const prepared = prepare ? await prepare() : null;
    return { ...(await (req.singleStatement ? run(req.db, prepared) : req.db.tx((q) => run(q, prepared)))), replayed: false };
  }
  if (req.key.length === 0 || req.key.length > key_max_length) {
    throw validationError([{ field: 'Idempotency-Key', message: `must be 1 to ${key_max_length} characters` }]);
  }
  const fingerprint = createHmac('sha256', req.fingerprintKey).update(canonicalBody(req.body)).digest('hex');
  const ids = [req.sellerId, req.endpoint, req.key];
  // A provider call (`prepare`) never runs inside the transaction, and not at all for an answer already stored.
  const earlier = await storedAnswer(req.db, ids, req.now, fingerprint);
  if (earlier) return earlier;
  const prepared = prepare ? await prepare() : null;
  let replay: StoredResponse | null = null;
  const outcome = await req.db.tx(async (q): Promise<Outcome | null> => {
    const held = await q.query<{ held: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS held', [ids.join('\n')]);
    if (!one(held).held) throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed');
    replay = await storedAnswer(q, ids, req.now, fingerprint);
    if (replay) return null;
    await q.query('SAVEPOINT idempotent_request');
    try {
      const answer = await run(q, prepared);
      await store(q, req, fingerprint, answer);
      return { answer };
    } catch (error) {
      if (!(error instanceof ApiError) || errorBody(error.code, '').status >= 500) throw error;
      // The refusal is kept, the work it interrupted is not.
      await q.query('ROLLBACK TO SAVEPOINT idempotent_request');
      const { status, body } = errorBody(error.code, error.message, error.details);
      await store(q, req, fingerprint, { status, body });
      return { refusal: error };
    }
  });
  if (replay) return replay;
  if (outcome && 'refusal' in outcome) throw outcome.refusal;
  return { ...outcome!.answer, replayed: false };
}

/** The answer stored under this key, to replay; IDEMPOTENCY_KEY_REUSED when it was stored for another body. */
async function storedAnswer(q: Queryable, ids: unknown[], now: Date, fingerprint: string): Promise<StoredResponse | null> {
  const stored = maybeOne(
    await q.query<{ request_hash: string; response_status: number; response_body: string }>(
      'SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE seller_id = $1 AND endpoint = $2 AND key = $3 AND expires_at > $4',
      [...ids, now],
    ),
  );
  if (!stored) return null;
  if (stored.request_hash !== fingerprint && stored.request_hash !== legacy_fingerprint) {
    throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body');
  }
  return { status: stored.response_status, body: stored.response_body, replayed: true };
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
  await q.query(
    `
    INSERT INTO idempotency_keys AS k (seller_id, endpoint, key, request_hash, response_status, response_body, expires_at, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    ON CONFLICT (seller_id, endpoint, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
      response_body = EXCLUDED.response_body, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at`,
    [
      req.sellerId,
      req.endpoint,
      req.key,
      fingerprint,
      answer.status,
      JSON.stringify(answer.body),
      new Date(req.now.getTime() + retention_ms),
      req.now,
    ],
  );
}

/** Deletes keys past their 24 h (CONTRACT §3), a batch at a time. */
export const idempotencyExpiryJob: Job = {
  name: 'idempotency-expiry',
  idle_interval_ms: 60_000,
  async run(ctx) {
    const r = await ctx.db.query(
      `
      DELETE FROM idempotency_keys WHERE (seller_id, endpoint, key) IN (
        SELECT seller_id, endpoint, key FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2)`,
      [ctx.clock.now(), expiry_batch_size],
    );
    return r.rowCount;
  },
};

/**
 * Replaces a stored answer's body with what the request finally answered, for work finished after
 * its transaction (a refund handed to its provider): a replay then says what the first answer said.
 */
export async function finalAnswer(req: Pick<IdempotentRequest, 'db' | 'sellerId' | 'endpoint' | 'key'>, body: unknown): Promise<void> {
  if (req.key === undefined) return;
  await req.db.query('UPDATE idempotency_keys SET response_body = $4 WHERE seller_id = $1 AND endpoint = $2 AND key = $3', [
    req.sellerId,
    req.endpoint,
    req.key,
    JSON.stringify(body),
  ]);
}

/** Sends an idempotent answer: a replay goes out as the exact text first sent, marked as such. */
export function sendAnswer(reply: FastifyReply, answer: StoredResponse) {
  if (answer.replayed) void reply.header('idempotent-replayed', 'true').serializer((s: unknown) => s as string);
  return reply.status(answer.status).type('application/json').send(answer.body);
}
