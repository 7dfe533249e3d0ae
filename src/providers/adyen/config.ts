/** CONTRACT §11.2's variables: which card rail, and how to reach Adyen and be reached by it. */
import { type Env, fail, integer, nonEmpty, oneOf } from '../../config-values.ts';

export interface AdyenConnection {
  apiKey: string;
  merchantAccount: string;
  /** The Checkout API root with its version, e.g. https://checkout-test.adyen.com/v71. */
  checkoutUrl: string;
  /** The notification HMAC key, decoded from the hex Adyen's Customer Area shows. */
  hmacKey: Buffer;
  notificationUsername: string;
  notificationPassword: string;
  /** automatic: Adyen captures what it authorises; manual: the gateway captures each authorisation. */
  capture: 'automatic' | 'manual';
  /** Longest one call to Adyen may take, connection included (a report download: its headers, and each wait for more of it). */
  timeoutMs: number;
  /** The report user's HTTP Basic credentials (ADYEN_REPORT_USERNAME / _PASSWORD); null: settlement reports are not downloaded. */
  reportCredentials: { username: string; password: string } | null;
}

/** A host on this machine: a test double of Adyen, the only place plain http is allowed. */
export const loopback_host = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

export interface CardRailConfig {
  provider: 'sandbox' | 'adyen';
  /** Null with the sandbox processor. */
  adyen: AdyenConnection | null;
}

export function loadCardRailConfig(env: Env): CardRailConfig {
  const provider = oneOf(env, 'CARD_PROVIDER', ['sandbox', 'adyen'] as const, 'sandbox');
  return { provider, adyen: provider === 'adyen' ? adyenConnection(env) : null };
}

function adyenConnection(env: Env): AdyenConnection {
  const required = (name: string) => nonEmpty(env[name]) ?? fail(name, 'is required with CARD_PROVIDER=adyen');
  const checkoutUrl = required('ADYEN_CHECKOUT_URL').replace(/\/+$/, '');
  const url = URL.canParse(checkoutUrl) ? new URL(checkoutUrl) : fail('ADYEN_CHECKOUT_URL', `must be an absolute URL, got "${checkoutUrl}"`);
  // Card data travels on this connection: TLS, except to a test double on this machine.
  const loopback = loopback_host.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) fail('ADYEN_CHECKOUT_URL', `must be an https URL, got "${checkoutUrl}"`);
  const hmacHex = required('ADYEN_HMAC_KEY');
  if (!/^([0-9a-fA-F]{2}){16,}$/.test(hmacHex)) fail('ADYEN_HMAC_KEY', 'must be the hex key from the Customer Area (at least 32 hex digits)');
  return {
    apiKey: required('ADYEN_API_KEY'),
    merchantAccount: required('ADYEN_MERCHANT_ACCOUNT'),
    checkoutUrl,
    hmacKey: Buffer.from(hmacHex, 'hex'),
    notificationUsername: required('ADYEN_NOTIFICATION_USERNAME'),
    notificationPassword: required('ADYEN_NOTIFICATION_PASSWORD'),
    capture: oneOf(env, 'ADYEN_CAPTURE', ['automatic', 'manual'] as const, 'automatic'),
    timeoutMs: integer(env, 'ADYEN_TIMEOUT_MS', 15_000, 1_000, 120_000),
    reportCredentials: reportCredentials(env),
  };
}

/** Optional: without them the gateway cannot read Adyen's settlement reports, and says so for each (CONTRACT §15). */
function reportCredentials(env: Env): AdyenConnection['reportCredentials'] {
  const username = nonEmpty(env.ADYEN_REPORT_USERNAME);
  const password = nonEmpty(env.ADYEN_REPORT_PASSWORD);
  if (username === undefined && password === undefined) return null;
  if (username === undefined) fail('ADYEN_REPORT_USERNAME', 'is required with ADYEN_REPORT_PASSWORD');
  if (password === undefined) fail('ADYEN_REPORT_PASSWORD', 'is required with ADYEN_REPORT_USERNAME');
  return { username, password };
}
