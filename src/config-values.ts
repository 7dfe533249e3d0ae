/** Reading environment variables: each bad value stops start-up with one line naming it. */

/** A bad value: start-up stops with this one line. */
export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

// As long as a generated operator token (24 random bytes in base64url); shorter ones are guessable sooner.
export const min_secret_length = 32;

export function checkSecret(name: string, value: string): void {
  if (value.length < min_secret_length) fail(name, `must be at least ${min_secret_length} characters`);
}

export function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export function fail(name: string, why: string): never {
  throw new ConfigError(`${name} ${why}`);
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) fail(name, `must be an integer from ${min} to ${max}, got "${raw}"`);
  return Number(raw);
}

export function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  return fail(name, `must be true or false, got "${raw}"`);
}

export function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!(values as readonly string[]).includes(raw)) fail(name, `must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

export function matching(env: Env, name: string, fallback: string, pattern: RegExp, why: string): string {
  const raw = nonEmpty(env[name]) ?? fallback;
  if (!pattern.test(raw)) fail(name, `${why}, got "${raw}"`);
  return raw;
}
