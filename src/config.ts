import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { boolean, ConfigError, checkSecret, type Env, fail, integer, matching, nonEmpty, oneOf } from './config-values.ts';
import { type MerchantField, merchantField } from './domain/pix-brcode.ts';
import { normalizePixKey, PIX_KEY_MAX_LENGTH, pixKeyTypeOf } from './domain/pix-keys.ts';

export type Role = 'api' | 'worker' | 'all';

export interface Config {
  port: number;
  host: string;
  /** The gateway's address as shoppers and providers reach it, without a trailing slash: the 3-D Secure pages are built on it. */
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  embedded: boolean;
  adminToken: string;
  postbackSecret: string;
  sandboxAutopilot: boolean;
  webhookAllowPrivate: boolean;
  /** Proxies whose X-Forwarded-For / -Proto are believed: none (false), any (true), or these addresses and ranges. */
  trustProxy: boolean | string[];
  pixReceiverKey: string;
  pixMerchantName: string;
  pixMerchantCity: string;
  boletoBankCode: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Requests a second per seller key, per process; the burst is twice this. */
  rateLimitPerSecond: number;
  /** Failed authentications a minute per client address, per process. */
  authFailuresPerMinute: number;
  /** Longest a client may take to send a whole request (headers and body). */
  httpRequestTimeoutMs: number;
  /**
   * Longest a connection may go with nothing sent or received (a client that stopped reading its
   * answer): longer than any request may work in silence, the ledger's verification (up to 10
   * minutes) and every provider call included.
   */
  httpIdleTimeoutMs: number;
  /** Longest a graceful stop may take (requests, jobs, the database closed); then the process exits with code 1. */
  shutdownTimeoutMs: number;
  /** Open connections beyond this are dropped at accept. */
  httpMaxConnections: number;
  /** Where generated secrets were stored, for the start-up message; null when all came from the environment. */
  secretsFile: string | null;
}

export { ConfigError } from './config-values.ts';

const log_levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const max_rate = 10_000_000;
// Below this Node's once-a-second connection check would make the timeout meaningless.
const min_request_timeout_ms = 1000;
const max_request_timeout_ms = 3_600_000;

/**
 * The configuration as the environment gives it: the PIX receiver key is null with PostgreSQL
 * when none is configured, made once and kept in the database when the gateway starts (runtime.ts).
 */
export type LoadedConfig = Omit<Config, 'pixReceiverKey'> & { pixReceiverKey: string | null };

export function loadConfig(env: Env): LoadedConfig {
  const databaseUrl = nonEmpty(env.DATABASE_URL);
  if (databaseUrl !== undefined && databaseUrl !== 'memory://' && !/^postgres(ql)?:\/\/.+/.test(databaseUrl)) {
    fail('DATABASE_URL', 'must be postgres://… or memory://');
  }
  const embedded = databaseUrl === undefined || databaseUrl === 'memory://';
  const dataDir = nonEmpty(env.DATA_DIR) ?? './data';
  if (nonEmpty(env.PROVIDER) !== undefined)
    fail('PROVIDER', 'is gone: each rail has its own, PIX_PROVIDER, CARD_PROVIDER, PAYOUT_PROVIDER and BOLETO_PROVIDER');
  const secrets = embedded ? embeddedSecrets(env, dataDir) : requiredSecrets(env);
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = nonEmpty(env.HOST) ?? '127.0.0.1';
  return {
    port,
    host,
    publicBaseUrl: publicBaseUrl(env, host, port),
    databaseUrl,
    dataDir,
    embedded,
    adminToken: secrets.adminToken,
    postbackSecret: secrets.postbackSecret,
    sandboxAutopilot: boolean(env, 'SANDBOX_AUTOPILOT', true),
    // A real rail means a real deployment: a seller's webhook must not reach inside its network.
    webhookAllowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', everyRailSandbox(env)),
    trustProxy: trustProxy(env),
    pixReceiverKey: pixReceiverKey(env, secrets),
    pixMerchantName: merchant(env, 'PIX_MERCHANT_NAME', 'merchantName', 'GATEWAY SANDBOX'),
    pixMerchantCity: merchant(env, 'PIX_MERCHANT_CITY', 'merchantCity', 'SAO PAULO'),
    boletoBankCode: matching(env, 'BOLETO_BANK_CODE', '001', /^\d{3}$/, 'must be three digits'),
    logLevel: oneOf(env, 'LOG_LEVEL', log_levels, 'info'),
    rateLimitPerSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 100, 1, max_rate),
    authFailuresPerMinute: integer(env, 'AUTH_FAILURES_PER_MINUTE', 20, 1, max_rate),
    httpRequestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, min_request_timeout_ms, max_request_timeout_ms),
    httpIdleTimeoutMs: integer(env, 'HTTP_IDLE_TIMEOUT_MS', 900_000, min_request_timeout_ms, max_request_timeout_ms),
    httpMaxConnections: integer(env, 'HTTP_MAX_CONNECTIONS', 1000, 1, 1_000_000),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 25_000, min_request_timeout_ms, max_request_timeout_ms),
    secretsFile: secrets.file,
  };
}

/** `PUBLIC_BASE_URL`, or where this process listens: an absolute http(s) URL with no query, kept without a trailing slash. */
function publicBaseUrl(env: Env, host: string, port: number): string {
  const raw = nonEmpty(env.PUBLIC_BASE_URL) ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const url = URL.parse(raw);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username)
    fail('PUBLIC_BASE_URL', `must be an absolute http(s) URL without query, fragment or credentials, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

// Each rail's own loader checks its value; here only whether any names a real provider.
const rail_variables = ['PIX_PROVIDER', 'CARD_PROVIDER', 'PAYOUT_PROVIDER', 'BOLETO_PROVIDER'];
const everyRailSandbox = (env: Env) => rail_variables.every((name) => (nonEmpty(env[name]) ?? 'sandbox') === 'sandbox');

/** `TRUST_PROXY`: false (default), true, or a comma-separated list of addresses and CIDR ranges. */
function trustProxy(env: Env): boolean | string[] {
  const raw = nonEmpty(env.TRUST_PROXY);
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const valid = entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry);
    if (!valid) fail('TRUST_PROXY', `must be true, false or a comma-separated list of addresses and CIDR ranges, got "${entry}"`);
  }
  return entries;
}

interface Secrets {
  adminToken: string;
  postbackSecret: string;
  pixReceiverKey: string | undefined;
  file: string | null;
}

function requiredSecrets(env: Env): Secrets {
  const adminToken = nonEmpty(env.ADMIN_TOKEN) ?? fail('ADMIN_TOKEN', 'is required with a PostgreSQL DATABASE_URL');
  const postbackSecret = nonEmpty(env.POSTBACK_SECRET) ?? fail('POSTBACK_SECRET', 'is required with a PostgreSQL DATABASE_URL');
  checkSecret('ADMIN_TOKEN', adminToken);
  checkSecret('POSTBACK_SECRET', postbackSecret);
  return { adminToken, postbackSecret, pixReceiverKey: undefined, file: null };
}

/**
 * Embedded mode must start with zero set-up, so missing secrets are generated once and kept in
 * DATA_DIR/secrets.json (mode 0600); the same values come back on every later start.
 */
function embeddedSecrets(env: Env, dataDir: string): Secrets {
  const file = join(dataDir, 'secrets.json');
  const stored = readStoredSecrets(file);
  const wanted = {
    adminToken: nonEmpty(env.ADMIN_TOKEN) ?? stored.adminToken ?? randomBytes(24).toString('base64url'),
    postbackSecret: nonEmpty(env.POSTBACK_SECRET) ?? stored.postbackSecret ?? randomBytes(32).toString('hex'),
    pixReceiverKey: nonEmpty(env.PIX_RECEIVER_KEY) ?? stored.pixReceiverKey ?? randomUUID(),
  };
  checkSecret('ADMIN_TOKEN', wanted.adminToken);
  checkSecret('POSTBACK_SECRET', wanted.postbackSecret);
  const generated = {
    ...(env.ADMIN_TOKEN ? {} : { adminToken: wanted.adminToken }),
    ...(env.POSTBACK_SECRET ? {} : { postbackSecret: wanted.postbackSecret }),
    ...(env.PIX_RECEIVER_KEY ? {} : { pixReceiverKey: wanted.pixReceiverKey }),
  };
  const needsFile = Object.keys(generated).length > 0;
  if (needsFile && JSON.stringify({ ...stored, ...generated }) !== JSON.stringify(stored)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${JSON.stringify({ ...stored, ...generated }, null, 2)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return { ...wanted, file: needsFile ? file : null };
}

function readStoredSecrets(file: string): Partial<Record<'adminToken' | 'postbackSecret' | 'pixReceiverKey', string>> {
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new ConfigError(`DATA_DIR: ${file} is not valid JSON; fix or remove it`);
  }
}

const key_forms = 'a CPF (11 digits), a CNPJ (14 characters), an e-mail, a phone (+55, DDD, number) or a random key (lower-case UUID)';

/**
 * The platform's key goes into every BR Code as written, so it must be valid and already in the
 * DICT's canonical form: CPF and CNPJ without punctuation, e-mail and random key in lower case,
 * phone as bare +55 E.164. A key that is valid but written otherwise is refused with the form to use.
 */
function pixReceiverKey(env: Env, secrets: Secrets): string | null {
  const fromEnv = nonEmpty(env.PIX_RECEIVER_KEY);
  // With PostgreSQL, every process of the installation must write the same key: one is made in the database.
  if (fromEnv === undefined && secrets.file === null && secrets.pixReceiverKey === undefined) return null;
  const key: unknown = fromEnv ?? secrets.pixReceiverKey ?? randomUUID();
  const name = fromEnv === undefined && secrets.file ? `PIX_RECEIVER_KEY (kept in ${secrets.file})` : 'PIX_RECEIVER_KEY';
  if (typeof key !== 'string') return fail(name, `must be a string, one of ${key_forms}`);
  if (key.length > PIX_KEY_MAX_LENGTH) fail(name, `must be at most ${PIX_KEY_MAX_LENGTH} characters (a DICT key)`);
  const type = pixKeyTypeOf(key) ?? fail(name, `must be a PIX key, ${key_forms}, got "${key}"`);
  const canonical = normalizePixKey(type, key);
  // Eleven digits read as a CPF; a phone written without +55 looks the same.
  const hint = type === 'CPF' ? ' (a phone key is written +55, DDD, number)' : '';
  if (!canonical.ok) fail(name, `is not a valid ${type} key: ${canonical.refusal.message}, got "${key}"${hint}`);
  if (canonical.value !== key) fail(name, `must be the ${type} key as the DICT writes it: "${canonical.value}", not "${key}"`);
  return key;
}

/** Fields 59 and 60 of every BR Code: refused by the builder's own rule, so no sale can fail on them. */
function merchant(env: Env, name: string, field: MerchantField, fallback: string): string {
  const raw = nonEmpty(env[name]) ?? fallback;
  const value = merchantField(field, raw);
  if (!value.ok) fail(name, `${value.refusal.message}, got "${raw}"`);
  return raw;
}
