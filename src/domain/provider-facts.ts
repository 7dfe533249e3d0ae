/**
 * Provider facts (CONTRACT §14): what a provider's message says, typed by its connector (pure
 * mapping), whatever the rail. The apply step knows only these; no connector's wire shape gets past them.
 */

/** The connectors this gateway ships; a transaction's and a cashout's `provider`. */
export const PROVIDER_NAMES = ['sandbox', 'api-pix', 'adyen', 'efi'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** The sale a fact concerns, as the provider names it. */
export interface SaleRef {
  /** Ids the provider gave the payment (Adyen's pspReference, a charge's txid) or that paid it (a Pix's endToEndId). */
  ids: string[];
  /** Our own reference when the provider echoes it back (Adyen's merchantReference: the sale id). */
  saleId: number | null;
  /** The reference alone finds the sale even once the provider named it otherwise (a dispute keeps the payment's reference). */
  referenceSuffices: boolean;
  /**
   * Where the charge a Pix paid lives, when this installation did not name it (a boleto's Pix, made by
   * its issuer): it finds the boleto sale whose BR Code carries it.
   */
  chargeLocation?: string | null;
}

/** An infraction's status, as the transaction read shows it (Efí's CANCELADA_EFI is CANCELADA). */
export const INFRACTION_STATUSES = ['ABERTA', 'EM_DEFESA', 'ACEITA', 'REJEITADA', 'CANCELADA'] as const;
export type InfractionStatus = (typeof INFRACTION_STATUSES)[number];

export type DisputeStep = 'opened' | 'reversed' | 'lost';

export type Fact =
  /** A card payment's authorisation (Adyen AUTHORISATION). */
  | {
      kind: 'AUTHORISATION';
      sale: SaleRef;
      paymentId: string;
      amount: number;
      currency: string;
      authorised: boolean;
      /** Manual capture: the gateway captures what is authorised (the connector's setting when it read the fact). */
      captureByGateway: boolean;
    }
  /**
   * A card processor's synchronous answer to a payment (Adyen's resultCode, or no answer): the
   * payment authorised (PAGO follows its notification or capture), refused, left for the processor
   * to decide later, or failed. `data`: what the sale keeps of it (never card data).
   */
  | {
      kind: 'CARD_ANSWER';
      sale: SaleRef;
      paymentId: string | null;
      result: 'AUTHORISED' | 'REFUSED' | 'PENDING' | 'ERROR';
      /** Manual capture: the gateway captures what is authorised. */
      captureByGateway: boolean;
      data: Record<string, unknown>;
    }
  /** A capture's outcome; the money is ours once captured. */
  | { kind: 'CAPTURE'; sale: SaleRef; paymentId: string; amount: number; currency: string; captured: boolean }
  /** An authorisation withdrawn before capture. */
  | { kind: 'CANCELLATION'; sale: SaleRef }
  /** A refund's outcome: ours when `refundId` names one of our refunds of the payment `paymentId`. */
  | { kind: 'REFUND'; refundId: number | null; paymentId: string | null; amount: number; succeeded: boolean; reason: string | null }
  /** A card dispute: opened (the chargeback), reversed (won), lost. */
  | { kind: 'CHARGEBACK'; sale: SaleRef; step: DisputeStep }
  /**
   * A MED 2.0 infraction as the PSP lists it (CONTRACT §11.5): opened (the money blocked at the PSP at
   * once), defended, then accepted (the devolução that follows takes the money) or rejected.
   * `overdue`: accepted long ago and its devolução never came (the gateway's own finding).
   */
  | {
      kind: 'INFRACTION';
      sale: SaleRef;
      infractionId: string;
      endToEndId: string;
      /** The PIX account that reported it. */
      account: string;
      status: InfractionStatus;
      amount: number;
      reason: string | null;
      openedAt: string | null;
      deadline: string | null;
      /** The defence as the PSP recorded it, when one was sent. */
      defense: string | null;
      overdue?: boolean;
    }
  /** A PIX dispute (MED) that took the money back: lost. */
  | { kind: 'MED'; sale: SaleRef; devolucaoId: string; amount: number /** The devolução's rtrId: what the PSP's record names. */; returnId?: string }
  /**
   * A Pix received, confirmed with the PSP: it pays the PENDENTE sale its txid names (or the boleto
   * whose Pix has the charge's location), or is returned whole when that sale cannot take it.
   */
  | {
      kind: 'PIX_RECEIVED';
      sale: SaleRef;
      endToEndId: string;
      txid: string | null;
      amount: number;
      paidAt: string;
      /** The account that received it (a boleto's Pix is received at the PIX PSP, not at the boleto's issuer). */
      account?: string;
    }
  /** What became of our return of a Pix that paid nothing. */
  | {
      kind: 'PIX_RETURN';
      endToEndId: string;
      status: 'SENT' | 'DONE' | 'REFUSED';
      detail: string | null /** The devolução's rtrId. */;
      returnId?: string;
    }
  /** How a sent Pix (a cashout's payout) stands at the PSP, as its own API describes it. */
  | {
      kind: 'PAYOUT_OUTCOME';
      cashoutId: number;
      idEnvio: string;
      status: PayoutStatus;
      endToEndId: string | null;
      amount: number;
      /** Why it was not made (the PSP's words), null otherwise. */
      reason: string | null;
    }
  /** Money the receiver's bank sent back after a payout was made. */
  | { kind: 'PAYOUT_RETURNED'; cashoutId: number; idEnvio: string; returnId: string; amount: number }
  /**
   * How a boleto charge stands at its issuer, confirmed with it: paid (or settled), cancelled, or
   * expired unpaid. `amount`: the cents paid, when the issuer says.
   */
  | { kind: 'BOLETO_STATUS'; sale: SaleRef; chargeId: string; status: 'paid' | 'canceled' | 'unpaid'; amount: number | null }
  /** Something the provider says that changes nothing here (an event code the gateway does not act on). */
  | { kind: 'NOTICE'; what: string };

export type FactKind = Fact['kind'];

/** A sent Pix at the PSP: taken and under way, made, or not made (refused in the request, or by the receiver's side). */
export type PayoutStatus = 'EM_PROCESSAMENTO' | 'REALIZADO' | 'NAO_REALIZADO';

/** One fact as a connector hands it to the apply step. */
export interface ProviderFact {
  provider: ProviderName;
  /** The provider's own identity of this fact: the same message sent again has the same one. */
  identity: string;
  /** The provider's id the operator searches by (pspReference, endToEndId, idEnvio, charge id). */
  externalReference: string;
  fact: Fact;
  /** The provider's own words, kept for the operator (never card data). */
  source?: Record<string, unknown>;
}

/** What became of a fact: the contract's three states. */
export type FactState = 'applied' | 'held' | 'needs_operator';

/** A call the gateway owes the provider because of a fact, made after the commit and sent again until done. */
export type Followup = 'CAPTURE' | 'RETURN';
