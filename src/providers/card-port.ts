/**
 * What the card processor's port (ports.ts, CONTRACT §11.2) takes and gives: a sale handed over after
 * its write, with the card in memory only, and (3-D Secure) the shopper's browser and the step the
 * issuer asks of it.
 */
import type { CardBrand } from '../domain/card.ts';
import type { ProviderFact } from '../domain/provider-facts.ts';
import type { AuthenticationInput } from '../domain/sale-request.ts';

export type CardOutcome = 'APPROVED' | 'DECLINED' | 'PROCESSING_ERROR';
export interface CardReference {
  /** null: the payment is known by the sale's own id (given at the write, in the same statement). */
  externalId: string | null;
  /** Kept with the sale (provider_data) for the provider's own later steps; never card data. */
  providerData: Record<string, unknown> | null;
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
  /** 3-D Secure (CONTRACT §11.2): the shopper's browser, and the gateway's pages it comes back to; null: none attempted. */
  authentication: CardAuthentication | null;
}

export interface CardAuthentication {
  /** The gateway's own address (PUBLIC_BASE_URL), and its origin (the shopper's page's, for the issuer). */
  baseUrl: string;
  origin: string;
  /** Where the issuer sends the shopper back: the gateway's /checkout/3ds/{token}/return. */
  returnUrl: string;
  /** The sale's token, for a processor that serves its own issuer page (the sandbox's). */
  token: string;
  browser: AuthenticationInput['browser'];
  ip: string;
}

/** Where the processor sends the shopper's browser: a GET of `url`, or a form POST of `data` to it. */
export interface ShopperAction {
  method: 'GET' | 'POST';
  url: string;
  data: Record<string, string> | null;
}

/** The processor's first answer on a card sale: facts to apply, and the shopper's next step when it asks for one. */
export interface CardAnswer {
  facts: ProviderFact[];
  /** Set when the issuer wants the shopper (3-D Secure): the sale waits PENDENTE for the return. */
  action: ShopperAction | null;
}
