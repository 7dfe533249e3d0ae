import type { CardBrand } from '../domain/card.ts';
import type { PaymentMethod, TransactionEvent } from '../domain/transaction-states.ts';

/**
 * What the gateway asks of payment providers. Sales are persisted with what the provider answers
 * at creation; later moves arrive as events (a provider's callback, or the sandbox autopilot).
 */
export interface PixCharge {
  txid: string;
  brCode: string;
  /** STATIC: a BR Code with our key, nothing at the PSP; ACTIVE: an immediate charge at the PSP. */
  charge: 'STATIC' | 'ACTIVE';
}
export interface PixChargeInput {
  amountCents: number;
  /** Null: a static BR Code that never expires (CONTRACT §11.1). */
  expiresInSeconds: number | null;
  /** The payer, when the sale names a CPF or CNPJ (the charge's `devedor`). */
  debtor: { name: string; document: string } | null;
}
export interface PixProvider {
  /** Throws ApiError PROVIDER_ERROR (502) when the PSP did not accept the charge. */
  createCharge(input: PixChargeInput): Promise<PixCharge>;
}

export interface BoletoIssued {
  externalId: string;
  barcode: string;
  digitableLine: string;
}
export interface BoletoProvider {
  issue(input: { saleId: number; amountCents: number; dueDate: string }): BoletoIssued;
}

export type CardOutcome = 'APPROVED' | 'DECLINED' | 'PROCESSING_ERROR';
export interface CardAuthorization {
  externalId: string;
  /** Kept with the sale (provider_data) for the provider's own later steps; never card data. */
  providerData: Record<string, unknown>;
}
/** A written card sale handed to a processor that decides over the network; the card lives only in memory. */
export interface CardSubmission {
  saleId: number;
  amountCents: number;
  method: 'CREDIT_CARD' | 'DEBIT_CARD';
  installments: number;
  card: { number: string; holderName: string; expirationMonth: number; expirationYear: number; cvv: string; brand: CardBrand };
  customer: { name: string; email: string; document: string | null; phone: string | null };
  shipping: { street: string; number: string; city: string; state: string; zipCode: string } | null;
}
/** What the processor answered: the moves to apply to the PENDENTE sale, and what to keep with it. */
export interface CardVerdict {
  /** The processor's id for the payment; null when it gave none (the sale keeps its reference). */
  externalId: string | null;
  events: TransactionEvent[];
  providerData: Record<string, unknown>;
}
export interface CardProcessor {
  /** At the sale's write: what is kept with it. The number is used here and never stored by the gateway. */
  authorize(input: { saleId: number; amountCents: number; installments: number; brand: CardBrand; number: string }): CardAuthorization;
  /**
   * After the sale is written (PENDENTE), outside any database transaction: a processor that decides
   * over the network is handed the card here. Null for the sandbox, whose autopilot plays the outcome.
   * Never throws: a processor that cannot be reached is a verdict too (FALHA).
   */
  submit: ((sale: CardSubmission) => Promise<CardVerdict>) | null;
}

export type PayoutOutcome = 'COMPLETED' | 'REJECTED';
export interface PayoutSent {
  externalId: string;
  providerData: Record<string, unknown>;
}
export interface PayoutProvider {
  /** Sends a PIX transfer; its result arrives later (a callback, or the sandbox autopilot). */
  send(input: { cashoutId: number; amountCents: number; pixKey: string; pixKeyType: string }): PayoutSent;
}

/** A provider's answer to a refund (CONTRACT §5a): settled now, or accepted and settled later. */
export type RefundOutcome = { status: 'SUCCEEDED' } | { status: 'FAILED'; reason: string } | { status: 'PENDING'; providerRef: string };
export interface RefundInput {
  refundId: number;
  amountCents: number;
  transactionId: number;
  paymentMethod: PaymentMethod;
  externalTransactionId: string;
  /** The Pix that paid a PIX sale (null when an operator event paid it). */
  pixEndToEndId: string | null;
  /** What the sale's provider kept with it at creation (which card processor made it). */
  providerData: Record<string, unknown> | null;
}
export interface RefundProvider {
  /**
   * Asks the provider to return `amountCents` to the payer; idempotent per refundId (a retry after a
   * lost answer must not refund twice). Throws when the provider could not be reached or answered
   * nothing usable: the refund stays PENDING and is sent again.
   */
  refund(input: RefundInput): Promise<RefundOutcome>;
}

export interface Providers {
  pix: PixProvider;
  boleto: BoletoProvider;
  card: CardProcessor;
  payout: PayoutProvider;
  refunds: RefundProvider;
}
