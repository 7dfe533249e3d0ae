/**
 * Panel accounts (CONTRACT §12): one-use invites, passwords with scrypt (memory-hard, on the bounded
 * pool of passwords.ts), sessions of 8 h absolute and 1 h idle with a CSRF token each, and at most 5
 * password checks per account in 15 minutes, counted before the check however many arrive at once.
 * Invite tokens and session ids are high-entropy: stored as SHA-256 digests, like API keys.
 */
import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../db/db.ts';
import { maybeOne, run, sql } from '../db/sql.ts';
import { digestOf } from '../domain/secrets.ts';
import { HashingBusy, type PasswordHasher } from './passwords.ts';

/** A form's CSRF token against the session's (constant time). */
export { sameSecret as csrfMatches } from '../domain/secrets.ts';

export const invite_ttl_ms = 72 * 60 * 60_000;
export const session_absolute_ms = 8 * 60 * 60_000;
export const session_idle_ms = 60 * 60_000;
export const password_min_length = 12;
const attempt_limit = 5;
const attempt_window_ms = 15 * 60_000;

const token = () => randomBytes(32).toString('base64url');

/**
 * A one-use invite for the seller's account; the token is returned once (only its digest is kept).
 * It retires the seller's older unused invites: only the latest link sent can set the password.
 */
export async function createInvite(q: Queryable, sellerId: number, now: Date): Promise<{ token: string; expiresAt: Date }> {
  const t = token();
  const expiresAt = new Date(now.getTime() + invite_ttl_ms);
  await run(
    q,
    sql`WITH retired AS (
          UPDATE panel_invites SET retired_at = ${now} WHERE seller_id = ${sellerId} AND used_at IS NULL AND retired_at IS NULL
        )
        INSERT INTO panel_invites (token_digest, seller_id, expires_at, created_at) VALUES (${digestOf(t)}, ${sellerId}, ${expiresAt}, ${now})`,
  );
  return { token: t, expiresAt };
}

export async function openInvite(q: Queryable, t: string, now: Date): Promise<{ sellerId: number; email: string } | null> {
  return maybeOne(
    await run<{ sellerId: number; email: string }>(
      q,
      sql`SELECT i.seller_id AS "sellerId", s.email FROM panel_invites i JOIN sellers s ON s.id = i.seller_id
          WHERE i.token_digest = ${digestOf(t)} AND i.used_at IS NULL AND i.retired_at IS NULL AND i.expires_at > ${now}`,
    ),
  );
}

/**
 * Uses the invite and sets the account's password (a reset, when the account exists), and ends
 * every session of the account: whoever held one before the reset is out. Null when the invite is
 * gone (used, retired, expired) or the e-mail is taken.
 */
export async function acceptInvite(db: Db, t: string, passwordHash: string, now: Date): Promise<number | null> {
  return db.tx(async (q) => {
    const used = maybeOne(
      await run<{ seller_id: number }>(
        q,
        sql`UPDATE panel_invites SET used_at = ${now}
            WHERE token_digest = ${digestOf(t)} AND used_at IS NULL AND retired_at IS NULL AND expires_at > ${now}
            RETURNING seller_id`,
      ),
    );
    if (!used) return null;
    const r = await run(
      q,
      sql`INSERT INTO panel_accounts (seller_id, email, password_hash, created_at, updated_at)
          SELECT id, email, ${passwordHash}, ${now}, ${now} FROM sellers WHERE id = ${used.seller_id}
          ON CONFLICT (seller_id) DO UPDATE SET password_hash = EXCLUDED.password_hash, failures = 0, failures_since = NULL,
            updated_at = EXCLUDED.updated_at`,
    );
    if (r.rowCount !== 1) return null;
    await run(q, sql`UPDATE panel_sessions SET ended_at = ${now} WHERE seller_id = ${used.seller_id} AND ended_at IS NULL`);
    return Number(used.seller_id);
  });
}

export type LoginOutcome =
  | { kind: 'ok'; sellerId: number }
  | { kind: 'wrong' }
  | { kind: 'locked'; retryAfterSeconds: number }
  | { kind: 'busy'; retryAfterSeconds: number };

/**
 * Checks e-mail and password. Each check of an account's password is counted before it is made,
 * in one statement, so however many arrive together at most 5 are made per 15 minutes; after them
 * the account waits out the window, whatever the password. A right password clears the count.
 */
export async function login(q: Queryable, hasher: PasswordHasher, email: string, password: string, now: Date): Promise<LoginOutcome> {
  // A lock seen here spares the pool; the count below is what holds under concurrency.
  const locked = await lockedFor(q, email, now);
  if (locked) return locked;
  try {
    return await hasher.exclusive(async (slot) => {
      const account = await countAttempt(q, email, now);
      if (account === 'unknown') {
        // As slow as a real check, so the answer's timing does not tell which e-mails have accounts.
        await slot.hash(password);
        return { kind: 'wrong' };
      }
      if (account === 'locked') return (await lockedFor(q, email, now)) ?? { kind: 'wrong' };
      if (!(await slot.matches(password, account.password_hash))) return { kind: 'wrong' };
      await run(q, sql`UPDATE panel_accounts SET failures = 0, failures_since = NULL WHERE seller_id = ${account.seller_id}`);
      return { kind: 'ok', sellerId: Number(account.seller_id) };
    });
  } catch (error) {
    if (error instanceof HashingBusy) return { kind: 'busy', retryAfterSeconds: error.retryAfterSeconds };
    throw error;
  }
}

async function lockedFor(q: Queryable, email: string, now: Date): Promise<LoginOutcome | null> {
  const row = maybeOne(
    await run<{ failures: number; failures_since: Date | null }>(
      q,
      sql`SELECT failures, failures_since FROM panel_accounts WHERE lower(email) = lower(${email})`,
    ),
  );
  if (!row?.failures_since || row.failures < attempt_limit) return null;
  const endsAt = row.failures_since.getTime() + attempt_window_ms;
  return endsAt > now.getTime() ? { kind: 'locked', retryAfterSeconds: Math.ceil((endsAt - now.getTime()) / 1000) } : null;
}

/** Counts one check of the account's password, unless its 5 of the window are spent ('locked'). */
async function countAttempt(q: Queryable, email: string, now: Date): Promise<{ seller_id: number; password_hash: string } | 'locked' | 'unknown'> {
  const windowStart = new Date(now.getTime() - attempt_window_ms);
  const counted = maybeOne(
    await run<{ seller_id: number; password_hash: string }>(
      q,
      sql`UPDATE panel_accounts SET
            failures = CASE WHEN coalesce(failures_since > ${windowStart}, false) THEN failures + 1 ELSE 1 END,
            failures_since = CASE WHEN coalesce(failures_since > ${windowStart}, false) THEN failures_since ELSE ${now} END
          WHERE lower(email) = lower(${email}) AND NOT (coalesce(failures_since > ${windowStart}, false) AND failures >= ${attempt_limit})
          RETURNING seller_id, password_hash`,
    ),
  );
  if (counted) return counted;
  const exists = maybeOne(await run(q, sql`SELECT 1 FROM panel_accounts WHERE lower(email) = lower(${email})`));
  return exists ? 'locked' : 'unknown';
}

export interface Session {
  sellerId: number;
  csrfToken: string;
  /** The seller's name (the shop), shown in every logged-in page's header. */
  shopName?: string;
}

export async function startSession(q: Queryable, sellerId: number, now: Date): Promise<{ id: string; session: Session }> {
  const id = token();
  const csrfToken = token();
  await run(
    q,
    sql`INSERT INTO panel_sessions (id_digest, seller_id, csrf_token, created_at, last_seen_at)
        VALUES (${digestOf(id)}, ${sellerId}, ${csrfToken}, ${now}, ${now})`,
  );
  return { id, session: { sellerId, csrfToken } };
}

/** The live session of this id (and it is seen now), or null: unknown, ended, 8 h old or idle 1 h. */
export async function resumeSession(q: Queryable, id: string, now: Date): Promise<Session | null> {
  const row = maybeOne(
    await run<{ seller_id: number; csrf_token: string; shop_name: string | null }>(
      q,
      sql`UPDATE panel_sessions SET last_seen_at = ${now}
          WHERE id_digest = ${digestOf(id)} AND ended_at IS NULL AND created_at > ${new Date(now.getTime() - session_absolute_ms)}
            AND last_seen_at > ${new Date(now.getTime() - session_idle_ms)}
          RETURNING seller_id, csrf_token, (SELECT name FROM sellers WHERE sellers.id = panel_sessions.seller_id) AS shop_name`,
    ),
  );
  return row && { sellerId: Number(row.seller_id), csrfToken: row.csrf_token, ...(row.shop_name ? { shopName: row.shop_name } : {}) };
}

export async function endSession(q: Queryable, id: string, now: Date): Promise<void> {
  await run(q, sql`UPDATE panel_sessions SET ended_at = ${now} WHERE id_digest = ${digestOf(id)} AND ended_at IS NULL`);
}

/**
 * Changes the password when the current one is given, checked as a login is: a wrong one counts
 * toward the same lock, so a stolen session cannot guess its way to the password. Every other
 * session of the account ends, so a password changed because it leaked closes what it opened.
 */
export async function changePassword(
  db: Db,
  hasher: PasswordHasher,
  sellerId: number,
  keepSessionId: string,
  current: string,
  next: string,
  now: Date,
): Promise<LoginOutcome | { kind: 'changed' }> {
  const account = maybeOne(await run<{ email: string }>(db, sql`SELECT email FROM panel_accounts WHERE seller_id = ${sellerId}`));
  if (!account) return { kind: 'wrong' };
  const checked = await login(db, hasher, account.email, current, now);
  if (checked.kind !== 'ok') return checked;
  let hash: string;
  try {
    hash = await hasher.hash(next);
  } catch (error) {
    if (error instanceof HashingBusy) return { kind: 'busy', retryAfterSeconds: error.retryAfterSeconds };
    throw error;
  }
  await db.tx(async (q) => {
    await run(q, sql`UPDATE panel_accounts SET password_hash = ${hash}, updated_at = ${now} WHERE seller_id = ${sellerId}`);
    await run(
      q,
      sql`UPDATE panel_sessions SET ended_at = ${now} WHERE seller_id = ${sellerId} AND id_digest <> ${digestOf(keepSessionId)} AND ended_at IS NULL`,
    );
  });
  return { kind: 'changed' };
}
