/**
 * The Adyen connector (CONTRACT §11.2, §5a): card payments, captures, refunds and reversals through
 * the Checkout API. Every call is idempotent by a key made of the installation's id and our own ids,
 * so a retry after a lost answer never charges, captures or refunds twice, and two installations on
 * one Adyen account never share a key (Adyen keeps keys 31 days and answers a repeat with the first answer).
 */
import type { CancelOutcome, CancelTarget, CardSubmission, CardVerdict, Connector, RefundInput, RefundOutcome } from '../ports.ts';
import { type AdyenClient, AdyenError, createAdyenClient } from './client.ts';
import type { AdyenConnection } from './config.ts';
import { type PaymentSettings, paymentRequest, paymentVerdict } from './payment-request.ts';

/** The keys the gateway sends Adyen: at most 64 characters (installation 12, the longest pspReference 16). */
export const adyenKeys = (installationId: string) => ({
  payment: (saleId: number) => `${installationId}-payment-${saleId}`,
  capture: (saleId: number) => `${installationId}-capture-${saleId}`,
  cancel: (saleId: number) => `${installationId}-cancel-${saleId}`,
  refund: (refundId: number) => `${installationId}-refund-${refundId}`,
  reversal: (paymentId: string) => `${installationId}-reversal-${paymentId}`,
});
type Keys = ReturnType<typeof adyenKeys>;

/** The gateway never redirects a shopper (3-D Secure is not attempted), but the field is required. */
const return_url = 'https://gateway.invalid/adyen/return';

export function paymentSettings(c: AdyenConnection): PaymentSettings {
  return { merchantAccount: c.merchantAccount, capture: c.capture, returnUrl: return_url };
}

export interface AdyenConnector extends Connector {
  client: AdyenClient;
  connection: AdyenConnection;
  keys: Keys;
}

export function adyenConnector(connection: AdyenConnection, installationId: string): AdyenConnector {
  const client = createAdyenClient(connection);
  const keys = adyenKeys(installationId);
  const c: AdyenConnector = {
    name: 'adyen',
    client,
    connection,
    keys,
    // Until Adyen answers, the payment is known by our reference: the sale id.
    reference: () => ({ externalId: null, providerData: null }),
    authorise: (sale) => submitPayment(c, sale),
    capture: (payment) => capturePayment(c, payment),
    refund: (input) => refund(c, input),
    cancel: (target) => reverse(c, target),
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

async function submitPayment(c: AdyenConnector, sale: CardSubmission): Promise<CardVerdict> {
  let answer: Awaited<ReturnType<AdyenClient['payment']>>;
  try {
    answer = await c.client.payment(paymentRequest(paymentSettings(c.connection), sale), c.keys.payment(sale.saleId));
  } catch (error) {
    // Adyen may still have it: a later AUTHORISATION notification moves the FALHA sale on (RETRY_PROCESSED).
    return { externalId: null, events: ['PROCESSING_ERROR'], providerData: { error: failure(error) } };
  }
  const verdict = paymentVerdict(answer.resultCode);
  const psp = typeof answer.pspReference === 'string' ? answer.pspReference : null;
  const providerData: Record<string, unknown> = { resultCode: answer.resultCode ?? null, refusalReason: answer.refusalReason ?? null };
  if (verdict.authorised) providerData.authorised = true;
  if (psp && verdict.authorised && c.connection.capture === 'manual') {
    // A capture that fails now is sent again by the connector's job (same key).
    const captured = await capturePayment(c, { saleId: sale.saleId, paymentId: psp, amountCents: sale.amountCents }).catch((error: unknown) => {
      providerData.error = `capture not sent, will retry: ${failure(error)}`;
      return null;
    });
    if (captured) providerData.captureRef = captured.status === 'DONE' ? captured.detail : `refused: ${captured.detail}`;
  }
  if (psp && verdict.cancel) {
    const body = { merchantAccount: c.connection.merchantAccount, reference: `cancel-${sale.saleId}` };
    await c.client.modify('cancels', psp, body, c.keys.cancel(sale.saleId)).catch((error: unknown) => {
      providerData.error = `cancel not sent: ${failure(error)}`;
    });
  }
  return { externalId: psp, events: verdict.events, providerData };
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
async function reverse(c: AdyenConnector, target: CancelTarget): Promise<CancelOutcome> {
  if (target.kind !== 'payment') throw new Error('Adyen holds no charge to remove');
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
