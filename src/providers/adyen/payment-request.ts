/**
 * Pure: what the gateway sends Adyen for a card sale (CONTRACT §11.2), and what Adyen's answers
 * mean for the sale. The card is in the request only; nothing here keeps it.
 */
import type { CardSubmission } from '../ports.ts';

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

/** POST /payments: amount in BRL minor units, the sale id as reference, 3-D Secure never attempted (no shopper to redirect). */
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
    returnUrl: s.returnUrl,
    shopperInteraction: 'Ecommerce',
    authenticationData: { attemptAuthentication: 'never' },
    shopperEmail: customer.email,
    shopperName: shopperName(customer.name),
    countryCode: 'BR',
  };
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

/** What an answer to POST /payments says of the payment. */
export interface PaymentVerdict {
  result: 'AUTHORISED' | 'REFUSED' | 'PENDING' | 'ERROR';
  /** The payment must not stand (it asks for a shopper we do not have): it is cancelled at Adyen. */
  cancel: boolean;
}

export function paymentVerdict(resultCode: string | undefined): PaymentVerdict {
  switch (resultCode) {
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
      // RedirectShopper, ChallengeShopper, PartiallyAuthorised…: nothing this API can finish.
      return { result: 'ERROR', cancel: true };
  }
}
