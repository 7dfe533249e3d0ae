/**
 * Adyen as the gateway's card processor and card refunder (CONTRACT §11.2, §5a). Every call is
 * idempotent by a key derived from our own ids, so a retry after a lost answer never charges,
 * captures or refunds twice.
 */
import type { CardProcessor, CardSubmission, CardVerdict, RefundInput, RefundOutcome, RefundProvider } from '../providers/ports.ts';
import type { AdyenConnection } from './adyen-config.ts';
import { type AdyenClient, AdyenError } from './client.ts';
import { type PaymentSettings, paymentRequest, paymentVerdict } from './payment-request.ts';

export const paymentKey = (saleId: number) => `payment-${saleId}`;
export const captureKey = (saleId: number) => `capture-${saleId}`;

/** The gateway never redirects a shopper (3-D Secure is not attempted), but the field is required. */
const return_url = 'https://gateway.invalid/adyen/return';

export function paymentSettings(c: AdyenConnection): PaymentSettings {
  return { merchantAccount: c.merchantAccount, capture: c.capture, returnUrl: return_url };
}

/** Asks Adyen to capture an authorised payment (manual capture); the CAPTURE notification makes the sale PAGO. */
export async function capturePayment(client: AdyenClient, c: AdyenConnection, saleId: number, psp: string, amountCents: number) {
  const body = { merchantAccount: c.merchantAccount, amount: { currency: 'BRL', value: amountCents }, reference: `capture-${saleId}` };
  return client.modify('captures', psp, body, captureKey(saleId));
}

export function adyenCardProcessor(client: AdyenClient, c: AdyenConnection): CardProcessor {
  return {
    // Until Adyen answers, the payment is known by our reference: the sale id.
    authorize: ({ saleId }) => ({ externalId: String(saleId), providerData: { provider: 'adyen' } }),
    submit: (sale) => submitPayment(client, c, sale),
  };
}

// What went wrong is kept with the sale (provider_data) for the operator; the request's log shows it too.
const failure = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300);

async function submitPayment(client: AdyenClient, c: AdyenConnection, sale: CardSubmission): Promise<CardVerdict> {
  let answer: Awaited<ReturnType<AdyenClient['payment']>>;
  try {
    answer = await client.payment(paymentRequest(paymentSettings(c), sale), paymentKey(sale.saleId));
  } catch (error) {
    // Adyen may still have it: a later AUTHORISATION notification moves the FALHA sale on (RETRY_PROCESSED).
    return { externalId: null, events: ['PROCESSING_ERROR'], providerData: { provider: 'adyen', error: failure(error) } };
  }
  const verdict = paymentVerdict(answer.resultCode);
  const psp = typeof answer.pspReference === 'string' ? answer.pspReference : null;
  const providerData: Record<string, unknown> = {
    provider: 'adyen',
    resultCode: answer.resultCode ?? null,
    refusalReason: answer.refusalReason ?? null,
  };
  if (verdict.authorised) providerData.authorised = true;
  if (psp && verdict.authorised && c.capture === 'manual') {
    // A capture that fails now is sent again by the follow-up job (same key).
    const captured = await capturePayment(client, c, sale.saleId, psp, sale.amountCents).catch((error: unknown) => {
      providerData.error = `capture not sent, will retry: ${failure(error)}`;
      return null;
    });
    if (captured) providerData.captureRef = captured.pspReference;
  }
  if (psp && verdict.cancel) {
    await client
      .modify('cancels', psp, { merchantAccount: c.merchantAccount, reference: `cancel-${sale.saleId}` }, `cancel-${sale.saleId}`)
      .catch((error: unknown) => {
        providerData.error = `cancel not sent: ${failure(error)}`;
      });
  }
  return { externalId: psp, events: verdict.events, providerData };
}

/** Card refunds of Adyen's sales go to Adyen; the rest to `others`. Final on the REFUND / REFUND_FAILED notification. */
export function adyenRefunds(client: AdyenClient, c: AdyenConnection, others: RefundProvider): RefundProvider {
  return {
    async refund(input: RefundInput): Promise<RefundOutcome> {
      if (input.providerData?.provider !== 'adyen') return others.refund(input);
      const body = {
        merchantAccount: c.merchantAccount,
        amount: { currency: 'BRL', value: input.amountCents },
        reference: `refund-${input.refundId}`,
      };
      try {
        const answer = await client.modify('refunds', input.externalTransactionId, body, `refund-${input.refundId}`);
        return { status: 'PENDING', providerRef: answer.pspReference };
      } catch (error) {
        // Adyen refused it (a 4xx is final); anything else is sent again by the refund job.
        if (error instanceof AdyenError && !error.retryable) return { status: 'FAILED', reason: error.message.slice(0, 300) };
        throw error;
      }
    },
  };
}
