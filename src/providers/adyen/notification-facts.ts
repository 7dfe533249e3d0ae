/**
 * Pure: what one Adyen notification item means for the gateway (CONTRACT §11.2; the table in docs/cards.md).
 * Chargebacks follow Adyen's dispute flow: NOTIFICATION_OF_CHARGEBACK and CHARGEBACK open it,
 * CHARGEBACK_REVERSED is won, SECOND_CHARGEBACK, PREARBITRATION_LOST or a CHARGEBACK whose
 * disputeStatus is final against the merchant is lost.
 */
import type { Fact, ProviderFact, SaleRef } from '../../domain/provider-facts.ts';

export interface NotificationItem {
  eventCode: string;
  success: 'true' | 'false';
  pspReference: string;
  originalReference?: string;
  merchantReference: string;
  merchantAccountCode: string;
  amount: { value: number; currency: string };
  reason?: string;
  additionalData?: Record<string, unknown>;
}

export type NotificationAction =
  /** AUTHORISATION: the issuer's answer. */
  | { kind: 'authorisation'; authorised: boolean }
  | { kind: 'capture'; captured: boolean }
  | { kind: 'cancellation' }
  | { kind: 'refund'; outcome: { status: 'SUCCEEDED' } | { status: 'FAILED'; reason: string } }
  | { kind: 'dispute'; step: 'opened' | 'reversed' | 'lost' }
  | { kind: 'ignore'; why: string };

// Dispute stages after which the money stays with the shopper (Adyen's disputeStatus; not sent for Brazil).
const lost_statuses = new Set(['Lost', 'Accepted', 'Expired']);

export function actionOf(item: NotificationItem): NotificationAction {
  const success = item.success === 'true';
  const why = item.reason ? `: ${item.reason}` : '';
  switch (item.eventCode) {
    case 'AUTHORISATION':
      return { kind: 'authorisation', authorised: success };
    case 'CAPTURE':
      return { kind: 'capture', captured: success };
    case 'CAPTURE_FAILED':
      return { kind: 'capture', captured: false };
    case 'CANCELLATION':
      return success ? { kind: 'cancellation' } : { kind: 'ignore', why: `cancellation refused${why}` };
    case 'REFUND':
      return { kind: 'refund', outcome: success ? { status: 'SUCCEEDED' } : { status: 'FAILED', reason: `Adyen refused the refund${why}` } };
    case 'REFUND_FAILED':
      return { kind: 'refund', outcome: { status: 'FAILED', reason: `the card scheme returned the refund${why}` } };
    case 'NOTIFICATION_OF_CHARGEBACK':
      return { kind: 'dispute', step: 'opened' };
    case 'CHARGEBACK': {
      const status = item.additionalData?.disputeStatus;
      return { kind: 'dispute', step: typeof status === 'string' && lost_statuses.has(status) ? 'lost' : 'opened' };
    }
    case 'CHARGEBACK_REVERSED':
      return { kind: 'dispute', step: 'reversed' };
    case 'SECOND_CHARGEBACK':
    case 'PREARBITRATION_LOST':
      return { kind: 'dispute', step: 'lost' };
    default:
      return { kind: 'ignore', why: `event code ${item.eventCode} is not one the gateway acts on` };
  }
}

const present = (x: string | undefined): x is string => typeof x === 'string' && x !== '';

/** Our sale id in a merchantReference: a payment's is the id, a capture's `capture-{id}`. */
function saleIdOf(merchantReference: string): number | null {
  const id = /^(?:capture-)?(\d{1,15})$/.exec(merchantReference)?.[1];
  return id === undefined ? null : Number(id);
}

/** One item as the provider fact it states (identity: Adyen's own key, pspReference + eventCode + success). */
export function factOfItem(item: NotificationItem, captureByGateway: boolean): ProviderFact {
  const action = actionOf(item);
  // A modification's item names the payment as its originalReference; an AUTHORISATION is the payment.
  const paymentId = present(item.originalReference) ? item.originalReference : item.pspReference;
  const sale: SaleRef = {
    ids: [item.originalReference, item.pspReference].filter(present),
    saleId: saleIdOf(item.merchantReference),
    // A dispute may carry a pspReference of its own: the payment's merchantReference then finds the sale.
    referenceSuffices: action.kind === 'dispute',
  };
  const { value: amount, currency } = item.amount;
  const envelope = {
    provider: 'adyen' as const,
    identity: `${item.pspReference}:${item.eventCode}:${item.success}`,
    externalReference: item.pspReference,
    source: {
      pspReference: item.pspReference,
      eventCode: item.eventCode,
      success: item.success,
      originalReference: item.originalReference ?? null,
      merchantReference: item.merchantReference,
      currency,
      reason: item.reason ?? null,
    },
  };
  return { ...envelope, fact: factOf(action, item, { sale, paymentId, amount, currency, captureByGateway }) };
}

interface Named {
  sale: SaleRef;
  paymentId: string;
  amount: number;
  currency: string;
  captureByGateway: boolean;
}

function factOf(action: NotificationAction, item: NotificationItem, n: Named): Fact {
  switch (action.kind) {
    case 'authorisation':
      return {
        kind: 'AUTHORISATION',
        sale: n.sale,
        paymentId: item.pspReference,
        amount: n.amount,
        currency: n.currency,
        authorised: action.authorised,
        captureByGateway: n.captureByGateway,
      };
    case 'capture':
      return { kind: 'CAPTURE', sale: n.sale, paymentId: n.paymentId, amount: n.amount, currency: n.currency, captured: action.captured };
    case 'cancellation':
      return { kind: 'CANCELLATION', sale: n.sale };
    case 'refund': {
      const id = /^refund-(\d{1,15})$/.exec(item.merchantReference)?.[1];
      const failed = action.outcome.status === 'FAILED' ? action.outcome.reason : null;
      return {
        kind: 'REFUND',
        refundId: id === undefined ? null : Number(id),
        paymentId: present(item.originalReference) ? item.originalReference : null,
        amount: n.amount,
        succeeded: failed === null,
        reason: failed,
      };
    }
    case 'dispute':
      return { kind: 'CHARGEBACK', sale: n.sale, step: action.step };
    case 'ignore':
      return { kind: 'NOTICE', what: action.why };
  }
}
