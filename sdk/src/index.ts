// pagar-gateway-sdk: a typed client of the gateway's HTTP API (openapi-fetch over the generated
// `paths` of its OpenAPI document), with idempotent retries, paged iterators, and the checks of
// postback and Standard Webhooks signatures.
export { type ClientOptions, DEDUPLICATED_POSTS, GatewayClient, type Id } from './client.ts';
export {
  DOCUMENTED_ERROR_TYPES,
  type ErrorType,
  type FieldError,
  GatewayError,
  GatewayNetworkError,
  GatewayTimeoutError,
  WebhookVerificationError,
} from './errors.ts';
export { type CallOptions, DEFAULT_POLICY, type Fetch, type PostOptions, type RetryPolicy } from './http.ts';
export { OperatorClient, type OperatorClientOptions } from './operator.ts';
export { DEFAULT_MAX_PAGES, type Page, type PageOptions, PaginationLimitError } from './paging.ts';
export { SellerClient, type SellerClientOptions } from './seller.ts';
export {
  type HeaderSource,
  type RawBody,
  type VerifyWebhookOptions,
  verifyPostback,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
} from './signatures.ts';
export type * from './types.ts';
