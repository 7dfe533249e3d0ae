/**
 * A test double of Adyen: the Checkout API v71 operations the gateway uses (POST /payments and the
 * /payments/{psp}/captures, refunds, cancels and reversals modifications) and Adyen's sender of
 * standard notifications, shaped after the official files (spec/providers/adyen-checkout-v71.json,
 * adyen-webhooks-v1.json; test/unit/adyen-double.test.ts checks what it answers and sends against them).
 *
 * - Every call needs X-API-Key (else 401 ServiceError); merchantAccount must be ours (else 403, 901).
 * - Idempotency-Key: the same key with the same path and body replays the first answer (and echoes the
 *   key, as Adyen does); the same key with another request is refused (422, 704). 5xx are not kept.
 * - Card outcome by number: 4000000000000002 Refused, 4000000000000119 Error, any other valid one
 *   Authorised. additionalData.manualCapture "true" leaves the payment to capture; otherwise Adyen's
 *   default, automatic capture of the whole amount, applies.
 * - Modifications answer 201 `status: "received"`, as Adyen does; what the double can already tell is
 *   wrong (unknown psp, capturing or refunding more than is left, cancelling what was captured) is a 422.
 * - failNext(op, 'hang' | 'drop' | status): the next calls of op are recorded but not processed.
 * - Card data is only in `requests` (the raw calls); nothing else keeps or logs it.
 * - 3-D Secure (the redirect flow, nativeThreeDS "disabled"): a /payments request that carries
 *   `browserInfo` for a card whose issuer asks for authentication (ADYEN_3DS_GET_CARD,
 *   ADYEN_3DS_POST_CARD), unless `authenticationData.attemptAuthentication` is "never", answers
 *   `resultCode: "RedirectShopper"` with a CheckoutRedirectAction (a GET to the issuer for the first, a
 *   POST with `data` for the second); any other card, or a request without browserInfo, is answered
 *   as before (the card has no 3-D Secure: with "always" Adyen then authorises without it).
 *   The shopper's answer at the issuer is the test's: `issuerReturn(psp, 'authenticated' | 'refused' |
 *   'error')` is the `redirectResult` the issuer sends the shopper back with, and POST /payments/details
 *   `{ details: { redirectResult } }` answers Authorised / Refused / Error with the pspReference (a
 *   redirectResult is good for one request; its Idempotency-Key replays the answer, as for /payments).
 * - Reports: `publishReport(file, csv)` serves a report at GET /reports/download/MerchantAccount/{account}/{file}
 *   (Adyen's download path), behind HTTP Basic with the report user's credentials (else 401), and
 *   `reportNotification(file)` is the REPORT_AVAILABLE item that names it. `settlementCsv(account, rows)`
 *   writes a Settlement details report of the lines a test gives, for `publishReport`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export type AdyenOperation = 'payments' | 'details' | 'captures' | 'refunds' | 'cancels' | 'reversals';
/** What the shopper did at its issuer (3-D Secure). */
export type IssuerOutcome = 'authenticated' | 'refused' | 'error';
export type AdyenFault = 'hang' | 'drop' | number;

export interface AdyenCall {
  method: string;
  /** Relative to the v71 root: `/payments`, `/payments/{psp}/refunds`. */
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body (the raw text when it is not JSON; undefined when empty). */
  body: unknown;
  /** What the double answered; undefined while unanswered and for 'hang' / 'drop'. */
  answer?: { status: number; body: unknown };
}

export interface AdyenPayment {
  reference: string;
  amount: number;
  currency: string;
  /** RedirectShopper: waiting for the shopper's 3-D Secure (POST /payments/details decides). */
  status: 'Authorised' | 'Refused' | 'Error' | 'Cancelled' | 'RedirectShopper';
  captured: boolean;
  /** Minor units captured so far (the whole amount at once under automatic capture). */
  capturedAmount: number;
  /** Minor units refunded so far. */
  refundedAmount: number;
}

export interface NotificationItemInput {
  eventCode: string;
  success: boolean;
  pspReference: string;
  originalReference?: string;
  merchantReference: string;
  amount: { value: number; currency?: string /* default BRL */ };
  reason?: string;
  additionalData?: Record<string, string>;
}

export interface AdyenDouble {
  /** The v71 root, e.g. http://127.0.0.1:PORT/v71: POST `${url}/payments`. */
  url: string;
  apiKey: string;
  merchantAccount: string;
  hmacKeyHex: string;
  username: string;
  password: string;
  /** Every call received, in order, path relative to /v71. */
  requests: AdyenCall[];
  payments: Map<string, AdyenPayment>;
  /** The report user's credentials the report downloads must carry (mutable: a test changes them). */
  reportUsername: string;
  reportPassword: string;
  /** Serves `csv` as the report `file`; its download URL. */
  publishReport(file: string, csv: string): string;
  /** The REPORT_AVAILABLE item Adyen sends for a report: the file name as pspReference, the URL (by default the double's) as reason. */
  reportNotification(file: string, url?: string): NotificationItemInput;
  /**
   * The `redirectResult` the issuer sends the shopper back with, for a payment waiting for its
   * 3-D Secure (RedirectShopper): /payments/details answers by `outcome`. Each call gives a new one.
   */
  issuerReturn(psp: string, outcome: IssuerOutcome): string;
  /** Answer the next `count` (default 1) calls of `op` with a failure: never ('hang'), a destroyed socket ('drop'), or that HTTP status. */
  failNext(op: AdyenOperation, how: AdyenFault, count?: number): void;
  /** Signs one notification item, POSTs it wrapped to `target` with HTTP Basic, and returns what the target answered. */
  notify(
    target: string,
    item: NotificationItemInput,
    options?: { username?: string; password?: string; tamperHmac?: boolean },
  ): Promise<{ status: number; body: string }>;
  /** The signed notification body, unsent. */
  notificationBody(item: NotificationItemInput, options?: { tamperHmac?: boolean }): object;
  close(): Promise<void>;
}

export interface AdyenDoubleOptions {
  apiKey?: string;
  merchantAccount?: string;
  hmacKeyHex?: string;
  username?: string;
  password?: string;
  reportUsername?: string;
  reportPassword?: string;
}

/** A line of a Settlement details report, amounts in integer cents. */
export interface SettlementRow {
  type: 'Settled' | 'Refunded' | 'Chargeback' | 'SecondChargeback' | 'ChargebackReversed' | 'Fee' | 'MerchantPayout';
  /** Its Creation Date, written as São Paulo wall time with TimeZone BRT. */
  at: Date;
  pspReference?: string;
  merchantReference?: string;
  modificationReference: string;
  modificationMerchantReference?: string;
  /** + Gross Credit (to the merchant), − Gross Debit; none on a Fee or MerchantPayout line. */
  gross?: number;
  commission?: number;
  markup?: number;
  /** + Net Credit, − Net Debit; by default the gross less the line's costs. */
  net?: number;
  batch?: number;
}

// biome-ignore format: Adyen's standard columns
const SETTLEMENT_HEADER = 'Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,Creation Date,TimeZone,Type,Modification Reference,Gross Currency,Gross Debit (GC),Gross Credit (GC),Exchange Rate,Net Currency,Net Debit (NC),Net Credit (NC),Commission (NC),Markup (NC),Scheme Fees (NC),Interchange (NC),Payment Method Variant,Modification Merchant Reference,Batch Number';

const decimal = (cents: number | undefined) =>
  cents === undefined || cents === 0 ? '' : `${Math.trunc(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;
const brt = (at: Date) => new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');

/** The CSV of a Settlement details report of `merchantAccount` with these lines, as Adyen writes it. */
export function settlementCsv(merchantAccount: string, rows: SettlementRow[]): string {
  const line = (r: SettlementRow) => {
    const gross = r.gross ?? 0;
    const net = r.net ?? gross - (r.commission ?? 0) - (r.markup ?? 0);
    const card = r.gross === undefined ? '' : 'visa';
    return [
      ...['PagarCo', merchantAccount, r.pspReference ?? '', r.merchantReference ?? '', card, brt(r.at), 'BRT', r.type, r.modificationReference],
      ...[r.gross === undefined ? '' : 'BRL', decimal(Math.min(gross, 0)), decimal(Math.max(gross, 0)), '1', 'BRL'],
      ...[decimal(Math.min(net, 0)), decimal(Math.max(net, 0)), decimal(r.commission), decimal(r.markup), '', ''],
      ...[card === '' ? '' : 'visaclassic', r.modificationMerchantReference ?? '', String(r.batch ?? 1)],
    ].join(',');
  };
  return [SETTLEMENT_HEADER, ...rows.map(line)].join('\n');
}

/** Card numbers with a fixed outcome; any other valid number is authorised. */
export const ADYEN_REFUSED_CARD = '4000000000000002';
export const ADYEN_ERROR_CARD = '4000000000000119';
/** Cards whose issuer asks for 3-D Secure (Adyen's own 3DS2 test numbers): a GET redirect, and a POST one. */
export const ADYEN_3DS_GET_CARD = '4212345678901237';
export const ADYEN_3DS_POST_CARD = '5212345678901234';

/** The event codes of Adyen's standard notifications (the webhooks of adyen-webhooks-v1.json that use notificationItems). */
// biome-ignore format: one list
export const ADYEN_EVENT_CODES = [
  'AUTHORISATION', 'AUTHORISATION_ADJUSTMENT', 'AUTORESCUE', 'CANCELLATION', 'CANCEL_AUTORESCUE', 'CANCEL_OR_REFUND', 'CAPTURE',
  'CAPTURE_FAILED', 'CHARGEBACK', 'CHARGEBACK_REVERSED', 'DISPUTE_DEFENSE_PERIOD_ENDED', 'EXPIRE', 'INFORMATION_SUPPLIED',
  'ISSUER_COMMENTS', 'ISSUER_RESPONSE_TIMEFRAME_EXPIRED', 'MANUAL_REVIEW_ACCEPT', 'MANUAL_REVIEW_REJECT', 'NOTIFICATION_OF_CHARGEBACK',
  'NOTIFICATION_OF_FRAUD', 'OFFER_CLOSED', 'ORDER_CLOSED', 'ORDER_OPENED', 'PAIDOUT_REVERSED', 'PAYOUT_DECLINE', 'PAYOUT_EXPIRE',
  'PAYOUT_THIRDPARTY', 'POSTPONED_REFUND', 'PREARBITRATION_ACCEPTED', 'PREARBITRATION_DECLINED', 'PREARBITRATION_ISSUER_WITHDRAWN',
  'PREARBITRATION_LOST', 'PREARBITRATION_OPEN', 'PREARBITRATION_WON', 'RECURRING_CONTRACT', 'REFUND', 'REFUNDED_REVERSED', 'REFUND_FAILED',
  'REFUND_WITH_DATA', 'REPORT_AVAILABLE', 'REQUEST_FOR_INFORMATION', 'SCHEME_ARBITRATION', 'SCHEME_ARBITRATION_LOST',
  'SCHEME_ARBITRATION_WON', 'SECOND_CHARGEBACK', 'TECHNICAL_CANCEL', 'VOID_PENDING_REFUND',
] as const;

/**
 * Adyen's notification HMAC, written here independently of the gateway: base64 HMAC-SHA256, keyed by
 * the hex-decoded key, of pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success
 * (a missing field as an empty string).
 */
export function adyenHmac(item: object, hmacKeyHex: string): string {
  const i = item as Record<string, unknown> & { amount?: { value?: unknown; currency?: unknown } };
  const fields = [
    i.pspReference,
    i.originalReference,
    i.merchantAccountCode,
    i.merchantReference,
    i.amount?.value,
    i.amount?.currency,
    i.eventCode,
    i.success,
  ];
  const text = fields.map((v) => (v === undefined || v === null ? '' : String(v))).join(':');
  return createHmac('sha256', Buffer.from(hmacKeyHex, 'hex')).update(text, 'utf8').digest('base64');
}

type Body = Record<string, unknown>;
interface Reply {
  status: number;
  body: object;
}
interface State {
  o: Required<Omit<AdyenDoubleOptions, 'reportUsername' | 'reportPassword'>>;
  requests: AdyenCall[];
  payments: Map<string, AdyenPayment>;
  faults: Map<AdyenOperation, { how: AdyenFault; left: number }[]>;
  replies: Map<string, { fingerprint: string; reply: Reply }>;
  issued: Set<string>;
  reports: Map<string, string>;
  reportCredentials: { username: string; password: string };
  /** The double's own origin (http://127.0.0.1:PORT): its issuer pages' URLs. */
  origin: string;
  /** Payments waiting for the shopper (RedirectShopper): how they are captured once authorised. */
  waiting: Map<string, { manual: boolean }>;
  /** redirectResult values issued by issuerReturn, and whether one was already used. */
  redirectResults: Map<string, { psp: string; outcome: IssuerOutcome; used: boolean }>;
}

const ERROR_TYPES: Record<number, string> = { 401: 'security', 403: 'security', 500: 'internal' };
/** Adyen's ServiceError: `{ status, errorCode, message, errorType }`. */
function serviceError(status: number, errorCode: string, message: string): Reply {
  const errorType = ERROR_TYPES[status] ?? (status >= 500 ? 'internal' : 'validation');
  return { status, body: { status, errorCode, message, errorType } };
}
const invalid = (message: string, errorCode = '000') => serviceError(422, errorCode, message);

/** A fresh 16-character uppercase alphanumeric reference, never issued before by this double. */
function newPspReference(state: State): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  for (;;) {
    const psp = [...randomBytes(16)].map((b) => alphabet[b % alphabet.length]).join('');
    if (!state.issued.has(psp)) {
      state.issued.add(psp);
      return psp;
    }
  }
}

function luhnValid(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let d = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** The operation a call is for, and its payment's psp for modifications; null when the double has no such operation. */
function routeOf(method: string, path: string): { op: AdyenOperation; psp?: string } | null {
  if (method !== 'POST') return null;
  if (path === '/payments') return { op: 'payments' };
  if (path === '/payments/details') return { op: 'details' };
  const m = /^\/payments\/([^/]+)\/(captures|refunds|cancels|reversals)$/.exec(path);
  return m ? { op: m[2] as AdyenOperation, psp: decodeURIComponent(m[1]!) } : null;
}

/** The fields the file marks required on each request body, with Adyen's error code for each when missing. */
const REQUIRED: Record<AdyenOperation, string[]> = {
  payments: ['amount', 'merchantAccount', 'paymentMethod', 'reference', 'returnUrl'],
  // PaymentDetailsRequest has no merchantAccount: the API key says whose payment it is.
  details: ['details'],
  captures: ['amount', 'merchantAccount'],
  refunds: ['amount', 'merchantAccount'],
  cancels: ['merchantAccount'],
  reversals: ['merchantAccount'],
};
const MISSING_CODE: Record<string, string> = { amount: '100', reference: '130' };

function checkCommon(state: State, op: AdyenOperation, b: Body): Reply | null {
  const missing = REQUIRED[op].find((f) => b[f] === undefined || b[f] === null || b[f] === '');
  if (missing) return invalid(`Required field '${missing}' is not provided.`, MISSING_CODE[missing] ?? '000');
  if (op === 'details') return null;
  if (b.merchantAccount !== state.o.merchantAccount) return serviceError(403, '901', 'Invalid Merchant Account');
  if (b.amount !== undefined) {
    const a = b.amount as { value?: unknown; currency?: unknown };
    if (typeof a !== 'object' || !Number.isSafeInteger(a.value) || (a.value as number) <= 0) return invalid('Invalid amount specified', '137');
    if (typeof a.currency !== 'string' || a.currency.length !== 3) return invalid('Invalid amount specified', '137');
  }
  return null;
}

function authorise(state: State, b: Body): Reply {
  const amount = b.amount as { value: number; currency: string };
  if (amount.currency !== 'BRL') return invalid('Unsupported currency specified', '138');
  const method = b.paymentMethod as { type?: unknown; number?: unknown };
  if (typeof method !== 'object' || (method.type ?? 'scheme') !== 'scheme') return invalid('This double takes paymentMethod.type "scheme" only');
  if (typeof method.number !== 'string' || !luhnValid(method.number)) return invalid('Invalid card number', '101');
  const pspReference = newPspReference(state);
  const reference = String(b.reference);
  const manual = (b.additionalData as Body | undefined)?.manualCapture === 'true';
  const redirect = shopperRedirect(state, b, method.number, pspReference);
  if (redirect) {
    state.waiting.set(pspReference, { manual });
    state.payments.set(pspReference, {
      reference,
      amount: amount.value,
      currency: amount.currency,
      status: 'RedirectShopper',
      captured: false,
      capturedAmount: 0,
      refundedAmount: 0,
    });
    return { status: 200, body: { action: redirect, merchantReference: reference, pspReference, resultCode: 'RedirectShopper' } };
  }
  const answer: Body = {
    pspReference,
    resultCode: 'Authorised',
    merchantReference: reference,
    amount: { currency: amount.currency, value: amount.value },
  };
  if (method.number === ADYEN_REFUSED_CARD) Object.assign(answer, { resultCode: 'Refused', refusalReason: 'Refused', refusalReasonCode: '2' });
  if (method.number === ADYEN_ERROR_CARD) Object.assign(answer, { resultCode: 'Error', refusalReason: 'Acquirer Error', refusalReasonCode: '4' });
  const status = answer.resultCode as AdyenPayment['status'];
  const captured = status === 'Authorised' && !manual;
  state.payments.set(pspReference, {
    reference,
    amount: amount.value,
    currency: amount.currency,
    status,
    captured,
    capturedAmount: captured ? amount.value : 0,
    refundedAmount: 0,
  });
  return { status: 200, body: answer };
}

/**
 * The issuer's redirect (a CheckoutRedirectAction) when this request asks for the shopper's
 * authentication and the card's issuer wants it; null otherwise (the payment is decided at once).
 */
function shopperRedirect(state: State, b: Body, number: string, psp: string): Body | null {
  const attempt = (b.authenticationData as { attemptAuthentication?: unknown } | undefined)?.attemptAuthentication;
  if (b.browserInfo === undefined || attempt === 'never') return null;
  const md = Buffer.from(`${psp}:${randomBytes(9).toString('hex')}`).toString('base64url');
  if (number === ADYEN_3DS_GET_CARD)
    return { method: 'GET', paymentMethodType: 'scheme', type: 'redirect', url: `${state.origin}/checkoutshopper/threeDS/redirect?MD=${md}` };
  if (number === ADYEN_3DS_POST_CARD) {
    // The issuer posts its answer to Adyen (TermUrl), which sends the shopper on to the merchant's returnUrl with redirectResult.
    const data = { MD: md, PaReq: randomBytes(48).toString('base64'), TermUrl: `${state.origin}/checkoutshopper/threeDS/return` };
    return { data, method: 'POST', paymentMethodType: 'scheme', type: 'redirect', url: `${state.origin}/acs/authenticate` };
  }
  return null;
}

/** POST /payments/details: the shopper's redirectResult decides a payment waiting for it. */
function details(state: State, b: Body): Reply {
  const given = (b.details as { redirectResult?: unknown } | null)?.redirectResult;
  if (typeof given !== 'string' || given === '') return invalid("Required field 'details.redirectResult' is not provided.");
  const issued = state.redirectResults.get(given);
  if (!issued) return invalid('Invalid redirectResult: not one the issuer gave', '14_018');
  const payment = state.payments.get(issued.psp)!;
  const waiting = state.waiting.get(issued.psp);
  if (issued.used || !waiting || payment.status !== 'RedirectShopper')
    return invalid(`The payment ${issued.psp} is already ${payment.status}`, '14_002');
  issued.used = true;
  state.waiting.delete(issued.psp);
  const answer: Body = { merchantReference: payment.reference, pspReference: issued.psp };
  if (issued.outcome === 'authenticated') {
    payment.status = 'Authorised';
    payment.captured = !waiting.manual;
    payment.capturedAmount = payment.captured ? payment.amount : 0;
    Object.assign(answer, { amount: { currency: payment.currency, value: payment.amount }, resultCode: 'Authorised' });
  } else if (issued.outcome === 'refused') {
    payment.status = 'Refused';
    Object.assign(answer, { refusalReason: '3D Not Authenticated', refusalReasonCode: '11', resultCode: 'Refused' });
  } else {
    payment.status = 'Error';
    Object.assign(answer, { refusalReason: 'Acquirer Error', refusalReasonCode: '4', resultCode: 'Error' });
  }
  return { status: 200, body: answer };
}

/** A modification of a known payment: captures, refunds, cancels or reversals. */
function modify(state: State, op: Exclude<AdyenOperation, 'payments' | 'details'>, psp: string, b: Body): Reply {
  const payment = state.payments.get(psp);
  if (!payment) return invalid(`Original pspReference required for this operation (no payment ${psp})`, '167');
  if (payment.status !== 'Authorised') return invalid(`The payment is ${payment.status}: nothing to ${op.slice(0, -1)}`);
  const amount = b.amount as { value: number; currency: string } | undefined;
  if (amount && amount.currency !== payment.currency) return invalid(`Currency ${amount.currency} is not the payment's (${payment.currency})`, '138');
  const refused = applyModification(payment, op, amount?.value ?? 0);
  if (refused) return invalid(refused);
  const body: Body = { merchantAccount: state.o.merchantAccount, paymentPspReference: psp, pspReference: newPspReference(state) };
  if (typeof b.reference === 'string') body.reference = b.reference;
  body.status = 'received';
  if (amount && (op === 'captures' || op === 'refunds')) body.amount = { currency: amount.currency, value: amount.value };
  return { status: 201, body };
}

/** Changes the payment's state; returns why it cannot instead, when it cannot. */
function applyModification(p: AdyenPayment, op: Exclude<AdyenOperation, 'payments' | 'details'>, value: number): string | null {
  switch (op) {
    case 'captures':
      if (p.capturedAmount + value > p.amount) return `Capture of ${value} exceeds what is left to capture (${p.amount - p.capturedAmount})`;
      p.capturedAmount += value;
      p.captured = true;
      return null;
    case 'refunds':
      if (p.refundedAmount + value > p.capturedAmount)
        return `Refund of ${value} exceeds the captured amount left (${p.capturedAmount - p.refundedAmount})`;
      p.refundedAmount += value;
      return null;
    case 'cancels':
      if (p.captured) return 'The payment is captured: refund it instead';
      p.status = 'Cancelled';
      return null;
    case 'reversals':
      if (p.captured) p.refundedAmount = p.capturedAmount;
      else p.status = 'Cancelled';
      return null;
  }
}

function answer(state: State, route: { op: AdyenOperation; psp?: string }, body: unknown): Reply {
  const b = (body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Body;
  const refused = checkCommon(state, route.op, b);
  if (refused) return refused;
  if (route.op === 'payments') return authorise(state, b);
  if (route.op === 'details') return details(state, b);
  return modify(state, route.op, route.psp!, b);
}

function send(res: ServerResponse, call: AdyenCall, reply: Reply, idempotencyKey?: string): void {
  call.answer = { status: reply.status, body: structuredClone(reply.body) };
  const headers: Record<string, string> = { 'content-type': 'application/json;charset=UTF-8' };
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  res.writeHead(reply.status, headers).end(JSON.stringify(reply.body));
}

/** The next failure scripted for `op`, consuming it; undefined when none is. */
function takeFault(state: State, op: AdyenOperation): AdyenFault | undefined {
  const queue = state.faults.get(op);
  const head = queue?.[0];
  if (!head) return undefined;
  if (--head.left <= 0) queue!.shift();
  return head.how;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function record(state: State, req: IncomingMessage, path: string, raw: string): { call: AdyenCall; parsed: unknown; parsedOk: boolean } {
  let parsed: unknown;
  let parsedOk = true;
  try {
    parsed = raw === '' ? undefined : JSON.parse(raw);
  } catch {
    parsedOk = false;
  }
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]));
  const call: AdyenCall = { method: req.method ?? '', path, headers, body: parsedOk ? parsed : raw };
  state.requests.push(call);
  return { call, parsed, parsedOk };
}

async function handle(state: State, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const raw = await readBody(req);
  const full = (req.url ?? '/').split('?')[0]!;
  const path = full.startsWith('/v71/') ? full.slice(4) : full;
  const { call, parsed, parsedOk } = record(state, req, path, raw);
  if (req.method === 'GET' && full.startsWith('/reports/download/')) return serveReport(state, req, res, call, full);
  const route = full.startsWith('/v71/') ? routeOf(req.method ?? '', path) : null;
  const fault = route ? takeFault(state, route.op) : undefined;
  if (fault === 'hang') return;
  if (fault === 'drop') {
    req.socket.destroy();
    return;
  }
  if (typeof fault === 'number')
    return send(res, call, serviceError(fault, fault >= 500 ? '905' : '000', `Failure injected by the test (HTTP ${fault})`));
  if (req.headers['x-api-key'] !== state.o.apiKey) return send(res, call, serviceError(401, '000', 'HTTP Status Response - Unauthorized'));
  if (!route) return send(res, call, serviceError(404, '000', `Not Found: ${req.method} ${full}`));
  if (!parsedOk) return send(res, call, serviceError(400, '702', 'Unable to parse message: the body is not JSON'));
  const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
  const fingerprint = `${path} ${JSON.stringify(parsed)}`;
  const kept = key === undefined ? undefined : state.replies.get(key);
  if (kept && kept.fingerprint !== fingerprint) return send(res, call, invalid('Idempotency-Key already used for another request', '704'), key);
  if (kept) return send(res, call, kept.reply, key);
  const reply = answer(state, route, parsed);
  if (key !== undefined && reply.status < 500) state.replies.set(key, { fingerprint, reply });
  send(res, call, reply, key);
}

/** GET /reports/download/MerchantAccount/{account}/{file}: the report's CSV to the report user (HTTP Basic), 401 otherwise. */
function serveReport(state: State, req: IncomingMessage, res: ServerResponse, call: AdyenCall, full: string): void {
  const expected = `Basic ${Buffer.from(`${state.reportCredentials.username}:${state.reportCredentials.password}`).toString('base64')}`;
  const reply = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
    call.answer = { status, body };
    res.writeHead(status, { 'content-type': type, ...headers }).end(body);
  };
  const m = /^\/reports\/download\/MerchantAccount\/([^/]+)\/([^/]+)$/.exec(full);
  const csv = m && decodeURIComponent(m[1]!) === state.o.merchantAccount ? state.reports.get(decodeURIComponent(m[2]!)) : undefined;
  if (req.headers.authorization !== expected) reply(401, 'text/plain', 'Unauthorized', { 'www-authenticate': 'Basic realm="Adyen reports"' });
  else if (csv === undefined) reply(404, 'text/plain', 'Not Found');
  else reply(200, 'text/csv;charset=UTF-8', csv);
}

/** Builds one signed notification body (`live: "false"`, one item), with only the fields the item schemas define. */
function buildNotification(state: State, input: NotificationItemInput, tamper = false): object {
  if (!(ADYEN_EVENT_CODES as readonly string[]).includes(input.eventCode)) throw new Error(`adyen double: unknown eventCode ${input.eventCode}`);
  // AuthorisationNotificationRequestItem (additionalProperties: false) has no originalReference; the others do.
  if (input.eventCode === 'AUTHORISATION' && input.originalReference !== undefined) {
    throw new Error('adyen double: AUTHORISATION items have no originalReference in the webhooks file');
  }
  const item: Body = {
    amount: { currency: input.amount.currency ?? 'BRL', value: input.amount.value },
    eventCode: input.eventCode,
    eventDate: new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00'),
    merchantAccountCode: state.o.merchantAccount,
    merchantReference: input.merchantReference,
  };
  if (input.originalReference !== undefined) item.originalReference = input.originalReference;
  item.pspReference = input.pspReference;
  if (input.reason !== undefined) item.reason = input.reason;
  item.success = input.success ? 'true' : 'false';
  let hmacSignature = adyenHmac(item, state.o.hmacKeyHex);
  if (tamper) {
    const bytes = Buffer.from(hmacSignature, 'base64');
    bytes[0]! ^= 0x01;
    hmacSignature = bytes.toString('base64');
  }
  const withData = { additionalData: { ...input.additionalData, hmacSignature }, ...item };
  return { live: 'false', notificationItems: [{ NotificationRequestItem: withData }] };
}

function post(target: string, body: string, authorization: string): Promise<{ status: number; body: string }> {
  const url = new URL(target);
  const requestTo = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), authorization };
  return new Promise((resolve, reject) => {
    const req = requestTo(url, { method: 'POST', headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`adyen double: ${target} did not answer the notification within 10 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export async function startAdyenDouble(options: AdyenDoubleOptions = {}): Promise<AdyenDouble> {
  const state: State = {
    o: {
      apiKey: options.apiKey ?? `AQE_test_${randomBytes(12).toString('hex')}`,
      merchantAccount: options.merchantAccount ?? 'PagarGatewayECOM',
      hmacKeyHex: options.hmacKeyHex ?? randomBytes(32).toString('hex').toUpperCase(),
      username: options.username ?? 'adyen-notifications',
      password: options.password ?? randomBytes(12).toString('base64url'),
    },
    requests: [],
    payments: new Map(),
    faults: new Map(),
    replies: new Map(),
    issued: new Set(),
    reports: new Map(),
    reportCredentials: {
      username: options.reportUsername ?? 'report@Company.PagarGateway',
      password: options.reportPassword ?? randomBytes(12).toString('base64url'),
    },
    origin: '',
    waiting: new Map(),
    redirectResults: new Map(),
  };
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(state, req, res).catch(() => req.socket.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.origin = `http://127.0.0.1:${port}`;
  const reportUrl = (file: string) =>
    `http://127.0.0.1:${port}/reports/download/MerchantAccount/${encodeURIComponent(state.o.merchantAccount)}/${encodeURIComponent(file)}`;
  return {
    url: `http://127.0.0.1:${port}/v71`,
    ...state.o,
    requests: state.requests,
    payments: state.payments,
    get reportUsername() {
      return state.reportCredentials.username;
    },
    set reportUsername(username: string) {
      state.reportCredentials.username = username;
    },
    get reportPassword() {
      return state.reportCredentials.password;
    },
    set reportPassword(password: string) {
      state.reportCredentials.password = password;
    },
    publishReport(file, csv) {
      state.reports.set(file, csv);
      return reportUrl(file);
    },
    reportNotification: (file, url) => ({
      eventCode: 'REPORT_AVAILABLE',
      success: true,
      pspReference: file,
      merchantReference: '',
      amount: { value: 0, currency: 'BRL' },
      reason: url ?? reportUrl(file),
    }),
    issuerReturn(psp, outcome) {
      if (state.payments.get(psp)?.status !== 'RedirectShopper' || !state.waiting.has(psp))
        throw new Error(`adyen double: payment ${psp} is not waiting for its shopper's 3-D Secure`);
      // Opaque to the merchant, as Adyen's are: a random value the double maps to its outcome.
      const redirectResult = `X${randomBytes(3).toString('hex')}!${randomBytes(60).toString('base64')}`;
      state.redirectResults.set(redirectResult, { psp, outcome, used: false });
      return redirectResult;
    },
    failNext(op, how, count = 1) {
      if (!Number.isInteger(count) || count < 1) throw new Error(`adyen double: failNext count must be a positive integer, got ${count}`);
      state.faults.set(op, [...(state.faults.get(op) ?? []), { how, left: count }]);
    },
    notificationBody: (item, o = {}) => buildNotification(state, item, o.tamperHmac),
    notify(target, item, o = {}) {
      const body = JSON.stringify(buildNotification(state, item, o.tamperHmac));
      const credentials = Buffer.from(`${o.username ?? state.o.username}:${o.password ?? state.o.password}`).toString('base64');
      return post(target, body, `Basic ${credentials}`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2_000);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        for (const socket of sockets) socket.destroy();
      }),
  };
}
