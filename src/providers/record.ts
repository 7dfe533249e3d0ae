/**
 * A provider account's own record of money (CONTRACT §15): each movement the provider booked on the
 * account (a Pix received, a devolução, a payout and its return, a boleto paid, a card payment
 * settled, refunded or charged back, a fee), read per window and page by page so that a day of a
 * million movements never sits in memory. Reconciliation matches each to one journal movement of
 * the same account by `reference` and `amount`.
 */

/** What a movement is, as the provider booked it. */
export type MovementKind =
  | 'PIX_RECEIVED'
  | 'PIX_DEVOLUCAO'
  | 'PAYOUT'
  | 'PAYOUT_RETURNED'
  | 'BOLETO_PAID'
  | 'CARD_SETTLED'
  | 'CARD_REFUNDED'
  | 'CHARGEBACK'
  | 'CHARGEBACK_REVERSED'
  /** The provider's fee: the platform's cost, recorded by reconciliation, never matched nor charged to a seller. */
  | 'FEE';

export interface ProviderMovement {
  /** The provider's own id of this row: read twice, it has the same one (kept once per account). */
  id: string;
  kind: MovementKind;
  /**
   * What the gateway's journal line names for the same movement: a received Pix's endToEndId, a
   * devolução's id, a payout's idEnvio, a payout return's rtrId, a boleto's charge id, an Adyen
   * payment's pspReference (settled), a refund's pspReference, `<pspReference>:chargeback` for a
   * chargeback or second chargeback and `<pspReference>:chargeback-reversed` for its reversal,
   * `<pspReference>:fee` for a fee.
   */
  reference: string;
  /** Integer cents: + into the account, − out of it. */
  amount: number;
  /** When the provider booked it. */
  at: Date;
  /** The provider's own words, kept for the operator (never card data). */
  detail?: Record<string, unknown>;
}

/** A half-open interval [from, to) of booking times. */
export interface RecordWindow {
  from: Date;
  to: Date;
}

/**
 * The provider has not published its record of the window yet (Adyen's settlement report arrives
 * days after): the day stays `pending` and is read again, it is not `unreadable`.
 */
export class RecordNotReady extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordNotReady';
  }
}

/** One account's record: its movements in a window, page after page (each page bounded). Throws when it cannot be read. */
export type RecordReader = (window: RecordWindow) => AsyncIterable<ProviderMovement[]>;
