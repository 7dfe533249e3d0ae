/**
 * Pure: what one Adyen notification item means for the gateway (CONTRACT §11.2; the README's table).
 * Chargebacks follow Adyen's dispute flow: NOTIFICATION_OF_CHARGEBACK and CHARGEBACK open it,
 * CHARGEBACK_REVERSED is won, SECOND_CHARGEBACK, PREARBITRATION_LOST or a CHARGEBACK whose
 * disputeStatus is final against the merchant is lost.
 */
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
