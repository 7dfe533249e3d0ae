/**
 * The shape of the POST /api/sales body (CONTRACT §4): the one schema that checks the body and
 * documents it. What spans fields (the parts each method takes, the total, card, CPF/CNPJ and due
 * date rules) is sale-request.ts's. Descriptions state each rule; errors quote them (body-schema.ts).
 */
import { type Static, type TSchema, Type } from 'typebox';
import { bodyChecker } from './body-schema.ts';
import { BOLETO_MAX_AMOUNT_CENTS } from './boleto.ts';
import { url_max_length } from './limits.ts';
import { PAYMENT_METHODS } from './transaction-states.ts';

/** The boleto barcode holds 10 digits of cents; one ceiling for every method keeps methods interchangeable. */
const MAX_SALE_AMOUNT = BOLETO_MAX_AMOUNT_CENTS;
const MAX_ITEMS = 100;
const MAX_QUANTITY = 10_000;
const MAX_INSTALLMENTS = 12;
const PIX_EXPIRY_MIN = 60;
const PIX_EXPIRY_MAX = 31_536_000;
const EMAIL_MAX = 254; // RFC 5321 forward-path limit

// The RFC 5322 "atext" local part (≤ 64, RFC 5321), then DNS labels of letters, digits and inner
// hyphens (≤ 63 each) with at least one dot. Patterns take no flags, hence both cases spelled out.
const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
const EMAIL = `^[a-zA-Z0-9.!#$%&'*+/=?^_\`{|}~-]{1,64}@${LABEL}(?:\\.${LABEL})+$`;
// A literal "http(s)://host" start (WHATWG URL would read `http:foo` as http://foo/), no user name or
// password (they end up in logs and notification lists; a bare `@` or `:@` leaves both empty), no
// whitespace or control characters. Parsing it and judging its host is notificationUrlProblem's job.
const URL_TEXT = String.raw`[^\s\u0000-\u001f\u007f]`;
const URL_HOST = String.raw`[^/\\?#@\s\u0000-\u001f\u007f]`;
const POSTBACK_URL = String.raw`^[Hh][Tt][Tt][Pp][Ss]?://(?::?@)?(?!:)${URL_HOST}+(?:[/\\?#]${URL_TEXT}*)?$`;

const nullable = <T extends TSchema>(type: T) => Type.Optional(Type.Union([type, Type.Null()]));
/** Required, non-blank, at most `max` characters (code points, as PostgreSQL counts). */
const text = (max: number) =>
  Type.String({ minLength: 1, maxLength: max, pattern: '\\S', description: `a string of 1 to ${max} characters, not blank` });
const integer = (minimum: number, maximum: number, description: string, extra: { default?: number; 'x-description'?: string } = {}) =>
  Type.Integer({ minimum, maximum, description, ...extra });

const Customer = Type.Object(
  {
    name: text(200),
    email: Type.String({ maxLength: EMAIL_MAX, pattern: EMAIL, description: `a valid e-mail address of at most ${EMAIL_MAX} characters` }),
    document: nullable(Type.String({ description: 'a valid CPF or CNPJ, punctuation allowed' })),
    phone: nullable(Type.String({ pattern: '^\\d{10,11}$', description: '10 or 11 digits, digits only' })),
  },
  { title: 'CustomerInput', 'x-description': 'the payer; `document` (CPF or CNPJ) is required for BOLETO' },
);

const Item = Type.Object(
  {
    title: text(255),
    unitPrice: integer(1, MAX_SALE_AMOUNT, `an integer of cents from 1 to ${MAX_SALE_AMOUNT}`),
    quantity: integer(1, MAX_QUANTITY, `an integer from 1 to ${MAX_QUANTITY}`),
    tangible: Type.Boolean(),
  },
  { title: 'ItemInput' },
);

// Types only: what makes a card acceptable depends on its brand, which card.ts works out. Errors
// quote `description`; `x-description` is for the OpenAPI document only (http/openapi-document.ts).
const Card = Type.Object(
  {
    number: Type.String({ 'x-description': '12 to 19 digits passing the Luhn check, of Visa, Mastercard, Elo, Amex, Hipercard or Diners' }),
    holderName: Type.String(),
    expirationMonth: Type.Integer({ 'x-description': '1 to 12' }),
    expirationYear: Type.Integer({ 'x-description': 'four digits; a card is good through the last day of its expiry month' }),
    cvv: Type.String({ 'x-description': '3 digits, 4 for Amex; used for the processor call only, never kept' }),
  },
  {
    title: 'CardInput',
    'x-description':
      'required for CREDIT_CARD and DEBIT_CARD (debit: Visa, Mastercard or Elo), refused otherwise; only the brand, the last four digits and a keyed fingerprint are kept',
  },
);

const Shipping = Type.Object(
  {
    street: text(200),
    number: text(20),
    complement: nullable(Type.String({ maxLength: 200, description: 'a string of at most 200 characters, or null' })),
    neighborhood: text(100),
    city: text(100),
    state: Type.String({ pattern: '^[A-Z]{2}$', description: 'two upper-case letters (UF, e.g. SP)' }),
    zipCode: Type.String({ pattern: '^\\d{8}$', description: '8 digits (CEP without punctuation)' }),
    fee: integer(0, MAX_SALE_AMOUNT, `an integer of cents from 0 to ${MAX_SALE_AMOUNT}`),
  },
  { title: 'ShippingInput', 'x-description': 'required when any item is tangible; its `fee` is part of the amount' },
);

// What an issuer's 3-D Secure 2 needs of the shopper's browser (EMV 3DS browser fields, as Adyen's
// browserInfo takes them): the seller's checkout page reads them (the SDK's browserInfo() does).
const Browser = Type.Object(
  {
    userAgent: text(2048),
    acceptHeader: text(2048),
    language: Type.String({ maxLength: 35, pattern: '^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$', description: 'a BCP 47 language tag, e.g. pt-BR' }),
    colorDepth: integer(1, 48, 'an integer of bits from 1 to 48 (screen.colorDepth)'),
    screenHeight: integer(1, 100_000, 'an integer of pixels from 1 to 100000 (screen.height)'),
    screenWidth: integer(1, 100_000, 'an integer of pixels from 1 to 100000 (screen.width)'),
    timeZoneOffset: integer(-840, 720, 'an integer of minutes from -840 to 720 (new Date().getTimezoneOffset(), 180 in Brasília)'),
    javaEnabled: Type.Boolean({ description: 'true or false (navigator.javaEnabled(), false in current browsers)' }),
  },
  { title: 'BrowserInput', 'x-description': "the shopper's browser, as its page reads it" },
);

const Authentication = Type.Object(
  {
    returnUrl: Type.String({
      maxLength: url_max_length,
      pattern: POSTBACK_URL,
      description: `an absolute https:// URL of at most ${url_max_length} characters, without credentials (http:// only on loopback)`,
      'x-description': "the seller's page the shopper comes back to, with `saleId` and `status` added to its query",
    }),
    browser: Browser,
    ip: Type.String({ maxLength: 45, description: "the shopper's IPv4 or IPv6 address, as the seller's server sees it" }),
  },
  {
    title: 'AuthenticationInput',
    'x-description':
      "3-D Secure: required for DEBIT_CARD, optional for CREDIT_CARD (without it a credit sale is sent with no authentication); refused for other methods. The sale answer's `payment.card.authentication.url` is where the shopper's browser goes next.",
  },
);

export const SaleBody = Type.Object(
  {
    amount: integer(100, MAX_SALE_AMOUNT, `an integer of cents from 100 to ${MAX_SALE_AMOUNT}`, {
      'x-description': 'the sum of unitPrice × quantity over the items, plus shipping.fee',
    }),
    paymentMethod: Type.Enum(PAYMENT_METHODS, { 'x-description': 'decides which of card, installments, pix and boleto the sale takes' }),
    customer: Customer,
    items: Type.Array(Item, { minItems: 1, maxItems: MAX_ITEMS, description: `an array of 1 to ${MAX_ITEMS} items` }),
    postbackUrl: nullable(
      Type.String({
        maxLength: url_max_length,
        pattern: POSTBACK_URL,
        description: `an absolute http:// or https:// URL of at most ${url_max_length} characters, without credentials`,
        'x-description': "receives this sale's status changes, signed with X-Signature",
      }),
    ),
    installments: nullable(
      integer(1, MAX_INSTALLMENTS, `an integer from 1 to ${MAX_INSTALLMENTS}`, { default: 1, 'x-description': 'CREDIT_CARD only' }),
    ),
    card: nullable(Card),
    authentication: nullable(Authentication),
    shipping: nullable(Shipping),
    pix: nullable(
      Type.Object(
        {
          expiresInSeconds: nullable(
            integer(PIX_EXPIRY_MIN, PIX_EXPIRY_MAX, `an integer from ${PIX_EXPIRY_MIN} to ${PIX_EXPIRY_MAX}, or null for no expiry`, {
              default: 3600,
            }),
          ),
        },
        { title: 'PixOptions', 'x-description': 'PIX only' },
      ),
    ),
    boleto: nullable(
      Type.Object(
        {
          dueDate: nullable(
            Type.String({
              format: 'date',
              description: 'a real calendar date in the form YYYY-MM-DD, today (America/Sao_Paulo) or later',
              'x-description': 'default: today + 3 days',
            }),
          ),
        },
        { title: 'BoletoOptions', 'x-description': 'BOLETO only' },
      ),
    ),
  },
  { title: 'SaleRequest', 'x-description': 'Unknown fields are ignored; every violation is reported at once.' },
);

export type SaleBody = Static<typeof SaleBody>;

/** Every value the schema judges is at most 3 levels down (`items.0.title`). */
export const checkSaleBody = bodyChecker(SaleBody, { depth: 3, maxItems: MAX_ITEMS });
