/**
 * An embedded PSP speaking the subset of the BCB's API Pix the gateway uses (CONTRACT §11.1):
 * OAuth2, charges with dynamic BR Codes and signed location payloads, Pix received, devoluções,
 * webhook registration and callbacks. It runs its own HTTP server, so the real `api-pix` connector
 * talks to it over HTTP exactly as it would to a PSP; its state lives in its own schema, sandbox_psp.
 */

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerAccountRoutes } from './account-routes.ts';
import { bearerCheck, type Credentials, registerEfiAuthorizeRoute, registerTokenRoute, tokenIssuer } from './auth.ts';
import { dynamicBrCode, LOCATION_MAX, type Merchant, merchantOf } from './brcode.ts';
import { type CallbackSender, callbackSender } from './callbacks.ts';
import { settleCard } from './card-settlements.ts';
import { registerChargeRoutes } from './charge-routes.ts';
import { Charges } from './charges.ts';
import { registerCobRoutes } from './cob-routes.ts';
import { Devolucoes } from './devolucoes.ts';
import { registerInfractionRoutes } from './infraction-routes.ts';
import { Infractions } from './infractions.ts';
import { createJwsSigner } from './jws.ts';
import { JWKS_PATH, LOCATION_PATH, registerLocationRoutes } from './location.ts';
import { migrate } from './migrate.ts';
import { receivePix } from './payments.ts';
import { registerPixRoutes } from './pix-routes.ts';
import { pixById } from './pix-store.ts';
import { installProblemHandlers } from './problems.ts';
import { REPORTS_PATH, registerReportRoutes } from './report-routes.ts';
import { registerSendRoutes } from './send-routes.ts';
import { Sends } from './sends.ts';
import type { PspClock, PspLogger, SandboxPsp, SandboxPspOptions } from './types.ts';
import { registerWebhookRoutes } from './webhooks.ts';
import { newLocationToken } from './wire.ts';

export type { CardSettlementInput, CardSettlementType } from './card-settlements.ts';
export type * from './types.ts';

const silent: PspLogger = { info() {}, warn() {}, error() {} };
const WILDCARDS = new Set(['0.0.0.0', '::', '']);
const DEFAULT_RECEIVER_CNPJ = '11222333000181';

/** The bound address as a URL host: a wildcard is reached on loopback, IPv6 goes in brackets. */
function urlHost(host: string): string {
  if (WILDCARDS.has(host)) return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Locations default to `localhost:PORT`: the file types a location as `format: uri`, and a bare
 * `127.0.0.1:PORT/…` is no URI at all (a scheme cannot start with a digit) while `localhost:PORT/…`
 * reads as one, as the payer's app reads it after adding `https://`.
 */
function defaultPublicHost(host: string, port: number): string {
  const loopback = WILDCARDS.has(host) || host === 'localhost' || host === '::1' || /^127\./.test(host);
  return `${loopback ? 'localhost' : urlHost(host)}:${port}`;
}

function checkOptions(o: SandboxPspOptions): void {
  if (typeof o.receiverKey !== 'string' || o.receiverKey.length === 0 || o.receiverKey.length > 77) {
    throw new Error('sandbox PSP: receiverKey must be a Pix key of 1–77 characters');
  }
  if (o.devolucaoDelayMs !== undefined && !(Number.isFinite(o.devolucaoDelayMs) && o.devolucaoDelayMs >= 0)) {
    throw new Error('sandbox PSP: devolucaoDelayMs must be a non-negative number');
  }
}

/** A location is `host:port/qr/v2/<32 hex>` and must fit the BR Code's 77 characters. */
function checkPublicHost(publicHost: string): void {
  const room = LOCATION_MAX - LOCATION_PATH.length - 32;
  if (publicHost.length === 0 || publicHost.length > room || /[/\s]/.test(publicHost)) {
    throw new Error(`sandbox PSP: publicHost must be host[:port], without scheme or path, of at most ${room} characters: ${publicHost}`);
  }
}

interface AppParts {
  o: SandboxPspOptions;
  clock: PspClock;
  logger: PspLogger;
  merchant: Merchant;
  credentials: Credentials;
  devolucoes: Devolucoes;
  sends: Sends;
  charges: Charges;
  infractions: Infractions;
  stopping: AbortSignal;
  publicHost(): string;
  baseUrl(): string;
  jwksUrl(): string;
}

/** The HTTP side: the token endpoint and the location payloads open, the API Pix under /api/v2 behind bearer tokens. */
async function buildApp(p: AppParts): Promise<FastifyInstance> {
  const { o, clock } = p;
  // Its locations are read by payers' banks when its public host is public: slow or stalled clients
  // are cut as the gateway's are (Fastify's defaults switch Node's request timeout off).
  const requestTimeout = o.requestTimeoutMs ?? 30_000;
  const app: FastifyInstance = Fastify({
    logger: false,
    bodyLimit: 64 * 1024,
    requestTimeout,
    connectionTimeout: 120_000,
    keepAliveTimeout: 10_000,
    http: { requestTimeout, headersTimeout: Math.min(10_000, requestTimeout), connectionsCheckingInterval: 1_000 },
  });
  installProblemHandlers(app, p.logger);
  const issuer = tokenIssuer(p.credentials, clock);
  registerTokenRoute(app, p.credentials, issuer);
  registerEfiAuthorizeRoute(app, p.credentials, issuer);
  registerChargeRoutes(app, { charges: p.charges, base: p.baseUrl, bearer: bearerCheck(issuer) });
  registerLocationRoutes(app, { db: o.db, clock, signer: createJwsSigner(), jwksUrl: p.jwksUrl });
  registerReportRoutes(app, { db: o.db, credentials: p.credentials });
  const webhooks = {
    db: o.db,
    receiverKey: o.receiverKey,
    receiverCnpj: o.receiverCnpj ?? DEFAULT_RECEIVER_CNPJ,
    allowHttp: o.allowHttpWebhooks ?? false,
    now: () => clock.now(),
  };
  // Efí's own endpoints beside its API Pix: sending Pix, the account's records, MED infractions, the paying key's webhook at /v2/webhook.
  await app.register(async (efi) => {
    efi.addHook('onRequest', bearerCheck(issuer));
    registerSendRoutes(efi, { db: o.db, sends: p.sends, payerKey: o.receiverKey, stopping: p.stopping });
    registerAccountRoutes(efi, { db: o.db, sends: p.sends, payerKey: o.receiverKey });
    registerInfractionRoutes(efi, p.infractions);
    await efi.register(async (v2) => registerWebhookRoutes(v2, webhooks), { prefix: '/v2' });
  });
  await app.register(
    async (api) => {
      api.addHook('onRequest', bearerCheck(issuer));
      registerCobRoutes(api, { db: o.db, clock, receiverKey: o.receiverKey, merchant: p.merchant, publicHost: p.publicHost });
      registerPixRoutes(api, o.db, p.devolucoes);
      registerWebhookRoutes(api, webhooks);
    },
    { prefix: '/api/v2' },
  );
  return app;
}

/** What works behind the routes: callbacks, devoluções settling, Pix sending, boleto charges, MED infractions. */
function engines(o: SandboxPspOptions, clock: PspClock, logger: PspLogger, merchant: Merchant, publicHost: () => string) {
  const callbacks = callbackSender({
    db: o.db,
    logger,
    timeoutMs: o.callbackTimeoutMs ?? 5_000,
    retryDelaysMs: o.callbackRetryDelaysMs ?? [250, 1_000, 3_000],
  });
  const devolucoes = new Devolucoes({ db: o.db, clock, delayMs: o.devolucaoDelayMs ?? 300, callbacks, logger });
  const sends = new Sends({
    db: o.db,
    clock,
    delayMs: o.sendDelayMs ?? 600,
    payerFloatCents: o.payerFloatCents ?? 100_000_000_000,
    callbacks,
    logger,
  });
  const charges = new Charges({
    db: o.db,
    clock,
    bankCode: o.boletoBankCode ?? '364',
    callbacks,
    logger,
    pixCharge(_txid) {
      const locToken = newLocationToken();
      const location = `${publicHost()}${LOCATION_PATH}${locToken}`;
      return { location, locToken, pixCopiaECola: dynamicBrCode(location, merchant), chave: o.receiverKey };
    },
  });
  const receiver = { nome: o.merchantName, documento: o.receiverCnpj ?? DEFAULT_RECEIVER_CNPJ };
  const infractions = new Infractions({ db: o.db, clock, devolucoes, receiver });
  return { callbacks, devolucoes, sends, charges, infractions };
}

/** The test knobs of devoluções. */
function devolucaoKnobs(devolucoes: Devolucoes): Pick<SandboxPsp, 'failNextDevolucoes' | 'openMedDevolucao' | 'settleDevolucoes' | 'devolveByHand'> {
  return {
    failNextDevolucoes: (n) => devolucoes.failNext(n),
    openMedDevolucao: (e2eid, input) => devolucoes.openMed(e2eid, input.amountCents, input.natureza),
    settleDevolucoes: () => devolucoes.settleAll(),
    devolveByHand: (e2eid, amountCents) => devolucoes.byHand(e2eid, amountCents),
  };
}

/** The test knobs of Pix sending. */
function sendKnobs(sends: Sends): Pick<SandboxPsp, 'failNextSends' | 'loseNextSendAnswers' | 'rejectNextSends' | 'settleSends' | 'returnSent'> {
  return {
    failNextSends: (n, failure) => sends.failNext(n, failure),
    loseNextSendAnswers: (n, how) => sends.loseNextAnswers(n, how),
    rejectNextSends: (n) => sends.rejectNext(n),
    settleSends: () => sends.settleAll(),
    returnSent: async (idEnvio, amountCents) => {
      await sends.returnSent(idEnvio, amountCents);
    },
  };
}

/** A payer's bank sending a Pix; a boleto híbrido's pays the boleto, told by the charge's notification (as Efí does), not the key's callback. */
function payerBank(o: SandboxPspOptions, clock: PspClock, callbacks: CallbackSender, charges: Charges): SandboxPsp['pay'] {
  return async (txid, amountCents, options = {}) => {
    const e2eid = await receivePix(o.db, clock, o.receiverKey, txid, amountCents, options);
    const pix = (await pixById(o.db, e2eid))!;
    const boleto = await charges.ofPixTxid(txid);
    if (boleto && amountCents === boleto.total_cents && boleto.status !== 'paid' && boleto.status !== 'settled')
      await charges.pay(boleto.charge_id, amountCents, { via: 'pix' });
    else await callbacks.notify(e2eid);
    return pix;
  };
}

export async function startSandboxPsp(o: SandboxPspOptions): Promise<SandboxPsp> {
  checkOptions(o);
  await migrate(o.db);
  const merchant = merchantOf(o.merchantName, o.merchantCity);
  const clock = o.clock ?? { now: () => new Date() };
  const logger = o.logger ?? silent;
  const credentials = {
    clientId: o.clientId ?? `sandbox-${randomBytes(6).toString('hex')}`,
    clientSecret: o.clientSecret ?? randomBytes(24).toString('base64url'),
  };
  let publicHost = '';
  let base = '';
  const engine = engines(o, clock, logger, merchant, () => publicHost);
  const { callbacks, devolucoes, sends, charges, infractions } = engine;
  const stopping = new AbortController();
  const jwksUrl = () => `http://${publicHost}${JWKS_PATH}`;

  const parts = { o, clock, logger, merchant, credentials, ...engine, stopping: stopping.signal, jwksUrl, baseUrl: () => base };
  const app = await buildApp({ ...parts, publicHost: () => publicHost });

  const host = o.host ?? '127.0.0.1';
  await app.listen({ host, port: o.port ?? 0 });
  const port = (app.server.address() as AddressInfo).port;
  publicHost = o.publicHost ?? defaultPublicHost(host, port);
  base = `http://${urlHost(host)}:${port}`;
  // Requests under way finish first; then callbacks still trying are cut short, so a settlement
  // waiting on one ends at once. Devoluções left pending are settled by the next process.
  const close = async () => {
    devolucoes.stop();
    sends.stop();
    stopping.abort();
    await app.close();
    await callbacks.close();
    await devolucoes.drain();
    await sends.drain();
  };
  try {
    checkPublicHost(publicHost);
    await devolucoes.resume();
    await sends.resume();
  } catch (error) {
    await close();
    throw error;
  }

  return {
    apiUrl: `${base}/api/v2`,
    efiUrl: base,
    tokenUrl: `${base}/oauth/token`,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    jwksUrl: jwksUrl(),
    reportsUrl: `${base}${REPORTS_PATH}`,
    settleCard: (input) => settleCard(o.db, clock, input),
    pay: payerBank(o, clock, callbacks, charges),
    refuseNextCharges: (n) => charges.refuseNext(n),
    payBoleto: (chargeId, amountCents) => charges.pay(chargeId, amountCents).then(() => {}),
    payBoletoSilently: (chargeId, amountCents) => charges.pay(chargeId, amountCents, { silent: true }).then(() => {}),
    sendTwiceNext: () => sends.twiceNext(),
    setCallbacks(mode) {
      if (mode !== 'deliver' && mode !== 'drop') throw new RangeError(`setCallbacks: ${mode}`);
      callbacks.mode = mode;
    },
    ...devolucaoKnobs(devolucoes),
    ...sendKnobs(sends),
    ...infractions.levers(),
    close,
  };
}

/** For the package's tests and the gateway's conformance tests: the codes it makes. */
export { dynamicBrCode } from './brcode.ts';
export { insertCobInGroup, type NewCob } from './cob-store.ts';
export { boletoCodes, crc16, printedLine } from './encoders.ts';
