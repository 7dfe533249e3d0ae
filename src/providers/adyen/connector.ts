/**
 * The Adyen connector (CONTRACT §11.2, §5a): the card processor port of one merchant account through
 * the Checkout API (payments, captures, refunds, reversals); its synchronous answers are facts. Every call is idempotent by a key made of the installation's id and our own ids,
 * so a retry after a lost answer never charges, captures or refunds twice, and two installations on
 * one Adyen account never share a key (Adyen keeps keys 31 days and answers a repeat with the first answer).
 */
import type { ProviderFact } from '../../domain/provider-facts.ts';
import type { Account, CancelOutcome, CardAnswer, CardProcessor, CardSubmission, GiveBack, RefundInput, RefundOutcome } from '../ports.ts';
import { type AdyenClient, AdyenError, createAdyenClient } from './client.ts';
import type { AdyenConnection } from './config.ts';
import { type PaymentSettings, paymentRequest, paymentVerdict, shopperAction } from './payment-request.ts';

/** The keys the gateway sends Adyen: at most 64 characters (installation 12, the longest pspReference 16). */
export const adyenKeys = (installationId: string) => ({
  payment: (saleId: number) => `${installationId}-payment-${saleId}`,
  capture: (saleId: number) => `${installationId}-capture-${saleId}`,
  cancel: (saleId: number) => `${installationId}-cancel-${saleId}`,
  details: (saleId: number) => `${installationId}-details-${saleId}`,
  refund: (refundId: number) => `${installationId}-refund-${refundId}`,
  reversal: (paymentId: string) => `${installationId}-reversal-${paymentId}`,
});
type Keys = ReturnType<typeof adyenKeys>;

/** A sale sent without the shopper's browser never redirects it (3-D Secure is not attempted), but the field is required. */
const return_url = 'https://gateway.invalid/adyen/return';

export function paymentSettings(c: AdyenConnection): PaymentSettings {
  return { merchantAccount: c.merchantAccount, capture: c.capture, returnUrl: return_url };
}

export interface AdyenConnector extends CardProcessor {
  client: AdyenClient;
  connection: AdyenConnection;
  keys: Keys;
}

export function adyenConnector(connection: AdyenConnection, installationId: string, account: Account): AdyenConnector {
  const client = createAdyenClient(connection);
  const keys = adyenKeys(installationId);
  const c: AdyenConnector = {
    capability: 'CARD',
    account,
    client,
    connection,
    keys,
    // Until Adyen answers, the payment is known by our reference: the sale id.
    reference: () => ({ externalId: null, providerData: null }),
    authorise: (sale) => submitPayment(c, sale),
    details: (input) => submitDetails(c, input),
    capture: (payment) => capturePayment(c, payment),
    refund: (input) => refund(c, input),
    giveBack: (payment) => reverse(c, payment),
    // The Checkout API reads no payment back: its notifications (and settlement reports) are its record.
    sync: async () => null,
  };
  return c;
}

// What went wrong is kept with the sale (provider_data) for the operator; the request's log shows it too.
const failure = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300);

/** Asks Adyen to capture an authorised payment (manual capture); the CAPTURE notification makes the sale PAGO. */
async function capturePayment(c: AdyenConnector, p: { saleId: number; paymentId: string; amountCents: number }) {
  const body = { merchantAccount: c.connection.merchantAccount, amount: { currency: 'BRL', value: p.amountCents }, reference: `capture-${p.saleId}` };
  try {
    const captured = await c.client.modify('captures', p.paymentId, body, c.keys.capture(p.saleId));
    return { status: 'DONE' as const, detail: captured.pspReference };
  } catch (error) {
    // A capture Adyen refuses (4xx) is not asked again: recorded for the operator; a CAPTURE_FAILED may follow.
    if (error instanceof AdyenError && !error.retryable) return { status: 'REFUSED' as const, detail: error.message.slice(0, 200) };
    throw error;
  }
}

/** The answer to POST /payments (or /payments/details) as a fact of the sale: the apply step moves it (and owes the capture). */
function answerFact(
  c: AdyenConnector,
  sale: { saleId: number },
  paymentId: string | null,
  result: Answer,
  data: Record<string, unknown>,
  key = c.keys.payment(sale.saleId),
): ProviderFact {
  return {
    provider: 'adyen',
    // One payment request per sale (its key), and one details request: each answer is told once.
    identity: `${key}:answer`,
    externalReference: paymentId ?? String(sale.saleId),
    fact: {
      kind: 'CARD_ANSWER',
      sale: { ids: paymentId ? [paymentId] : [], saleId: sale.saleId, referenceSuffices: true },
      paymentId,
      result,
      captureByGateway: c.connection.capture === 'manual',
      data,
    },
  };
}
type Answer = Extract<ProviderFact['fact'], { kind: 'CARD_ANSWER' }>['result'];

async function submitPayment(c: AdyenConnector, sale: CardSubmission): Promise<CardAnswer> {
  let answer: Awaited<ReturnType<AdyenClient['payment']>>;
  try {
    answer = await c.client.payment(paymentRequest(paymentSettings(c.connection), sale), c.keys.payment(sale.saleId));
  } catch (error) {
    // Adyen may still have it: a later AUTHORISATION notification moves the FALHA sale on (RETRY_PROCESSED).
    return { facts: [answerFact(c, sale, null, 'ERROR', { error: failure(error) })], action: null };
  }
  const verdict = paymentVerdict(answer.resultCode, sale.authentication !== null);
  const psp = typeof answer.pspReference === 'string' ? answer.pspReference : null;
  const data: Record<string, unknown> = { resultCode: answer.resultCode ?? null, refusalReason: answer.refusalReason ?? null };
  if (verdict.result === 'SHOPPER') {
    const action = shopperAction(answer.action);
    // The sale waits for its shopper: the return, or the AUTHORISATION notification, moves it on.
    if (action) return { facts: [], action };
    data.error = 'a shopper step without a redirect to follow';
    verdict.cancel = true;
  }
  if (psp && verdict.cancel) {
    // A payment this API cannot finish must not stand: withdrawn now, before it is told.
    const body = { merchantAccount: c.connection.merchantAccount, reference: `cancel-${sale.saleId}` };
    await c.client.modify('cancels', psp, body, c.keys.cancel(sale.saleId)).catch((error: unknown) => {
      data.error = `cancel not sent: ${failure(error)}`;
    });
  }
  const result = verdict.result === 'SHOPPER' ? 'ERROR' : verdict.result;
  return { facts: [answerFact(c, sale, psp, result, data)], action: null };
}

/**
 * The shopper came back from its issuer: POST /payments/details with the `redirectResult` it
 * brought, under one key per sale (a repeat is answered with the first answer). Authorised →
 * EM_PROCESSAMENTO (PAGO by the notification), Refused or Cancelled → RECUSADO, Error → FALHA; an
 * answer not given yet (Pending, Received) waits for the AUTHORISATION notification.
 */
async function submitDetails(c: AdyenConnector, input: { saleId: number; redirectResult: string }): Promise<ProviderFact[]> {
  const key = c.keys.details(input.saleId);
  let answer: Awaited<ReturnType<AdyenClient['details']>>;
  try {
    answer = await c.client.details({ details: { redirectResult: input.redirectResult } }, key);
  } catch (error) {
    // Adyen judged the return itself (a redirectResult it does not know): the payment cannot finish.
    if (error instanceof AdyenError && !error.retryable)
      return [answerFact(c, input, null, 'ERROR', { error: `payment details refused: ${failure(error)}` }, key)];
    // No answer: Adyen's AUTHORISATION notification still tells the outcome; until then the sale waits.
    return [answerFact(c, input, null, 'PENDING', { error: `payment details not answered: ${failure(error)}` }, key)];
  }
  const verdict = paymentVerdict(answer.resultCode);
  const psp = typeof answer.pspReference === 'string' ? answer.pspReference : null;
  const data: Record<string, unknown> = { resultCode: answer.resultCode ?? null, refusalReason: answer.refusalReason ?? null, authenticated: true };
  // A second shopper step after the return is not something the redirect flow asks: refused, as Adyen would in time.
  const result = verdict.cancel ? 'ERROR' : verdict.result === 'SHOPPER' ? 'ERROR' : verdict.result;
  return [answerFact(c, input, psp, result, data, key)];
}

/** A card refund; final on the REFUND / REFUND_FAILED notification. */
async function refund(c: AdyenConnector, input: RefundInput): Promise<RefundOutcome> {
  const body = {
    merchantAccount: c.connection.merchantAccount,
    amount: { currency: 'BRL', value: input.amountCents },
    reference: `refund-${input.refundId}`,
  };
  try {
    const answer = await c.client.modify('refunds', input.externalTransactionId, body, c.keys.refund(input.refundId));
    return { status: 'PENDING', providerRef: answer.pspReference };
  } catch (error) {
    // Adyen refused it (a 4xx is final); anything else is sent again by the refund job.
    if (error instanceof AdyenError && !error.retryable) return { status: 'FAILED', reason: error.message.slice(0, 300) };
    throw error;
  }
}

/** Money a sale cannot take goes back to the shopper: Adyen cancels the payment if uncaptured, refunds it otherwise. */
async function reverse(c: AdyenConnector, target: GiveBack): Promise<CancelOutcome> {
  const body = { merchantAccount: c.connection.merchantAccount, reference: `reversal-${target.paymentId}` };
  try {
    await c.client.modify('reversals', target.paymentId, body, target.key ?? c.keys.reversal(target.paymentId));
    return { status: 'DONE', detail: null };
  } catch (error) {
    // Adyen's refusal is final (nothing left to reverse, or not its payment): shown to the operator, not retried.
    if (error instanceof AdyenError && !error.retryable) return { status: 'REFUSED', detail: `reversal refused: ${error.message.slice(0, 200)}` };
    throw error;
  }
}
