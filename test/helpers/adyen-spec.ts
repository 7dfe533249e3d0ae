/**
 * Conformance harness for Adyen (../shared/spec/providers/adyen-checkout-v71.json and
 * adyen-webhooks-v1.json, both OpenAPI 3.1.0): the files are read once, dereferenced by
 * @apidevtools/json-schema-ref-parser and their schemas compiled by ajv (draft 2020-12) + ajv-formats,
 * so what passes here is what an independent validator of the official files accepts.
 *
 *   checkAdyenRequest({ method, path, headers?, body? })          → string[] (empty: valid)
 *   checkAdyenResponse({ method, path, status, body?, contentType? }) → string[]
 *   checkAdyenNotification(body)                                   → string[]
 *   checkAdyenWebhook(eventCode, body)                             → string[] (the whole body, one event)
 *   adyenExample(name), adyenExamples(method, path, status?), adyenNotificationExample(eventCode)
 *   startAdyenValidatingProxy({ target, timeoutMs? }) → { url, violations, close() }
 *
 * Paths are relative to the v71 root (`/payments/{psp}/refunds`, not `/v71/payments/…`). ADYEN_ERRATA
 * lists where the files' own examples fail their own schemas.
 */

import { adyenCheckoutDocument, adyenWebhooksDocument, checkAdyenRequest, checkAdyenResponse, findAdyenOperation } from './adyen-checks.ts';
import { type ExchangeChecker, startValidatingProxy, type ValidatingProxy } from './api-pix-proxy.ts';

export {
  ADYEN_CHECKOUT_FILE,
  ADYEN_ERRATA,
  ADYEN_FAULTY_EXAMPLES,
  ADYEN_WEBHOOKS_FILE,
  type AdyenRequest,
  type AdyenResponse,
  checkAdyenNotification,
  checkAdyenRequest,
  checkAdyenResponse,
  checkAdyenWebhook,
  findAdyenOperation,
  notificationSchema,
  SHARED_ADYEN_CHECKOUT_FILE,
  SHARED_ADYEN_WEBHOOKS_FILE,
} from './adyen-checks.ts';
export type { ValidatingProxy } from './api-pix-proxy.ts';

/** A copy of one of the files' own examples (components.examples), by name: `post-payments-card-direct`, `post-AUTHORISATION-authorisation`, … */
export function adyenExample(name: string): unknown {
  const example = adyenCheckoutDocument.components.examples?.[name] ?? adyenWebhooksDocument.components.examples?.[name];
  if (!example) throw new Error(`neither Adyen file has an example ${name}`);
  return structuredClone(example.value);
}

/**
 * Copies of the examples the Checkout file gives for one operation, by their names there (`card-direct`,
 * `refund`, …): of the request body, or of the answer with `status`.
 */
export function adyenExamples(method: string, path: string, status?: number): Record<string, unknown> {
  const found = findAdyenOperation(method, path);
  if (typeof found === 'string') throw new Error(found);
  const content = status === undefined ? found.operation.requestBody?.content : found.operation.responses[String(status)]?.content;
  const examples = content?.['application/json']?.examples ?? {};
  return Object.fromEntries(Object.entries(examples).map(([name, e]) => [name, structuredClone(e.value)]));
}

/** A copy of the webhooks file's (first) example notification for an event code: `AUTHORISATION`, `REFUND`, … */
export function adyenNotificationExample(eventCode: string): Record<string, unknown> {
  const examples = adyenWebhooksDocument.webhooks?.[`/${eventCode}`]?.post?.requestBody?.content?.['application/json']?.examples ?? {};
  const example = Object.values(examples)[0];
  if (!example) throw new Error(`the Adyen webhooks file has no example for ${eventCode}`);
  return structuredClone(example.value) as Record<string, unknown>;
}

/** Checks every exchange against the Checkout file. */
export const adyenChecker: ExchangeChecker = { request: checkAdyenRequest, response: checkAdyenResponse };

/**
 * The validating proxy of api-pix-proxy.ts checking Adyen Checkout exchanges: `target` is an http base
 * URL standing for the v71 root (`http://127.0.0.1:PORT/v71`), and `${url}/payments` reaches `${target}/payments`.
 */
export function startAdyenValidatingProxy(options: { target: string; timeoutMs?: number }): Promise<ValidatingProxy> {
  return startValidatingProxy({ ...options, checker: adyenChecker });
}
