// Names for the request and response bodies of the generated `paths` (schema.ts, written by
// `npm run openapi` from the gateway's OpenAPI document): every type here is taken from it, none is
// written by hand.
import type { paths } from './schema.ts';

export type { components, operations, paths } from './schema.ts';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** Paths that have `M`. */
export type PathWith<M extends HttpMethod> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];
type Operation<P extends keyof paths, M extends HttpMethod> = paths[P] extends { [K in M]: infer O } ? O : never;

/** The JSON body an operation takes. */
export type RequestBody<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The query parameters an operation takes. */
export type QueryOf<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** The JSON body of an operation's success (200, 201 or 202). */
export type ResponseBody<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { responses: infer R }
    ? { [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer B } } ? B : never) : never }[keyof R]
    : never;
/** A list's query with `limit` also as a number (the document types it as the query string's text). */
export type WithNumericLimit<Q> = Omit<Q, 'limit'> & { limit?: number | string };
/** The element of a paged list's `data`. */
export type ItemOf<P extends keyof paths, M extends HttpMethod> = ResponseBody<P, M> extends { data: (infer I)[] } ? I : never;

// ---------- seller API ----------
export type Balance = ResponseBody<'/api/public/balance', 'get'>;
export type StatementPage = ResponseBody<'/api/public/statement', 'get'>;
export type StatementLine = ItemOf<'/api/public/statement', 'get'>;
export type StatementQuery = WithNumericLimit<QueryOf<'/api/public/statement', 'get'>>;
export type CreateCashoutBody = RequestBody<'/api/public/cashout', 'post'>;
export type Cashout = ResponseBody<'/api/public/cashout', 'post'>;
export type Webhook = ResponseBody<'/api/webhooks', 'post'>;
export type WebhookList = ResponseBody<'/api/webhooks', 'get'>;
export type CreateWebhookBody = RequestBody<'/api/webhooks', 'post'>;
export type WebhookTestResult = ResponseBody<'/api/webhooks/{id}/test', 'post'>;
export type NotificationsPage = ResponseBody<'/api/notifications', 'get'>;
export type Notification = ItemOf<'/api/notifications', 'get'>;
export type NotificationsQuery = WithNumericLimit<QueryOf<'/api/notifications', 'get'>>;
export type ResendResult = ResponseBody<'/api/notifications/{id}/resend', 'post'>;
export type CreateSaleBody = RequestBody<'/api/sales', 'post'>;
export type CreateSaleResponse = ResponseBody<'/api/sales', 'post'>;
export type Sale = CreateSaleResponse extends { sale: infer S } ? S : never;
/** A card sale's 3-D Secure (`authentication` of the request): the seller's return page, the shopper's browser and IP. */
export type SaleAuthentication = NonNullable<CreateSaleBody['authentication']>;
/** The shopper's browser as its page reads it (`browserInfo()` of `pagar-gateway-sdk/browser`). */
export type BrowserInfo = SaleAuthentication['browser'];
/** `sale.payment.card.authentication` of the answer: where the shopper's browser goes, until when. */
export type SaleCardAuthentication = NonNullable<NonNullable<Sale['payment']['card']>['authentication']>;
export type Transaction = ResponseBody<'/api/transactions/{id}', 'get'>;
export type TransactionsPage = ResponseBody<'/api/transactions', 'get'>;
export type TransactionsQuery = WithNumericLimit<QueryOf<'/api/transactions', 'get'>>;
export type CancelResult = ResponseBody<'/api/transactions/{id}/cancel', 'post'>;
export type RefundBody = RequestBody<'/api/transactions/{id}/refund', 'post'>;
export type MedDefenseBody = RequestBody<'/api/transactions/{id}/med-defense', 'post'>;
export type Refund = ResponseBody<'/api/transactions/{id}/refund', 'post'>;
export type RefundList = ResponseBody<'/api/transactions/{id}/refunds', 'get'>;
export type SigningSecret = ResponseBody<'/api/signing-secret', 'get'>;

// ---------- operator API ----------
export type SandboxPixPayBody = RequestBody<'/sandbox/pix/{txid}/pay', 'post'>;
export type SandboxBoletoPayBody = RequestBody<'/sandbox/boletos/{id}/pay', 'post'>;
export type SandboxSalePayBody = RequestBody<'/sandbox/sales/{id}/pay', 'post'>;
export type SandboxInfractionDecisionBody = RequestBody<'/sandbox/infractions/{idInfracao}/resolve', 'post'>;
export type SandboxPix = ResponseBody<'/sandbox/pix/{txid}/pay', 'post'>;
export type PixReturnList = ResponseBody<'/admin/pix/returns', 'get'>;
export type PixReturnsQuery = WithNumericLimit<QueryOf<'/admin/pix/returns', 'get'>>;
export type PanelInvite = ResponseBody<'/admin/sellers/{id}/panel-invites', 'post'>;
export type CreateSellerBody = RequestBody<'/admin/sellers', 'post'>;
export type CreatedSeller = ResponseBody<'/admin/sellers', 'post'>;
export type Seller = ResponseBody<'/admin/sellers/{id}', 'get'>;
export type UpdateSellerBody = RequestBody<'/admin/sellers/{id}', 'patch'>;
export type SellerKey = ResponseBody<'/admin/sellers/{id}/keys', 'post'>;
export type LedgerVerification = ResponseBody<'/admin/ledger/verify', 'get'>;
export type TransactionEventBody = RequestBody<'/admin/transactions/{id}/events', 'post'>;
export type Settings = ResponseBody<'/admin/settings', 'get'>;
export type UpdateSettingsBody = RequestBody<'/admin/settings', 'patch'>;
export type CashoutEventBody = RequestBody<'/admin/cashouts/{id}/events', 'post'>;
export type CashoutEventResult = ResponseBody<'/admin/cashouts/{id}/events', 'post'>;
export type ProviderEventsPage = ResponseBody<'/admin/provider-events', 'get'>;
export type ProviderEvent = ItemOf<'/admin/provider-events', 'get'>;
export type ProviderEventsQuery = WithNumericLimit<QueryOf<'/admin/provider-events', 'get'>>;
export type ProviderEventResolution = RequestBody<'/admin/provider-events/{id}/resolve', 'post'>;
export type ReconciliationDay = ResponseBody<'/admin/reconciliation', 'get'>;
export type ReconciliationAccount = ReconciliationDay['accounts'][number];
export type ReconciliationRun = RequestBody<'/admin/reconciliation/run', 'post'>;
export type ReconciliationStarted = ResponseBody<'/admin/reconciliation/run', 'post'>;
