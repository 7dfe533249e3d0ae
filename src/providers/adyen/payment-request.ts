/**
 * Pure: what the gateway sends Adyen for a card sale (CONTRACT §11.2), and what Adyen's answers
 * mean for the sale. The card is in the request only; nothing here keeps it.
 */
import type { CardSubmission, ShopperAction } from '../ports.ts';

export interface PaymentSettings {
  merchantAccount: string;
  capture: 'automatic' | 'manual';
  returnUrl: string;
}

function shopperName(name: string): { firstName: string; lastName: string } {
  const parts = name.trim().split(/\s+/);
  const first = parts[0] ?? name;
  return { firstName: first.slice(0, 80), lastName: (parts.slice(1).join(' ') || first).slice(0, 80) };
}

/**
 * POST /payments: amount in BRL minor units, the sale id as reference. Without the shopper's browser
 * 3-D Secure is never attempted; with it, Adyen's redirect flow (the shopper leaves through the
 * gateway's page, authenticates at its issuer and comes back to `returnUrl`), always for debit.
 */
export function paymentRequest(s: PaymentSettings, sale: CardSubmission): Record<string, unknown> {
  const { card, customer, shipping } = sale;
  const body: Record<string, unknown> = {
    amount: { currency: 'BRL', value: sale.amountCents },
    merchantAccount: s.merchantAccount,
    reference: String(sale.saleId),
    paymentMethod: {
      type: 'scheme',
      number: card.number,
      expiryMonth: String(card.expirationMonth).padStart(2, '0'),
      expiryYear: String(card.expirationYear),
      cvc: card.cvv,
      holderName: card.holderName,
      // Brazilian combo cards pay by credit unless told otherwise.
      fundingSource: sale.method === 'DEBIT_CARD' ? 'debit' : 'credit',
    },
    returnUrl: sale.authentication?.returnUrl ?? s.returnUrl,
    shopperInteraction: 'Ecommerce',
    authenticationData: { attemptAuthentication: 'never' },
    shopperEmail: customer.email,
    shopperName: shopperName(customer.name),
    countryCode: 'BR',
  };
  const auth = sale.authentication;
  if (auth) {
    body.channel = 'Web';
    body.origin = auth.origin;
    body.browserInfo = { ...auth.browser };
    body.shopperIP = auth.ip;
    // The redirect flow: no Adyen script runs on the shopper's page. Debit is always authenticated
    // (the acquirers require it); credit is left to Adyen's and the issuer's rules.
    body.authenticationData = {
      ...(sale.method === 'DEBIT_CARD' ? { attemptAuthentication: 'always' } : {}),
      threeDSRequestData: { nativeThreeDS: 'disabled' },
    };
  }
  if (sale.method === 'CREDIT_CARD' && sale.installments > 1) body.installments = { value: sale.installments };
  if (customer.document) body.socialSecurityNumber = customer.document;
  // Digits with the area code (CONTRACT §4); Adyen wants the country code with a plus.
  if (customer.phone) body.telephoneNumber = `+55${customer.phone}`;
  if (shipping) {
    body.deliveryAddress = {
      street: shipping.street,
      houseNumberOrName: shipping.number,
      city: shipping.city,
      stateOrProvince: shipping.state,
      postalCode: shipping.zipCode,
      country: 'BR',
    };
  }
  // Automatic: captured at once whatever the account's capture delay, so the AUTHORISATION is the money's word.
  if (s.capture === 'manual') body.additionalData = { manualCapture: 'true' };
  else body.captureDelayHours = 0;
  return body;
}

/** What an answer to POST /payments (or /payments/details) says of the payment. */
export interface PaymentVerdict {
  /** SHOPPER: the issuer wants the shopper (3-D Secure); the sale waits for its return. */
  result: 'AUTHORISED' | 'REFUSED' | 'PENDING' | 'ERROR' | 'SHOPPER';
  /** The payment must not stand (it asks for a shopper we do not have): it is cancelled at Adyen. */
  cancel: boolean;
}

/** `shopper`: the sale was sent with the shopper's browser, so an action for it can be followed. */
export function paymentVerdict(resultCode: string | undefined, shopper = false): PaymentVerdict {
  switch (resultCode) {
    case 'RedirectShopper':
    case 'IdentifyShopper':
    case 'ChallengeShopper':
      if (shopper) return { result: 'SHOPPER', cancel: false };
      return { result: 'ERROR', cancel: true };
    case 'Authorised':
      // Money to collect: PAGO follows Adyen's notification, after a capture where it is manual.
      return { result: 'AUTHORISED', cancel: false };
    case 'Refused':
    case 'Cancelled':
      return { result: 'REFUSED', cancel: false };
    case 'Pending':
    case 'Received':
      // Adyen decides later and says so in an AUTHORISATION notification.
      return { result: 'PENDING', cancel: false };
    case 'Error':
      return { result: 'ERROR', cancel: false };
    default:
      // PartiallyAuthorised, Presented…, or a shopper step without a shopper: nothing this API can finish.
      return { result: 'ERROR', cancel: true };
  }
}

/** The shopper's next step in an answer: a redirect action's method, URL and form data; null when there is none to follow. */
export function shopperAction(action: unknown): ShopperAction | null {
  const a = action as { type?: unknown; method?: unknown; url?: unknown; data?: unknown } | null | undefined;
  if (a?.type !== 'redirect' || typeof a.url !== 'string' || !/^https?:\/\//i.test(a.url)) return null;
  const method = String(a.method ?? 'GET').toUpperCase() === 'POST' ? 'POST' : 'GET';
  const data =
    a.data && typeof a.data === 'object'
      ? Object.fromEntries(Object.entries(a.data as Record<string, unknown>).map(([k, v]) => [k, String(v)]))
      : null;
  return { method, url: a.url, data: method === 'POST' ? (data ?? {}) : null };
}
