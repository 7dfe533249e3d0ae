// The seller API (CONTRACT §2–§4, §8, §9, §13): every request carries X-Api-Public-Key and
// X-Api-Private-Key. Methods are named after the operationIds of the OpenAPI document.
import { type ClientOptions, GatewayClient, type Id, pathId, queryOf } from './client.ts';
import type { CallOptions, PostOptions } from './http.ts';
import type { PageOptions } from './paging.ts';
import type {
  CreateCashoutBody,
  CreateSaleBody,
  CreateWebhookBody,
  MedDefenseBody,
  Notification,
  NotificationsQuery,
  RefundBody,
  StatementLine,
  StatementQuery,
  Transaction,
  TransactionsQuery,
} from './types.ts';

export interface SellerClientOptions extends ClientOptions {
  /** `pk_…` */
  publicKey: string;
  /** `sk_…` (shown once, when the key pair was issued) */
  privateKey: string;
}

export class SellerClient extends GatewayClient {
  constructor(options: SellerClientOptions) {
    if (!options.publicKey || !options.privateKey) throw new TypeError('publicKey and privateKey are required');
    super(options, { 'X-Api-Public-Key': options.publicKey, 'X-Api-Private-Key': options.privateKey });
  }

  // ---------- balance, statement, cashouts ----------

  /** GET /api/public/balance: `{ available, blocked, total }` in cents. */
  getBalance(options?: CallOptions) {
    return this.send('GET', '/api/public/balance', (init) => this.raw.GET('/api/public/balance', init), options);
  }

  /** GET /api/public/statement: one page of the journal lines, newest first. */
  listStatement(query: StatementQuery = {}, options?: CallOptions) {
    return this.send(
      'GET',
      '/api/public/statement',
      (init) => this.raw.GET('/api/public/statement', { ...init, params: { query: queryOf(query) } }),
      options,
    );
  }

  /** Every statement line, newest first, following `nextCursor`. */
  iterateStatement(query: Omit<StatementQuery, 'cursor'> = {}, options?: PageOptions): AsyncGenerator<StatementLine> {
    return this.iterate((cursor, call) => this.listStatement({ ...query, ...(cursor ? { cursor } : {}) }, call), options);
  }

  /** POST /api/public/cashout (amount in reais): 201 with the Cashout. Idempotent by its Idempotency-Key. */
  createCashout(body: CreateCashoutBody, options?: PostOptions) {
    return this.send('POST', '/api/public/cashout', (init) => this.raw.POST('/api/public/cashout', { ...init, body }), options);
  }

  /** GET /api/public/cashout/{id} */
  getCashout(id: Id, options?: CallOptions) {
    const path = { id: pathId(id) };
    return this.send('GET', '/api/public/cashout/{id}', (init) => this.raw.GET('/api/public/cashout/{id}', { ...init, params: { path } }), options);
  }

  // ---------- sales and transactions ----------

  /** POST /api/sales: 201 `{ message, sale }`. Idempotent by its Idempotency-Key. */
  createSale(body: CreateSaleBody, options?: PostOptions) {
    return this.send('POST', '/api/sales', (init) => this.raw.POST('/api/sales', { ...init, body }), options);
  }

  /** GET /api/transactions/{id}: the Transaction (money in cents). */
  getTransaction(id: Id, options?: CallOptions) {
    const path = { id: pathId(id) };
    return this.send('GET', '/api/transactions/{id}', (init) => this.raw.GET('/api/transactions/{id}', { ...init, params: { path } }), options);
  }

  /** GET /api/transactions: one page, newest first (filters `status`, `paymentMethod`; `limit`, `cursor`). */
  listTransactions(query: TransactionsQuery = {}, options?: CallOptions) {
    return this.send(
      'GET',
      '/api/transactions',
      (init) => this.raw.GET('/api/transactions', { ...init, params: { query: queryOf(query) } }),
      options,
    );
  }

  /** Every transaction matching `query`, newest first, following `nextCursor`. */
  iterateTransactions(query: Omit<TransactionsQuery, 'cursor'> = {}, options?: PageOptions): AsyncGenerator<Transaction> {
    return this.iterate((cursor, call) => this.listTransactions({ ...query, ...(cursor ? { cursor } : {}) }, call), options);
  }

  /** POST /api/transactions/{id}/cancel: PENDENTE or FALHA → CANCELADO; else 409 INVALID_TRANSITION. */
  cancelTransaction(id: Id, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/api/transactions/{id}/cancel';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body: {} }), options);
  }

  /** POST /api/transactions/{id}/refund `{ amount? }` (cents; default all that is left): 201 with the Refund. Idempotent by its Idempotency-Key. */
  refundTransaction(id: Id, body: RefundBody = {}, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/api/transactions/{id}/refund';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body }), options);
  }

  /**
   * POST /api/transactions/{id}/med-defense `{ justification }` (10 to 2,000 characters): contests an open MED at the PSP;
   * 202 with the transaction, its `med.defense` SENT, SENDING or REFUSED (with the PSP's reason). Idempotent by its Idempotency-Key.
   */
  defendMed(id: Id, body: MedDefenseBody, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/api/transactions/{id}/med-defense';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body }), options);
  }

  /** GET /api/transactions/{id}/refunds: `{ data }`, oldest first. */
  listRefunds(id: Id, options?: CallOptions) {
    const path = { id: pathId(id) };
    const url = '/api/transactions/{id}/refunds';
    return this.send('GET', url, (init) => this.raw.GET(url, { ...init, params: { path } }), options);
  }

  // ---------- webhooks and notifications ----------

  /** GET /api/webhooks */
  listWebhooks(options?: CallOptions) {
    return this.send('GET', '/api/webhooks', (init) => this.raw.GET('/api/webhooks', init), options);
  }

  /** POST /api/webhooks `{ url, types }`: 201 with the webhook. */
  createWebhook(body: CreateWebhookBody, options?: PostOptions) {
    return this.send('POST', '/api/webhooks', (init) => this.raw.POST('/api/webhooks', { ...init, body }), options);
  }

  /** DELETE /api/webhooks/{id}: 204. */
  async deleteWebhook(id: Id, options?: CallOptions): Promise<void> {
    const path = { id: pathId(id) };
    await this.send('DELETE', '/api/webhooks/{id}', (init) => this.raw.DELETE('/api/webhooks/{id}', { ...init, params: { path } }), options);
  }

  /** POST /api/webhooks/{id}/test: 202; one test notification (header `X-Test-Event: true`) to that webhook. */
  testWebhook(id: Id, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/api/webhooks/{id}/test';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body: {} }), options);
  }

  /** GET /api/notifications: one page of the delivery log, newest first. */
  listNotifications(query: NotificationsQuery = {}, options?: CallOptions) {
    return this.send(
      'GET',
      '/api/notifications',
      (init) => this.raw.GET('/api/notifications', { ...init, params: { query: queryOf(query) } }),
      options,
    );
  }

  /** Every notification, newest first, following `nextCursor`. */
  iterateNotifications(query: Omit<NotificationsQuery, 'cursor'> = {}, options?: PageOptions): AsyncGenerator<Notification> {
    return this.iterate((cursor, call) => this.listNotifications({ ...query, ...(cursor ? { cursor } : {}) }, call), options);
  }

  /** POST /api/notifications/{id}/resend: 202; one more attempt of that notification now. */
  resendNotification(id: Id, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/api/notifications/{id}/resend';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body: {} }), options);
  }

  // ---------- Standard Webhooks signing secret (CONTRACT §13) ----------

  /** GET /api/signing-secret: `{ secret: "whsec_…", createdAt, previousSecretExpiresAt }`. */
  getSigningSecret(options?: CallOptions) {
    return this.send('GET', '/api/signing-secret', (init) => this.raw.GET('/api/signing-secret', init), options);
  }

  /** POST /api/signing-secret/rotate: a new secret; the old one keeps signing for 24 h too. */
  rotateSigningSecret(options?: PostOptions) {
    const url = '/api/signing-secret/rotate';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, body: {} }), options);
  }
}
