/**
 * Fixtures shared by the integration tests: CONTRACT §6's operator-event table, transcribed once,
 * and the POST /api/sales bodies (CONTRACT §4's examples and the small one-item sales the state
 * machine and money tests create).
 *
 * Written from the contract by hand and importing nothing from src/: a table or body taken from the
 * code under test would agree with that code whatever it does.
 */

export type Json = Record<string, unknown>;

/** The keys of a transaction read (the spec's Transaction, CONTRACT §5a's refundedAmount), sorted. */
export const TRANSACTION_KEYS = [
  'id',
  'status',
  'amount',
  'netAmount',
  'systemFee',
  'reserveAmount',
  'refundedAmount',
  'paymentMethod',
  'date',
  'completedAt',
  'customer',
  'items',
  'pixKey',
  'cardLastFour',
  'cardBrand',
  'authenticated',
  'boletoCode',
  'boletoPdfUrl',
  'boletoPixKey',
  'externalTransactionId',
  'installments',
  'shipping',
  'med',
].sort();

// ---------- CONTRACT §6: operator/processor events ----------

export type Method = 'PIX' | 'CREDIT_CARD' | 'DEBIT_CARD' | 'BOLETO';
export const METHODS: readonly Method[] = ['PIX', 'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO'];
export const CARDS: readonly Method[] = ['CREDIT_CARD', 'DEBIT_CARD'];

export type Status = 'PENDENTE' | 'EM_PROCESSAMENTO' | 'PAGO' | 'CANCELADO' | 'RECUSADO' | 'ESTORNADO' | 'FALHA' | 'CHARGEBACK' | 'MED';

export type TxEvent =
  | 'PAYMENT_CONFIRMED'
  | 'SENT_TO_PROCESSOR'
  | 'APPROVED'
  | 'DECLINED'
  | 'PROCESSING_ERROR'
  | 'RETRY_PROCESSED'
  | 'CANCELLED'
  | 'EXPIRED'
  | 'REFUNDED'
  | 'CHARGEBACK_OPENED'
  | 'CHARGEBACK_REVERTED'
  | 'CHARGEBACK_CONFIRMED'
  | 'MED_OPENED'
  | 'MED_WON'
  | 'MED_LOST';

export interface EventRule {
  from: readonly Status[];
  to: Status;
  methods?: readonly Method[];
}

/** CONTRACT §6's event table, transcribed by hand: the statuses an event moves from, where to, and which methods allow it. */
export const EVENT_TABLE: Readonly<Record<TxEvent, EventRule>> = {
  PAYMENT_CONFIRMED: { from: ['PENDENTE'], to: 'PAGO' },
  SENT_TO_PROCESSOR: { from: ['PENDENTE'], to: 'EM_PROCESSAMENTO', methods: CARDS },
  APPROVED: { from: ['EM_PROCESSAMENTO'], to: 'PAGO' },
  DECLINED: { from: ['EM_PROCESSAMENTO'], to: 'RECUSADO' },
  PROCESSING_ERROR: { from: ['PENDENTE', 'EM_PROCESSAMENTO'], to: 'FALHA' },
  RETRY_PROCESSED: { from: ['FALHA'], to: 'PAGO' },
  CANCELLED: { from: ['PENDENTE', 'FALHA'], to: 'CANCELADO' },
  EXPIRED: { from: ['PENDENTE'], to: 'CANCELADO', methods: ['PIX', 'BOLETO'] },
  REFUNDED: { from: ['PAGO'], to: 'ESTORNADO' },
  CHARGEBACK_OPENED: { from: ['PAGO'], to: 'CHARGEBACK', methods: CARDS },
  CHARGEBACK_REVERTED: { from: ['CHARGEBACK'], to: 'PAGO' },
  CHARGEBACK_CONFIRMED: { from: ['CHARGEBACK'], to: 'ESTORNADO' },
  MED_OPENED: { from: ['PAGO'], to: 'MED', methods: ['PIX'] },
  MED_WON: { from: ['MED'], to: 'PAGO' },
  MED_LOST: { from: ['MED'], to: 'ESTORNADO' },
};
export const EVENTS = Object.keys(EVENT_TABLE) as TxEvent[];

/** Whether the table allows `event` from `status` on `method` (the repeat rule aside). */
export function allows(event: TxEvent, status: Status, method: Method): boolean {
  const rule = EVENT_TABLE[event];
  return rule.from.includes(status) && (!rule.methods || rule.methods.includes(method));
}

// ---------- POST /api/sales bodies ----------

/** CONTRACT §4's customer, with phone (the PIX example's) or without (`customerWithoutPhone`). */
export const customer = (): Json => ({ name: 'Maria Silva', email: 'maria@example.com', document: '52998224725', phone: '11987654321' });
export const customerWithoutPhone = (): Json => ({ name: 'Maria Silva', email: 'maria@example.com', document: '52998224725' });

/** A card of the sandbox (CONTRACT §6's test cards): 4111… approved Visa by default. */
export const testCard = (number = '4111111111111111', cvv = '123', holderName = 'MARIA SILVA'): Json => ({
  number,
  holderName,
  expirationMonth: 12,
  expirationYear: 2030,
  cvv,
});

export const shippingExample = (): Json => ({
  street: 'Rua A',
  number: '10',
  complement: null,
  neighborhood: 'Centro',
  city: 'São Paulo',
  state: 'SP',
  zipCode: '01001000',
  fee: 1000,
});

export interface PixExampleOptions {
  /** Cents; the one item's unitPrice follows it. Default 15000. */
  amount?: number;
  /** Default the example's https://seller.example/postback; null leaves the field out. */
  postbackUrl?: string | null;
  /** Default { expiresInSeconds: 3600 }; null leaves the field out (the gateway's default expiry). */
  pix?: Json | null;
}

/**
 * CONTRACT §4's PIX example (amount 15000, Maria Silva with document and phone, one "Curso", the
 * example's postbackUrl, expiry 3600 s); `options` change or leave out its parts, `extra` fields
 * are added last.
 */
export function pixExample(options: PixExampleOptions = {}, extra: Json = {}): Json {
  const amount = options.amount ?? 15000;
  return {
    amount,
    paymentMethod: 'PIX',
    customer: customer(),
    items: [{ title: 'Curso', unitPrice: amount, quantity: 1, tangible: false }],
    ...(options.postbackUrl === null ? {} : { postbackUrl: options.postbackUrl ?? 'https://seller.example/postback' }),
    ...(options.pix === null ? {} : { pix: options.pix ?? { expiresInSeconds: 3600 } }),
    ...extra,
  };
}

/** CONTRACT §4's credit-card example: 16000 = one tangible 15000 "Camiseta" + shipping fee 1000, 3 installments. */
export function cardExample(number = '4111111111111111', cvv = '123', extra: Json = {}): Json {
  return {
    amount: 16000,
    paymentMethod: 'CREDIT_CARD',
    customer: { name: 'Maria Silva', email: 'maria@example.com' },
    items: [{ title: 'Camiseta', unitPrice: 15000, quantity: 1, tangible: true }],
    installments: 3,
    card: testCard(number, cvv),
    shipping: shippingExample(),
    ...extra,
  };
}

/** A boleto sale of CONTRACT §4 (a CNPJ document with punctuation, two lines, 25050 cents); `boleto` when given. */
export function boletoExample(boleto?: { dueDate: string }): Json {
  return {
    amount: 25050,
    paymentMethod: 'BOLETO',
    customer: { name: 'João Souza', email: 'joao@example.com', document: '11.222.333/0001-81' },
    items: [
      { title: 'Livro', unitPrice: 10025, quantity: 2, tangible: false },
      { title: 'Frete grátis', unitPrice: 5000, quantity: 1, tangible: false },
    ],
    ...(boleto ? { boleto } : {}),
  };
}

/** The shopper's side of 3-D Secure, as a seller's checkout page gathers it (required for debit). */
export function authenticationExample(returnUrl = 'https://loja.example.com/pedido/retorno'): Json {
  return {
    returnUrl,
    browser: {
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
      acceptHeader: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      language: 'pt-BR',
      colorDepth: 24,
      screenHeight: 844,
      screenWidth: 390,
      timeZoneOffset: 180,
      javaEnabled: false,
    },
    ip: '203.0.113.7',
  };
}

/** A debit sale: a digital 4990 "E-book", Mastercard 5555…, customer with a landline and no document, 3-D Secure. */
export function debitExample(): Json {
  return {
    amount: 4990,
    paymentMethod: 'DEBIT_CARD',
    customer: { name: 'Ana Lima', email: 'ana@example.com', phone: '1133334444' },
    items: [{ title: 'E-book', unitPrice: 4990, quantity: 1, tangible: false }],
    card: { number: '5555555555554444', holderName: 'ANA LIMA', expirationMonth: 1, expirationYear: 2031, cvv: '987' },
    authentication: authenticationExample(),
  };
}

export interface SaleOptions {
  /** Cents, default 15000. */
  amount?: number;
  /** The one item's title. Default 'Produto'. */
  title?: string;
  /** Cards: the number; default 4111… for credit, 5555… for debit (both approved by the sandbox). */
  cardNumber?: string;
  /** Cards: the holder's name, default 'MARIA SILVA'. */
  holderName?: string;
  /** Credit cards: installments; default 2, null leaves the field out (the gateway's default, 1). */
  installments?: number | null;
  /** PIX: the `pix` object; absent by default (the gateway's default expiry). */
  pix?: Json;
  /** Boleto: the due date; absent by default (today + 3 days). */
  dueDate?: string;
}

/**
 * The smallest valid sale of a method: one digital item of `amount`, Maria Silva with document and
 * no phone. What the state-machine and money tests create by the dozen.
 */
export function saleOf(method: Method, options: SaleOptions = {}): Json {
  const amount = options.amount ?? 15000;
  const base = {
    amount,
    paymentMethod: method,
    customer: customerWithoutPhone(),
    items: [{ title: options.title ?? 'Produto', unitPrice: amount, quantity: 1, tangible: false }],
  };
  const card = (fallback: string) => testCard(options.cardNumber ?? fallback, '123', options.holderName ?? 'MARIA SILVA');
  switch (method) {
    case 'PIX':
      return { ...base, ...(options.pix ? { pix: options.pix } : {}) };
    case 'BOLETO':
      return { ...base, ...(options.dueDate ? { boleto: { dueDate: options.dueDate } } : {}) };
    case 'CREDIT_CARD': {
      const installments = options.installments === undefined ? 2 : options.installments;
      return { ...base, ...(installments === null ? {} : { installments }), card: card('4111111111111111') };
    }
    case 'DEBIT_CARD':
      return { ...base, card: card('5555555555554444'), authentication: authenticationExample() };
  }
}

/**
 * A card sale's row as src/sales/sale-writes.ts writes it (for tests that call the writer itself):
 * one item of the sale's amount, every column a card sale leaves empty null.
 */
export function saleRowExample(sellerId: number, amount: number, at: Date) {
  return {
    given_id: null,
    auth_token: null,
    auth_return_url: null,
    auth_expires_at: null,
    seller_id: sellerId,
    payment_method: 'CREDIT_CARD',
    amount,
    customer_name: 'Maria Silva',
    customer_email: 'maria@example.com',
    customer_document: null,
    customer_phone: null,
    shipping: null,
    postback_url: null,
    installments: null,
    card_brand: null,
    card_last_four: null,
    card_bin: null,
    card_fingerprint: null,
    pix_code: null,
    pix_txid: null,
    pix_expires_at: null,
    pix_charge: null,
    boleto_code: null,
    boleto_barcode: null,
    boleto_due_date: null,
    boleto_pdf_url: null,
    boleto_pix_code: null,
    boleto_charge: null,
    next_check_at: null,
    external_id: null,
    provider_data: null,
    provider: 'sandbox',
    account: 'sandbox',
    at,
    items: [{ title: 'Curso', unit_price: amount, quantity: 1, tangible: false }],
  };
}
