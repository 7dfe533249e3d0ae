/**
 * Conformance harness for the BCB's API Pix (../shared/spec/providers/bcb-api-pix-2.9.0.yaml): the
 * file is read once, dereferenced by @apidevtools/json-schema-ref-parser and its schemas compiled by
 * ajv + ajv-formats, so what passes here is what an independent validator of the official file accepts.
 *
 *   checkApiPixRequest({ method, path, query?, headers?, body? })  → string[] (empty: valid)
 *   checkApiPixResponse({ method, path, status, body, contentType? }) → string[]
 *   checkApiPixCallback(body)                                       → string[]
 *   startValidatingProxy({ target, timeoutMs? }) → { url, violations, close() }
 *
 * Paths are relative to the API root (`/cob/{txid}`, not `/api/v2/cob/{txid}`). API_PIX_ERRATA lists
 * the few places where the file cannot be met as written and how we read them.
 */
export {
  API_PIX_CALLBACK_SCHEMA,
  type ApiPixRequest,
  type ApiPixResponse,
  checkApiPixCallback,
  checkApiPixRequest,
  checkApiPixResponse,
} from './api-pix-checks.ts';
export { API_PIX_ERRATA, API_PIX_FILE, apiPixExample, findOperation, SHARED_API_PIX_FILE } from './api-pix-document.ts';
export { startValidatingProxy, type ValidatingProxy } from './api-pix-proxy.ts';
