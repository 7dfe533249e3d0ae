// The operator API (CONTRACT §7, §6, §11.1): `Authorization: Bearer <ADMIN_TOKEN>`. Methods are
// named after the operationIds of the OpenAPI document.
import { type ClientOptions, GatewayClient, type Id, pathId, queryOf } from './client.ts';
import type { CallOptions, PostOptions } from './http.ts';
import type { PageOptions } from './paging.ts';
import type {
  CashoutEventBody,
  CreateSellerBody,
  PixReturnsQuery,
  ProviderEvent,
  ProviderEventResolution,
  ProviderEventsQuery,
  ReconciliationRun,
  SandboxBoletoPayBody,
  SandboxInfractionDecisionBody,
  SandboxPixPayBody,
  SandboxSalePayBody,
  TransactionEventBody,
  UpdateSellerBody,
  UpdateSettingsBody,
} from './types.ts';

export interface OperatorClientOptions extends ClientOptions {
  /** The gateway's ADMIN_TOKEN. */
  adminToken: string;
}

export class OperatorClient extends GatewayClient {
  constructor(options: OperatorClientOptions) {
    if (!options.adminToken) throw new TypeError('adminToken is required');
    super(options, { Authorization: `Bearer ${options.adminToken}` });
  }

  // ---------- sellers ----------

  /** POST /admin/sellers `{ name, email, document? }`: 201 with the seller and its first key pair (the private key shown only here). */
  createSeller(body: CreateSellerBody, options?: PostOptions) {
    return this.send('POST', '/admin/sellers', (init) => this.raw.POST('/admin/sellers', { ...init, body }), options);
  }

  /** GET /admin/sellers/{id}: the seller's settings. */
  getSeller(id: Id, options?: CallOptions) {
    const path = { id: pathId(id) };
    return this.send('GET', '/admin/sellers/{id}', (init) => this.raw.GET('/admin/sellers/{id}', { ...init, params: { path } }), options);
  }

  /** PATCH /admin/sellers/{id}: `apiWithdrawalEnabled`, `transferAllowed`, its own fee schedule (or null). */
  updateSeller(id: Id, body: UpdateSellerBody, options?: CallOptions) {
    const path = { id: pathId(id) };
    return this.send('PATCH', '/admin/sellers/{id}', (init) => this.raw.PATCH('/admin/sellers/{id}', { ...init, params: { path }, body }), options);
  }

  /** POST /admin/sellers/{id}/keys: 201 with a new key pair. */
  createSellerKey(id: Id, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/admin/sellers/{id}/keys';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body: {} }), options);
  }

  /** DELETE /admin/sellers/{id}/keys/{publicKey}: 204; the key pair stops working at once. */
  async revokeSellerKey(id: Id, publicKey: string, options?: CallOptions): Promise<void> {
    const path = { id: pathId(id), publicKey };
    const url = '/admin/sellers/{id}/keys/{publicKey}';
    await this.send('DELETE', url, (init) => this.raw.DELETE(url, { ...init, params: { path } }), options);
  }

  /** POST /admin/sellers/{id}/panel-invites: 201 `{ url, expiresAt }`, a one-use link to the seller panel. */
  createPanelInvite(id: Id, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/admin/sellers/{id}/panel-invites';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body: {} }), options);
  }

  // ---------- platform settings and ledger ----------

  /** GET /admin/settings: the platform's default fee schedule. */
  getSettings(options?: CallOptions) {
    return this.send('GET', '/admin/settings', (init) => this.raw.GET('/admin/settings', init), options);
  }

  /** PATCH /admin/settings */
  updateSettings(body: UpdateSettingsBody, options?: CallOptions) {
    return this.send('PATCH', '/admin/settings', (init) => this.raw.PATCH('/admin/settings', { ...init, body }), options);
  }

  /** GET /admin/ledger/verify: `{ ok, sellersChecked, mismatches }`. */
  verifyLedger(options?: CallOptions) {
    return this.send('GET', '/admin/ledger/verify', (init) => this.raw.GET('/admin/ledger/verify', init), options);
  }

  // ---------- operator and processor events ----------

  /** POST /admin/transactions/{id}/events `{ event }` (CONTRACT §6): 200 with the transaction. */
  applyTransactionEvent(id: Id, body: TransactionEventBody, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/admin/transactions/{id}/events';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body }), options);
  }

  /** POST /admin/cashouts/{id}/events `{ event }`: PROCESSING, COMPLETED, REJECTED or CANCELLED. */
  applyCashoutEvent(id: Id, body: CashoutEventBody, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/admin/cashouts/{id}/events';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body }), options);
  }

  // ---------- PIX rail ----------

  /** POST /sandbox/pix/{txid}/pay `{ amount? }`: the embedded PSP receives a Pix for the sale whose externalTransactionId is `txid`. */
  sandboxPayPix(txid: string, body: SandboxPixPayBody = {}, options?: PostOptions) {
    const path = { txid };
    const url = '/sandbox/pix/{txid}/pay';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body }), options);
  }

  /** POST /sandbox/boletos/{id}/pay `{ amount? }`: the embedded PSP pays the boleto of sale `id` as a bank would. */
  sandboxPayBoleto(id: Id, body: SandboxBoletoPayBody = {}, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/sandbox/boletos/{id}/pay';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body }), options);
  }

  /** POST /sandbox/sales/{id}/pay `{ amount? }`: pays PIX or boleto sale `id` as its payer would; answers `{ id, status }`. */
  sandboxPaySale(id: Id, body: SandboxSalePayBody = {}, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/sandbox/sales/{id}/pay';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body }), options);
  }

  /** POST /sandbox/sales/{id}/infraction: the payer's bank contests paid PIX sale `id` (MED 2.0); 201 `{ idInfracao, transactionId, status }`. */
  sandboxOpenInfraction(id: Id, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/sandbox/sales/{id}/infraction';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path } }), options);
  }

  /** POST /sandbox/infractions/{idInfracao}/resolve `{ status: ACEITA | REJEITADA }`: the BCB decides; ACEITA is followed by its devolução. */
  sandboxResolveInfraction(idInfracao: string, body: SandboxInfractionDecisionBody, options?: PostOptions) {
    const path = { idInfracao };
    const url = '/sandbox/infractions/{idInfracao}/resolve';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body }), options);
  }

  /** GET /admin/pix/returns: Pix returned whole (no PENDENTE sale of that amount), newest first. */
  listPixReturns(query: PixReturnsQuery = {}, options?: CallOptions) {
    return this.send(
      'GET',
      '/admin/pix/returns',
      (init) => this.raw.GET('/admin/pix/returns', { ...init, params: { query: queryOf(query) } }),
      options,
    );
  }

  // ---------- provider events (CONTRACT §14) ----------

  /** GET /admin/provider-events: what providers told the gateway, newest first (`state`, `provider` filter it). */
  listProviderEvents(query: ProviderEventsQuery = {}, options?: CallOptions) {
    const url = '/admin/provider-events';
    return this.send('GET', url, (init) => this.raw.GET(url, { ...init, params: { query: queryOf(query) } }), options);
  }

  /** Every provider event of `query`, newest first, the pages fetched lazily. */
  iterateProviderEvents(query: Omit<ProviderEventsQuery, 'cursor'> = {}, options?: PageOptions): AsyncGenerator<ProviderEvent> {
    return this.iterate((cursor, call) => this.listProviderEvents({ ...query, ...(cursor ? { cursor } : {}) }, call), options);
  }

  /** POST /admin/provider-events/{id}/resolve `{ note }`: a needs_operator event handled (409 for any other). */
  resolveProviderEvent(id: Id, body: ProviderEventResolution, options?: PostOptions) {
    const path = { id: pathId(id) };
    const url = '/admin/provider-events/{id}/resolve';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, params: { path }, body }), options);
  }

  // ---------- reconciliation with the providers' records (CONTRACT §15) ----------

  /** GET /admin/reconciliation?date=YYYY-MM-DD: each provider account's day, matched or with its findings. */
  getReconciliation(date: string, options?: CallOptions) {
    const url = '/admin/reconciliation';
    return this.send('GET', url, (init) => this.raw.GET(url, { ...init, params: { query: { date } } }), options);
  }

  /** POST /admin/reconciliation/run `{ date, account? }`: 202 at once; read the day with getReconciliation after. */
  runReconciliation(body: ReconciliationRun, options?: PostOptions) {
    const url = '/admin/reconciliation/run';
    return this.send('POST', url, (init) => this.raw.POST(url, { ...init, body }), options);
  }
}
