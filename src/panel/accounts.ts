/**
 * Panel accounts (CONTRACT §12): one-use invites, passwords with scrypt (memory-hard), sessions of
 * 8 h absolute and 1 h idle with a CSRF token each, and 5 failed logins in 15 minutes → a wait.
 * Invite tokens and session ids are high-entropy: stored as SHA-256 digests, like API keys.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { Db, Queryable } from '../db/db.ts';
import { maybeOne, run, sql } from '../db/sql.ts';
import { digestOf } from '../domain/secrets.ts';

/** A form's CSRF token against the session's (constant time). */
export { sameSecret as csrfMatches } from '../domain/secrets.ts';

export const invite_ttl_ms = 72 * 60 * 60_000;
export const session_absolute_ms = 8 * 60 * 60_000;
export const session_idle_ms = 60 * 60_000;
export const password_min_length = 12;
const failure_limit = 5;
const failure_window_ms = 15 * 60_000;
// N = 2^15, r = 8: 32 MiB and a few tens of ms per hash, the figures OWASP gives for scrypt.
const scrypt_params = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const key_length = 32;

const token = () => randomBytes(32).toString('base64url');

function scryptAsync(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, key_length, scrypt_params, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt);
  return `scrypt$${scrypt_params.N}$${scrypt_params.r}$${scrypt_params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function passwordMatches(password: string, stored: string): Promise<boolean> {
  const [scheme, , , , salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A one-use invite for the seller's account; the token is returned once (only its digest is kept). */
export async function createInvite(q: Queryable, sellerId: number, now: Date): Promise<{ token: string; expiresAt: Date }> {
  const t = token();
  const expiresAt = new Date(now.getTime() + invite_ttl_ms);
  await run(
    q,
    sql`INSERT INTO panel_invites (token_digest, seller_id, expires_at, created_at) VALUES (${digestOf(t)}, ${sellerId}, ${expiresAt}, ${now})`,
  );
  return { token: t, expiresAt };
}

export async function openInvite(q: Queryable, t: string, now: Date): Promise<{ sellerId: number; email: string } | null> {
  return maybeOne(
    await run<{ sellerId: number; email: string }>(
      q,
      sql`SELECT i.seller_id AS "sellerId", s.email FROM panel_invites i JOIN sellers s ON s.id = i.seller_id
          WHERE i.token_digest = ${digestOf(t)} AND i.used_at IS NULL AND i.expires_at > ${now}`,
    ),
  );
}

/** Uses the invite and sets the account's password; false when the invite is gone (used, expired) or the e-mail is taken. */
export async function acceptInvite(q: Queryable, t: string, passwordHash: string, now: Date): Promise<number | null> {
  const used = maybeOne(
    await run<{ seller_id: number }>(
      q,
      sql`UPDATE panel_invites SET used_at = ${now} WHERE token_digest = ${digestOf(t)} AND used_at IS NULL AND expires_at > ${now}
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
  return r.rowCount === 1 ? Number(used.seller_id) : null;
}

export type LoginOutcome = { kind: 'ok'; sellerId: number } | { kind: 'wrong' } | { kind: 'locked'; retryAfterSeconds: number };

/**
 * Checks e-mail and password. Five failures for one account within 15 minutes lock it until the
 * window ends, whatever the password (so guessing gets 5 tries per 15 minutes).
 */
export async function login(q: Queryable, email: string, password: string, now: Date): Promise<LoginOutcome> {
  const account = maybeOne(
    await run<{ seller_id: number; password_hash: string; failures: number; failures_since: Date | null }>(
      q,
      sql`SELECT seller_id, password_hash, failures, failures_since FROM panel_accounts WHERE lower(email) = lower(${email})`,
    ),
  );
  if (!account) {
    // As slow as a real check, so the answer's timing does not tell which e-mails have accounts.
    await hashPassword(password);
    return { kind: 'wrong' };
  }
  const windowOpen = account.failures_since !== null && now.getTime() - account.failures_since.getTime() < failure_window_ms;
  if (windowOpen && account.failures >= failure_limit) {
    return { kind: 'locked', retryAfterSeconds: Math.ceil((account.failures_since!.getTime() + failure_window_ms - now.getTime()) / 1000) };
  }
  if (await passwordMatches(password, account.password_hash)) {
    await run(q, sql`UPDATE panel_accounts SET failures = 0, failures_since = NULL WHERE seller_id = ${account.seller_id}`);
    return { kind: 'ok', sellerId: Number(account.seller_id) };
  }
  await run(
    q,
    sql`UPDATE panel_accounts SET failures = CASE WHEN ${windowOpen} THEN failures + 1 ELSE 1 END,
          failures_since = CASE WHEN ${windowOpen} THEN failures_since ELSE ${now} END
        WHERE seller_id = ${account.seller_id}`,
  );
  return { kind: 'wrong' };
}

export interface Session {
  sellerId: number;
  csrfToken: string;
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
    await run<{ seller_id: number; csrf_token: string }>(
      q,
      sql`UPDATE panel_sessions SET last_seen_at = ${now}
          WHERE id_digest = ${digestOf(id)} AND ended_at IS NULL AND created_at > ${new Date(now.getTime() - session_absolute_ms)}
            AND last_seen_at > ${new Date(now.getTime() - session_idle_ms)}
          RETURNING seller_id, csrf_token`,
    ),
  );
  return row && { sellerId: Number(row.seller_id), csrfToken: row.csrf_token };
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
  sellerId: number,
  keepSessionId: string,
  current: string,
  next: string,
  now: Date,
): Promise<LoginOutcome | { kind: 'changed' }> {
  const account = maybeOne(await run<{ email: string }>(db, sql`SELECT email FROM panel_accounts WHERE seller_id = ${sellerId}`));
  if (!account) return { kind: 'wrong' };
  const checked = await login(db, account.email, current, now);
  if (checked.kind !== 'ok') return checked;
  const hash = await hashPassword(next);
  await db.tx(async (q) => {
    await run(q, sql`UPDATE panel_accounts SET password_hash = ${hash}, updated_at = ${now} WHERE seller_id = ${sellerId}`);
    await run(
      q,
      sql`UPDATE panel_sessions SET ended_at = ${now} WHERE seller_id = ${sellerId} AND id_digest <> ${digestOf(keepSessionId)} AND ended_at IS NULL`,
    );
  });
  return { kind: 'changed' };
}
