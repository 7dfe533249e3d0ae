/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, CONTRACT §13): each notification is
 * signed over "id.timestamp.body" with every live secret of its seller, so a receiver holding either
 * the old or the new secret during a rotation accepts it.
 */
import { createHmac, randomBytes } from 'node:crypto';

const prefix = 'whsec_';
// The specification asks for 24 to 64 bytes; 32 is what its reference implementations generate.
const secret_bytes = 32;

export function newSigningSecret(): string {
  return prefix + randomBytes(secret_bytes).toString('base64');
}

/** The `webhook-signature` value: one `v1,<base64>` per secret, space-separated. */
export function webhookSignature(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(prefix.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64')}`;
    })
    .join(' ');
}

/** The three headers of one attempt. `webhook-timestamp` is the attempt's, so a replay is detectable. */
export function standardWebhookHeaders(secrets: readonly string[], id: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature(secrets, id, timestamp, body),
  };
}
