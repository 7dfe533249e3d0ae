/**
 * The HMAC Adyen puts in every standard notification item (`additionalData.hmacSignature`): base64
 * HMAC-SHA256, keyed by the hex-decoded key, of the item's eight fields joined by ':' (a missing one
 * as an empty string), as Adyen documents under "Verify HMAC signatures".
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SignedFields {
  pspReference?: string;
  originalReference?: string;
  merchantAccountCode?: string;
  merchantReference?: string;
  amount?: { value?: number; currency?: string };
  eventCode?: string;
  success?: string;
}

export function signingString(item: SignedFields): string {
  return [
    item.pspReference,
    item.originalReference,
    item.merchantAccountCode,
    item.merchantReference,
    item.amount?.value,
    item.amount?.currency,
    item.eventCode,
    item.success,
  ]
    .map((v) => (v === undefined || v === null ? '' : String(v)))
    .join(':');
}

export function notificationHmac(item: SignedFields, key: Buffer): string {
  return createHmac('sha256', key).update(signingString(item), 'utf8').digest('base64');
}

/** Constant-time: a wrong signature takes as long to refuse whatever its first differing byte. */
export function validNotificationHmac(item: SignedFields, signature: unknown, key: Buffer): boolean {
  if (typeof signature !== 'string') return false;
  const expected = Buffer.from(notificationHmac(item, key), 'base64');
  const given = Buffer.from(signature, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
