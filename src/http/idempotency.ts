import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Db, Queryable } from '../db/db.ts';
import { canonicalJson, TooDeepError } from '../domain/canonical-json.ts';
import { ApiError, errorBody, validationError } from '../domain/errors.ts';

const key_max_length = 255;
const retention_ms = 24 * 60 * 60 * 1000;
// A request that holds a key longer than this is taken as crashed; its key may be taken over.
const lock_ms = 60 * 1000;

/** A replayed body is the exact JSON text first sent (key order included). */
export interface StoredResponse { status: number; body: unknown; replayed: boolean }

export interface IdempotentRequest {
  db: Db; sellerId: number; endpoint: string; key: string | undefined; body: unknown; now: Date;
  /**
   * `run` writes with a single statement, which is atomic on its own: without a key it then runs
   * outside BEGIN/COMMIT, two round trips fewer. With a key it always shares a transaction with
   * the stored answer.
   */
  singleStatement?: boolean;
}

/**
 * Runs `run` once per (seller, endpoint, key) within 24 h (CONTRACT §3). The answer is stored in
 * the same database transaction as the writes it describes, so a crash cannot leave a sale
 * created without its stored answer; 4xx refusals are stored too, 5xx never.
 */
export async function idempotent(req: IdempotentRequest, run: (q: Queryable) => Promise<{ status: number; body: unknown }>): Promise<StoredResponse> {
  if (req.key === undefined) return { ...(await (req.singleStatement ? run(req.db) : req.db.tx(run))), replayed: false };
  if (req.key.length === 0 || req.key.length > key_max_length) {
    throw validationError([{ field: 'Idempotency-Key', message: `must be 1 to ${key_max_length} characters` }]);
  }
  const hash = createHash('sha256').update(canonicalBody(req.body)).digest('hex');
  const previous = await claim(req, hash);
  if (previous) return previous;
  try {
    return await req.db.tx(async (q) => {
      const answer = await run(q);
      await store(q, req, answer);
      return { ...answer, replayed: false };
    });
  } catch (error) {
    if (error instanceof ApiError && errorBody(error.code, '').status < 500) {
      const { status, body } = errorBody(error.code, error.message, error.details);
      await store(req.db, req, { status, body });
    } else {
      await release(req);
    }
    throw error;
  }
}

function canonicalBody(body: unknown): string {
  try {
    return canonicalJson(body);
  } catch (error) {
    if (error instanceof TooDeepError) throw validationError([{ field: 'body', message: error.message }]);
    throw error;
  }
}

/** Takes the key, or answers what the key already holds. */
async function claim(req: IdempotentRequest, hash: string): Promise<StoredResponse | null> {
  const ids = [req.sellerId, req.endpoint, req.key];
  const taken = await req.db.query(`
    INSERT INTO idempotency_keys AS k (seller_id, endpoint, key, request_hash, locked_until, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (seller_id, endpoint, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL,
          locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at, created_at = now()
      WHERE k.expires_at <= $7 OR (k.response_status IS NULL AND k.locked_until <= $7 AND k.request_hash = EXCLUDED.request_hash)
    RETURNING 1`,
  [...ids, hash, new Date(req.now.getTime() + lock_ms), new Date(req.now.getTime() + retention_ms), req.now]);
  if (taken.rowCount > 0) return null;
  const existing = (await req.db.query<{ request_hash: string; response_status: number | null; response_body: string }>(
    'SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE seller_id = $1 AND endpoint = $2 AND key = $3', ids)).rows[0];
  if (!existing) return claim(req, hash); // it expired and was removed between the two statements
  if (existing.request_hash !== hash) throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body');
  if (existing.response_status === null) throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed');
  return { status: existing.response_status, body: existing.response_body, replayed: true };
}

async function store(q: Queryable, req: IdempotentRequest, answer: { status: number; body: unknown }): Promise<void> {
  await q.query('UPDATE idempotency_keys SET response_status = $4, response_body = $5 WHERE seller_id = $1 AND endpoint = $2 AND key = $3',
    [req.sellerId, req.endpoint, req.key, answer.status, JSON.stringify(answer.body)]);
}

async function release(req: IdempotentRequest): Promise<void> {
  await req.db.query('DELETE FROM idempotency_keys WHERE seller_id = $1 AND endpoint = $2 AND key = $3 AND response_status IS NULL',
    [req.sellerId, req.endpoint, req.key]).catch(() => {});
}

/** Sends an idempotent answer: a replay goes out as the exact text first sent, marked as such. */
export function sendAnswer(reply: FastifyReply, answer: StoredResponse) {
  if (answer.replayed) void reply.header('idempotent-replayed', 'true').serializer((s: unknown) => s as string);
  return reply.status(answer.status).type('application/json').send(answer.body);
}
