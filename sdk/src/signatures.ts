// Checking what the gateway sends a seller's server, over the raw body bytes as received (never a
// re-serialised object: the signature covers exactly the bytes sent):
// - postbacks (the spec): `X-Signature` = lower-case hex HMAC-SHA256 of the body, keyed by the postback secret;
// - every notification (CONTRACT §13, https://www.standardwebhooks.com): `webhook-id`,
//   `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of
//   "id.timestamp.body">`, space-separated, two during a rotation), keyed by the seller's signing secret.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.ts';

export type RawBody = string | Buffer | Uint8Array;
/** Request headers as Node gives them (`req.headers`), any plain object, or a fetch Headers. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest distance between `webhook-timestamp` and now, either way (seconds). Default 300. */
  toleranceSeconds?: number;
  /** "Now", for tests (default the system clock). */
  now?: Date;
}

export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

const bytesOf = (body: RawBody): Buffer =>
  typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);

function parseJson<T>(raw: Buffer): T {
  try {
    return JSON.parse(raw.toString('utf8')) as T;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}

/**
 * Checks a postback's `X-Signature` (the spec's rules: lower-case hex HMAC-SHA256 of the raw body,
 * keyed by the postback secret, compared in constant time) and returns the parsed body. Throws
 * WebhookVerificationError when the header is missing or malformed or the signature does not match.
 */
export function verifyPostback<T = unknown>(rawBody: RawBody, signatureHeader: string | string[] | null | undefined, secret: string): T {
  if (!secret) throw new TypeError('the postback secret is required');
  if (typeof signatureHeader !== 'string' || signatureHeader === '') throw new WebhookVerificationError('X-Signature is missing');
  const given = signatureHeader.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(given)) throw new WebhookVerificationError('X-Signature is not a hex HMAC-SHA256');
  const raw = bytesOf(rawBody);
  const expected = createHmac('sha256', secret).update(raw).digest();
  if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) throw new WebhookVerificationError('X-Signature does not match the body');
  return parseJson<T>(raw);
}

/** A header's one value, case-insensitively; undefined when absent, an error when sent more than once. */
function headerOf(headers: HeaderSource, name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
  const values = Object.entries(headers as Record<string, string | string[] | undefined>)
    .filter(([k, v]) => k.toLowerCase() === name && v !== undefined)
    .flatMap(([, v]) => v as string | string[]);
  if (values.length > 1) throw new WebhookVerificationError(`${name} was sent more than once`);
  return values[0];
}

/** The key of a Standard Webhooks secret: base64 after its `whsec_` prefix. */
function signingKey(secret: string): Buffer {
  const b64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const key = Buffer.from(b64, 'base64');
  if (key.length === 0) throw new TypeError('the signing secret is empty or not base64 (whsec_…)');
  return key;
}

/**
 * Checks a notification's Standard Webhooks headers against the seller's signing secret (`whsec_…`,
 * from GET /api/signing-secret): the timestamp within `toleranceSeconds` of now, and at least one
 * `v1,` signature equal (constant-time) to the HMAC-SHA256 of `id.timestamp.body`. Returns the
 * parsed body; throws WebhookVerificationError otherwise. Headers are found case-insensitively.
 */
export function verifyWebhook<T = unknown>(rawBody: RawBody, headers: HeaderSource, signingSecret: string, options: VerifyWebhookOptions = {}): T {
  const key = signingKey(signingSecret);
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signatures = headerOf(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('webhook-id, webhook-timestamp or webhook-signature is missing');
  if (!/^\d{1,15}$/.test(timestamp.trim())) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds');
  const sentAt = Number(timestamp.trim());
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (now - sentAt > tolerance) throw new WebhookVerificationError('webhook-timestamp is too old');
  if (sentAt - now > tolerance) throw new WebhookVerificationError('webhook-timestamp is too far in the future');

  const raw = bytesOf(rawBody);
  const expected = createHmac('sha256', key).update(`${id}.${sentAt}.`, 'utf8').update(raw).digest();
  let matched = false;
  for (const entry of signatures.trim().split(/ +/)) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const given = Buffer.from(entry.slice(comma + 1), 'base64');
    // Every entry is compared (no early exit), each in constant time.
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError('no webhook-signature matches the body');
  return parseJson<T>(raw);
}
