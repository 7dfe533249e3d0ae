import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { saoPauloDate } from '../../src/domain/calendar.ts';
import { parseDocument } from '../../src/domain/documents.ts';
import { type SaleRequest, type SaleRequestResult, validateSaleRequest } from '../../src/domain/sale-request.ts';
import { PAYMENT_METHODS } from '../../src/domain/transaction-states.ts';
import { authenticationExample } from '../helpers/fixtures.ts';

const NOW = new Date('2026-11-21T12:00:00Z'); // 2026-11-21 09:00 in São Paulo

// CONTRACT §4, verbatim.
const pixBody = () => ({
  amount: 15000,
  paymentMethod: 'PIX',
  customer: { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725', phone: '11987654321' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
  postbackUrl: 'https://seller.example/postback',
  pix: { expiresInSeconds: 3600 },
});

const cardBody = () => ({
  amount: 16000,
  paymentMethod: 'CREDIT_CARD',
  customer: { name: 'Maria Silva', email: 'maria@example.com' },
  items: [{ title: 'Camiseta', unitPrice: 15000, quantity: 1, tangible: true }],
  installments: 3,
  card: { number: '4111111111111111', holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: 2030, cvv: '123' },
  shipping: {
    street: 'Rua A',
    number: '10',
    complement: null,
    neighborhood: 'Centro',
    city: 'São Paulo',
    state: 'SP',
    zipCode: '01001000',
    fee: 1000,
  },
});

const boletoBody = () => ({
  amount: 25000,
  paymentMethod: 'BOLETO',
  customer: { name: 'Loja Exemplo Ltda', email: 'financeiro@loja.example', document: '11.222.333/0001-81' },
  items: [{ title: 'Consultoria', unitPrice: 12500, quantity: 2, tangible: false }],
  boleto: { dueDate: '2026-12-31' },
});

type Body = Record<string, unknown>;

/** A deep copy of `body` with `path` (dotted) set to `value`, or deleted when `value` is DELETE. */
const DELETE = Symbol('delete');
function withPath(body: Body, path: string, value: unknown): Body {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let target: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  const last = keys[keys.length - 1]!;
  if (value === DELETE) delete target[last];
  else target[last] = value;
  return copy;
}

const fields = (r: SaleRequestResult): string[] => (r.ok ? [] : r.refusal.details!.map((e) => e.field));
const sale = (r: SaleRequestResult): SaleRequest => {
  assert.ok(r.ok, `expected ok, got ${JSON.stringify(r)}`);
  return r.value;
};

test('CONTRACT §4 PIX example is valid and normalised', () => {
  assert.deepStrictEqual(sale(validateSaleRequest(pixBody(), NOW)), {
    amount: 15000,
    paymentMethod: 'PIX',
    customer: { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725', phone: '11987654321' },
    items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
    postbackUrl: 'https://seller.example/postback',
    installments: null,
    card: null,
    shipping: null,
    pix: { expiresInSeconds: 3600 },
    boleto: null,
    authentication: null,
  });
});

test('CONTRACT §4 credit-card example is valid: card without CVV, installments 3, shipping kept', () => {
  const s = sale(validateSaleRequest(cardBody(), NOW));
  assert.deepStrictEqual(s, {
    amount: 16000,
    paymentMethod: 'CREDIT_CARD',
    customer: { name: 'Maria Silva', email: 'maria@example.com', document: null, phone: null },
    items: [{ title: 'Camiseta', unitPrice: 15000, quantity: 1, tangible: true }],
    postbackUrl: null,
    installments: 3,
    authentication: null,
    card: {
      number: '4111111111111111',
      holderName: 'MARIA SILVA',
      expirationMonth: 12,
      expirationYear: 2030,
      brand: 'VISA',
      lastFour: '1111',
      bin: '411111',
    },
    shipping: {
      street: 'Rua A',
      number: '10',
      complement: null,
      neighborhood: 'Centro',
      city: 'São Paulo',
      state: 'SP',
      zipCode: '01001000',
      fee: 1000,
    },
    pix: null,
    boleto: null,
  });
  assert.ok(!('cvv' in s.card!));
  assert.ok(!JSON.stringify(s).includes('"123"'));
});

test('boleto example: document normalised, explicit due date kept', () => {
  const s = sale(validateSaleRequest(boletoBody(), NOW));
  assert.equal(s.customer.document, '11222333000181');
  assert.deepStrictEqual(s.boleto, { dueDate: '2026-12-31' });
  assert.equal(s.installments, null);
  assert.equal(s.pix, null);
  assert.equal(s.card, null);
});

test('defaults: installments 1, pix 3600 when absent or {}, pix null expiry kept, boleto today + 3', () => {
  assert.equal(sale(validateSaleRequest(withPath(cardBody(), 'installments', DELETE), NOW)).installments, 1);
  assert.equal(sale(validateSaleRequest(withPath(cardBody(), 'installments', null), NOW)).installments, 1);
  assert.deepStrictEqual(sale(validateSaleRequest(withPath(pixBody(), 'pix', DELETE), NOW)).pix, { expiresInSeconds: 3600 });
  assert.deepStrictEqual(sale(validateSaleRequest(withPath(pixBody(), 'pix', {}), NOW)).pix, { expiresInSeconds: 3600 });
  assert.deepStrictEqual(sale(validateSaleRequest(withPath(pixBody(), 'pix', null), NOW)).pix, { expiresInSeconds: 3600 });
  assert.deepStrictEqual(sale(validateSaleRequest(withPath(pixBody(), 'pix.expiresInSeconds', null), NOW)).pix, { expiresInSeconds: null });
  assert.deepStrictEqual(sale(validateSaleRequest(withPath(boletoBody(), 'boleto', DELETE), NOW)).boleto, { dueDate: '2026-11-24' });
  assert.deepStrictEqual(sale(validateSaleRequest(withPath(boletoBody(), 'boleto', {}), NOW)).boleto, { dueDate: '2026-11-24' });
  assert.deepStrictEqual(sale(validateSaleRequest(withPath(boletoBody(), 'boleto.dueDate', null), NOW)).boleto, { dueDate: '2026-11-24' });
});

test('other valid shapes: debit card, alphanumeric CNPJ, punctuated CPF, complement string, digital sale with shipping, http URL', () => {
  const debit: Record<string, unknown> = { ...withPath(cardBody(), 'paymentMethod', 'DEBIT_CARD'), authentication: authenticationExample() };
  delete debit.installments;
  const d = sale(validateSaleRequest(debit, NOW));
  assert.equal(d.installments, null);
  assert.equal(d.card?.brand, 'VISA');
  assert.equal(sale(validateSaleRequest(withPath(pixBody(), 'customer.document', '12abc34501de35'), NOW)).customer.document, '12ABC34501DE35');
  assert.equal(sale(validateSaleRequest(withPath(pixBody(), 'customer.document', '529.982.247-25'), NOW)).customer.document, '52998224725');
  assert.equal(sale(validateSaleRequest(withPath(cardBody(), 'shipping.complement', 'Apto 12'), NOW)).shipping?.complement, 'Apto 12');
  assert.equal(sale(validateSaleRequest(withPath(cardBody(), 'shipping.complement', DELETE), NOW)).shipping?.complement, null);
  assert.equal(sale(validateSaleRequest(withPath(pixBody(), 'postbackUrl', null), NOW)).postbackUrl, null);
  assert.equal(
    sale(validateSaleRequest(withPath(pixBody(), 'postbackUrl', 'http://127.0.0.1:8080/cb?x=1'), NOW)).postbackUrl,
    'http://127.0.0.1:8080/cb?x=1',
  );
  // A digital sale may carry shipping; the fee then counts in the total.
  const digital = withPath(withPath(pixBody(), 'shipping', cardBody().shipping), 'amount', 16000);
  assert.equal(sale(validateSaleRequest(digital, NOW)).shipping?.fee, 1000);
  // Amex takes a 4-digit CVV; a card, items and amounts at their limits.
  const amex = withPath(withPath(cardBody(), 'card.number', '378282246310005'), 'card.cvv', '1234');
  assert.equal(sale(validateSaleRequest(amex, NOW)).card?.brand, 'AMEX');
  const many = withPath(
    withPath(
      pixBody(),
      'items',
      Array.from({ length: 100 }, () => ({ title: 'x', unitPrice: 1, quantity: 1, tangible: false })),
    ),
    'amount',
    100,
  );
  assert.equal(sale(validateSaleRequest(many, NOW)).items.length, 100);
  const top = withPath(withPath(pixBody(), 'items.0.unitPrice', 999_999), 'items.0.quantity', 10_000);
  assert.equal(sale(validateSaleRequest(withPath(top, 'amount', 9_999_990_000), NOW)).amount, 9_999_990_000);
  assert.equal(sale(validateSaleRequest(withPath(pixBody(), 'customer.phone', '1133334444'), NOW)).customer.phone, '1133334444');
});

test('non-object bodies give exactly one error on body', () => {
  for (const body of [null, undefined, [], [pixBody()], 'x', 15000, true, new Date(), new Map(), Object.create({ amount: 15000 })]) {
    const r = validateSaleRequest(body, NOW);
    assert.deepStrictEqual(fields(r), ['body'], String(body));
  }
});

// One violation at a time: [base, path, value, the single field expected in errors].
const CASES: [name: string, base: () => Body, path: string, value: unknown, field: string][] = [
  ['amount as a string', pixBody, 'amount', '15000', 'amount'],
  ['amount a float', pixBody, 'amount', 15000.5, 'amount'],
  ['amount below 100', pixBody, 'amount', 99, 'amount'],
  ['amount above boleto limit', pixBody, 'amount', 10_000_000_000, 'amount'],
  ['amount negative', pixBody, 'amount', -15000, 'amount'],
  ['amount unsafe', pixBody, 'amount', 2 ** 53, 'amount'],
  ['amount NaN', pixBody, 'amount', NaN, 'amount'],
  ['amount missing', pixBody, 'amount', DELETE, 'amount'],
  ['amount null', pixBody, 'amount', null, 'amount'],
  ['amount not the sum', pixBody, 'amount', 15001, 'amount'],
  ['amount ignores shipping fee', cardBody, 'amount', 15000, 'amount'],
  ['paymentMethod lower case', pixBody, 'paymentMethod', 'pix', 'paymentMethod'],
  ['paymentMethod unknown', pixBody, 'paymentMethod', 'CASH', 'paymentMethod'],
  ['paymentMethod number', pixBody, 'paymentMethod', 1, 'paymentMethod'],
  ['paymentMethod missing', pixBody, 'paymentMethod', DELETE, 'paymentMethod'],
  ['customer missing', pixBody, 'customer', DELETE, 'customer'],
  ['customer string', pixBody, 'customer', 'Maria', 'customer'],
  ['customer array', pixBody, 'customer', [], 'customer'],
  ['customer.name empty', pixBody, 'customer.name', '', 'customer.name'],
  ['customer.name blank', pixBody, 'customer.name', '   ', 'customer.name'],
  ['customer.name too long', pixBody, 'customer.name', 'a'.repeat(201), 'customer.name'],
  ['customer.name number', pixBody, 'customer.name', 5, 'customer.name'],
  ['customer.name missing', pixBody, 'customer.name', DELETE, 'customer.name'],
  ['customer.email no domain dot', pixBody, 'customer.email', 'maria@example', 'customer.email'],
  ['customer.email no at', pixBody, 'customer.email', 'maria.example.com', 'customer.email'],
  ['customer.email trailing space', pixBody, 'customer.email', 'maria@example.com ', 'customer.email'],
  [
    'customer.email too long (255)',
    pixBody,
    'customer.email',
    `${'a'.repeat(60)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(11)}`,
    'customer.email',
  ],
  ['customer.email missing', pixBody, 'customer.email', DELETE, 'customer.email'],
  ['customer.document bad CPF', pixBody, 'customer.document', '52998224724', 'customer.document'],
  ['customer.document all equal', pixBody, 'customer.document', '11111111111', 'customer.document'],
  ['customer.document number', pixBody, 'customer.document', 52998224725, 'customer.document'],
  ['customer.document empty', pixBody, 'customer.document', '', 'customer.document'],
  ['customer.document missing on BOLETO', boletoBody, 'customer.document', DELETE, 'customer.document'],
  ['customer.document null on BOLETO', boletoBody, 'customer.document', null, 'customer.document'],
  ['customer.phone 9 digits', pixBody, 'customer.phone', '119876543', 'customer.phone'],
  ['customer.phone 12 digits', pixBody, 'customer.phone', '119876543210', 'customer.phone'],
  ['customer.phone punctuated', pixBody, 'customer.phone', '(11) 98765-4321', 'customer.phone'],
  ['customer.phone number', pixBody, 'customer.phone', 11987654321, 'customer.phone'],
  ['items empty', pixBody, 'items', [], 'items'],
  ['items object', pixBody, 'items', { 0: {} }, 'items'],
  ['items missing', pixBody, 'items', DELETE, 'items'],
  ['items over 100', pixBody, 'items', Array.from({ length: 101 }, () => ({ title: 'x', unitPrice: 1, quantity: 1, tangible: false })), 'items'],
  ['items.0 string', pixBody, 'items.0', 'Curso', 'items.0'],
  ['items.0 null', pixBody, 'items.0', null, 'items.0'],
  ['items.0.title empty', pixBody, 'items.0.title', '', 'items.0.title'],
  ['items.0.title too long', pixBody, 'items.0.title', 'x'.repeat(256), 'items.0.title'],
  ['items.0.title number', pixBody, 'items.0.title', 1, 'items.0.title'],
  ['items.0.unitPrice zero', pixBody, 'items.0.unitPrice', 0, 'items.0.unitPrice'],
  ['items.0.unitPrice float', pixBody, 'items.0.unitPrice', 150.5, 'items.0.unitPrice'],
  ['items.0.unitPrice string', pixBody, 'items.0.unitPrice', '15000', 'items.0.unitPrice'],
  ['items.0.quantity zero', pixBody, 'items.0.quantity', 0, 'items.0.quantity'],
  ['items.0.quantity over 10000', pixBody, 'items.0.quantity', 10_001, 'items.0.quantity'],
  ['items.0.quantity float', pixBody, 'items.0.quantity', 1.5, 'items.0.quantity'],
  ['items.0.tangible string', pixBody, 'items.0.tangible', 'false', 'items.0.tangible'],
  ['items.0.tangible number', pixBody, 'items.0.tangible', 0, 'items.0.tangible'],
  ['items.0.tangible missing', pixBody, 'items.0.tangible', DELETE, 'items.0.tangible'],
  ['shipping missing for a tangible item', pixBody, 'items.0.tangible', true, 'shipping'],
  ['shipping missing on card example', cardBody, 'shipping', DELETE, 'shipping'],
  ['shipping null on card example', cardBody, 'shipping', null, 'shipping'],
  ['shipping string', cardBody, 'shipping', 'Rua A, 10', 'shipping'],
  ['shipping array', cardBody, 'shipping', [], 'shipping'],
  ['shipping on a digital sale still validated', pixBody, 'shipping', { ...cardBody().shipping, number: '' }, 'shipping.number'],
  ['shipping.street empty', cardBody, 'shipping.street', '', 'shipping.street'],
  ['shipping.number too long', cardBody, 'shipping.number', '1'.repeat(21), 'shipping.number'],
  ['shipping.number as number', cardBody, 'shipping.number', 10, 'shipping.number'],
  ['shipping.complement number', cardBody, 'shipping.complement', 5, 'shipping.complement'],
  ['shipping.complement too long', cardBody, 'shipping.complement', 'x'.repeat(201), 'shipping.complement'],
  ['shipping.neighborhood missing', cardBody, 'shipping.neighborhood', DELETE, 'shipping.neighborhood'],
  ['shipping.city too long', cardBody, 'shipping.city', 'x'.repeat(101), 'shipping.city'],
  ['shipping.state lower case', cardBody, 'shipping.state', 'sp', 'shipping.state'],
  ['shipping.state three letters', cardBody, 'shipping.state', 'SPX', 'shipping.state'],
  ['shipping.zipCode punctuated', cardBody, 'shipping.zipCode', '01001-000', 'shipping.zipCode'],
  ['shipping.zipCode 7 digits', cardBody, 'shipping.zipCode', '0100100', 'shipping.zipCode'],
  ['shipping.zipCode number', cardBody, 'shipping.zipCode', 1001000, 'shipping.zipCode'],
  ['shipping.fee negative', cardBody, 'shipping.fee', -1, 'shipping.fee'],
  ['shipping.fee float', cardBody, 'shipping.fee', 10.5, 'shipping.fee'],
  ['shipping.fee string', cardBody, 'shipping.fee', '1000', 'shipping.fee'],
  ['shipping.fee missing', cardBody, 'shipping.fee', DELETE, 'shipping.fee'],
  ['postbackUrl ftp', pixBody, 'postbackUrl', 'ftp://seller.example/x', 'postbackUrl'],
  ['postbackUrl not a URL', pixBody, 'postbackUrl', 'not a url', 'postbackUrl'],
  ['postbackUrl relative', pixBody, 'postbackUrl', '/postback', 'postbackUrl'],
  ['postbackUrl scheme without slashes', pixBody, 'postbackUrl', 'http:seller.example', 'postbackUrl'],
  ['postbackUrl javascript', pixBody, 'postbackUrl', 'javascript:alert(1)', 'postbackUrl'],
  ['postbackUrl credentials', pixBody, 'postbackUrl', 'https://user:pw@seller.example/cb', 'postbackUrl'],
  ['postbackUrl user only', pixBody, 'postbackUrl', 'https://user@seller.example/cb', 'postbackUrl'],
  ['postbackUrl with a space', pixBody, 'postbackUrl', 'https://seller.example/a b', 'postbackUrl'],
  ['postbackUrl too long', pixBody, 'postbackUrl', `https://seller.example/${'a'.repeat(2048)}`, 'postbackUrl'],
  ['postbackUrl number', pixBody, 'postbackUrl', 5, 'postbackUrl'],
  ['installments 0', cardBody, 'installments', 0, 'installments'],
  ['installments 13', cardBody, 'installments', 13, 'installments'],
  ['installments float', cardBody, 'installments', 1.5, 'installments'],
  ['installments string', cardBody, 'installments', '3', 'installments'],
  ['installments on PIX', pixBody, 'installments', 1, 'installments'],
  ['installments on BOLETO', boletoBody, 'installments', 2, 'installments'],
  ['card missing on CREDIT_CARD', cardBody, 'card', DELETE, 'card'],
  ['card null on CREDIT_CARD', cardBody, 'card', null, 'card'],
  ['card string', cardBody, 'card', '4111111111111111', 'card'],
  ['card on PIX', pixBody, 'card', cardBody().card, 'card'],
  ['card on BOLETO', boletoBody, 'card', {}, 'card'],
  ['card.number Luhn', cardBody, 'card.number', '4111111111111112', 'card.number'],
  ['card.number as number', cardBody, 'card.number', 4111111111111111, 'card.number'],
  ['card.number with spaces', cardBody, 'card.number', '4111 1111 1111 1111', 'card.number'],
  ['card.number missing', cardBody, 'card.number', DELETE, 'card.number'],
  ['card.holderName empty', cardBody, 'card.holderName', '', 'card.holderName'],
  ['card.holderName number', cardBody, 'card.holderName', 5, 'card.holderName'],
  ['card.expirationMonth 13', cardBody, 'card.expirationMonth', 13, 'card.expirationMonth'],
  ['card.expirationMonth string', cardBody, 'card.expirationMonth', '12', 'card.expirationMonth'],
  ['card.expirationYear past', cardBody, 'card.expirationYear', 2020, 'card.expirationYear'],
  ['card.expirationYear string', cardBody, 'card.expirationYear', '2030', 'card.expirationYear'],
  ['card expired last month', cardBody, 'card', { ...cardBody().card, expirationMonth: 10, expirationYear: 2026 }, 'card.expirationMonth'],
  ['card.cvv 2 digits', cardBody, 'card.cvv', '12', 'card.cvv'],
  ['card.cvv number', cardBody, 'card.cvv', 123, 'card.cvv'],
  ['card.cvv missing', cardBody, 'card.cvv', DELETE, 'card.cvv'],
  ['pix string', pixBody, 'pix', '3600', 'pix'],
  ['pix array', pixBody, 'pix', [], 'pix'],
  ['pix on CREDIT_CARD', cardBody, 'pix', { expiresInSeconds: 3600 }, 'pix'],
  ['pix.expiresInSeconds 59', pixBody, 'pix.expiresInSeconds', 59, 'pix.expiresInSeconds'],
  ['pix.expiresInSeconds over a year', pixBody, 'pix.expiresInSeconds', 31_536_001, 'pix.expiresInSeconds'],
  ['pix.expiresInSeconds string', pixBody, 'pix.expiresInSeconds', '3600', 'pix.expiresInSeconds'],
  ['pix.expiresInSeconds float', pixBody, 'pix.expiresInSeconds', 3600.5, 'pix.expiresInSeconds'],
  ['boleto on PIX', pixBody, 'boleto', { dueDate: '2026-12-31' }, 'boleto'],
  ['boleto string', boletoBody, 'boleto', '2026-12-31', 'boleto'],
  ['boleto.dueDate not a date', boletoBody, 'boleto.dueDate', '2026-02-30', 'boleto.dueDate'],
  ['boleto.dueDate slashes', boletoBody, 'boleto.dueDate', '2026/12/31', 'boleto.dueDate'],
  ['boleto.dueDate with time', boletoBody, 'boleto.dueDate', '2026-12-31T00:00:00Z', 'boleto.dueDate'],
  ['boleto.dueDate yesterday', boletoBody, 'boleto.dueDate', '2026-11-20', 'boleto.dueDate'],
  ['boleto.dueDate number', boletoBody, 'boleto.dueDate', 20261231, 'boleto.dueDate'],
];

for (const [name, base, path, value, field] of CASES) {
  test(`one violation: ${name} → ${field}`, () => {
    const r = validateSaleRequest(withPath(base(), path, value), NOW);
    assert.deepStrictEqual(fields(r), [field], JSON.stringify(r));
    assert.ok(!r.ok && r.refusal.details!.every((e) => typeof e.message === 'string' && e.message.length > 0));
  });
}

test('DEBIT_CARD refuses Amex on card.number and installments', () => {
  const amexDebit = withPath(
    withPath(withPath(withPath(cardBody(), 'paymentMethod', 'DEBIT_CARD'), 'card.number', '378282246310005'), 'card.cvv', '1234'),
    'authentication',
    authenticationExample(),
  );
  assert.deepStrictEqual(fields(validateSaleRequest(withPath(amexDebit, 'installments', DELETE), NOW)), ['card.number']);
  const visaDebit = withPath(withPath(cardBody(), 'paymentMethod', 'DEBIT_CARD'), 'authentication', authenticationExample());
  assert.deepStrictEqual(fields(validateSaleRequest(visaDebit, NOW)), ['installments']);
});

test('amount mismatch message gives the expected sum', () => {
  const r = validateSaleRequest(withPath(cardBody(), 'amount', 15000), NOW);
  assert.ok(!r.ok);
  assert.match(r.refusal.details![0]!.message, /expected 16000/);
});

test('amount sum uses exact arithmetic past 2^53', () => {
  // The largest unit price, quantity and item count: a sum of 9,999,999,999,000,000 cents, past 2^53.
  const items = Array.from({ length: 100 }, () => ({ title: 'x', unitPrice: 9_999_999_999, quantity: 10_000, tangible: false }));
  const r = validateSaleRequest(withPath(withPath(pixBody(), 'items', items), 'amount', 9_999_999_999), NOW);
  assert.deepStrictEqual(fields(r), ['amount']);
  assert.ok(!r.ok && r.refusal.details![0]!.message.includes((9_999_999_999n * 1_000_000n).toString()), 'the exact expected sum is quoted');
});

test('several violations at once are all reported', () => {
  const body: Body = {
    amount: '15000',
    paymentMethod: 'PIX',
    customer: { name: '', email: 'nope', document: '123', phone: 'abc' },
    items: [{ title: 'Ok', unitPrice: 0, quantity: 1, tangible: true }, 'junk'],
    postbackUrl: 'ftp://x',
    card: {},
    installments: 2,
    boleto: {},
    pix: { expiresInSeconds: 1 },
  };
  assert.deepStrictEqual(
    new Set(fields(validateSaleRequest(body, NOW))),
    new Set([
      'amount',
      'customer.name',
      'customer.email',
      'customer.document',
      'customer.phone',
      'items.0.unitPrice',
      'items.1',
      'shipping',
      'postbackUrl',
      'card',
      'installments',
      'pix.expiresInSeconds',
      'boleto',
    ]),
  );
});

test('card type errors and validateCard errors are merged without duplicates', () => {
  const r = validateSaleRequest(
    withPath(cardBody(), 'card', { number: 4111111111111111, holderName: '', expirationMonth: '12', expirationYear: 2030, cvv: 123 }),
    NOW,
  );
  assert.deepStrictEqual(fields(r).sort(), ['card.cvv', 'card.expirationMonth', 'card.holderName', 'card.number']);
  assert.ok(!r.ok && r.refusal.details!.find((e) => e.field === 'card.number')?.message === 'must be a string');
});

test('an unknown payment method skips the method rules instead of guessing', () => {
  assert.deepStrictEqual(fields(validateSaleRequest(withPath(cardBody(), 'paymentMethod', 'CASH'), NOW)), ['paymentMethod']);
});

test('unknown fields are ignored; a __proto__ key neither pollutes nor supplies values', () => {
  const body = JSON.parse(
    '{"__proto__": {"installments": 5, "card": {"number": "x"}}, "constructor": 1, "extra": [1,2,3], "amount": 15000, "paymentMethod": "PIX",' +
      '"customer": {"__proto__": {"document": "bad"}, "name": "Maria", "email": "m@example.com"},' +
      '"items": [{"title": "Curso", "unitPrice": 15000, "quantity": 1, "tangible": false, "sku": "C-1"}]}',
  ) as unknown;
  const s = sale(validateSaleRequest(body, NOW));
  assert.equal(s.installments, null);
  assert.equal(s.customer.document, null);
  assert.deepStrictEqual(s.items[0], { title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false });
  assert.equal(Object.getPrototypeOf(s), Object.prototype);
  assert.equal(({} as Record<string, unknown>).installments, undefined);
});

test('a polluted Object.prototype does not supply missing fields', () => {
  Object.defineProperty(Object.prototype, 'postbackUrl', { value: 'ftp://evil', configurable: true, writable: true });
  Object.defineProperty(Object.prototype, 'phone', { value: 'x', configurable: true, writable: true });
  try {
    const body = withPath(pixBody(), 'postbackUrl', DELETE);
    delete (body.customer as Body).phone;
    const s = sale(validateSaleRequest(body, NOW));
    assert.equal(s.postbackUrl, null);
    assert.equal(s.customer.phone, null);
  } finally {
    delete (Object.prototype as Record<string, unknown>).postbackUrl;
    delete (Object.prototype as Record<string, unknown>).phone;
  }
});

test('getters are never run and sparse item arrays are refused', () => {
  const body = pixBody() as Body;
  Object.defineProperty(body, 'postbackUrl', {
    get() {
      throw new Error('boom');
    },
    enumerable: true,
  });
  assert.equal(sale(validateSaleRequest(body, NOW)).postbackUrl, null);
  // biome-ignore lint/suspicious/noSparseArray: the hole is what this test sends
  const sparse = withPath(pixBody(), 'items', [, { title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }]);
  assert.deepStrictEqual(fields(validateSaleRequest(sparse, NOW)), ['items.0']);
});

test('saoPauloDate: UTC−3, so 02:00Z is still the day before', () => {
  assert.equal(saoPauloDate(new Date('2026-11-21T02:00:00Z')), '2026-11-20');
  assert.equal(saoPauloDate(new Date('2026-11-21T02:59:59.999Z')), '2026-11-20');
  assert.equal(saoPauloDate(new Date('2026-11-21T03:00:00Z')), '2026-11-21');
  assert.equal(saoPauloDate(new Date('2027-01-01T01:00:00Z')), '2026-12-31');
  assert.equal(saoPauloDate(NOW), '2026-11-21');
});

test('boleto default and "today or later" follow the São Paulo date around midnight UTC', () => {
  const lateEvening = new Date('2026-11-21T02:00:00Z'); // 2026-11-20 23:00 in São Paulo
  const noBoleto = withPath(boletoBody(), 'boleto', DELETE);
  assert.deepStrictEqual(sale(validateSaleRequest(noBoleto, lateEvening)).boleto, { dueDate: '2026-11-23' });
  const dueThe20th = withPath(boletoBody(), 'boleto.dueDate', '2026-11-20');
  assert.deepStrictEqual(sale(validateSaleRequest(dueThe20th, lateEvening)).boleto, { dueDate: '2026-11-20' });
  assert.deepStrictEqual(fields(validateSaleRequest(dueThe20th, new Date('2026-11-21T03:00:00Z'))), ['boleto.dueDate']);
  assert.deepStrictEqual(sale(validateSaleRequest(withPath(boletoBody(), 'boleto.dueDate', '2026-11-21'), NOW)).boleto, { dueDate: '2026-11-21' });
});

test('boleto default crosses month, year and leap day by calendar', () => {
  const noBoleto = withPath(boletoBody(), 'boleto', DELETE);
  const at = (iso: string) => sale(validateSaleRequest(noBoleto, new Date(iso))).boleto?.dueDate;
  assert.equal(at('2026-12-30T12:00:00Z'), '2027-01-02');
  assert.equal(at('2028-02-27T12:00:00Z'), '2028-03-01');
  assert.equal(at('2027-02-27T12:00:00Z'), '2027-03-02');
  assert.equal(at('2029-01-01T02:00:00Z'), '2029-01-03'); // still 2028-12-31 in São Paulo
  assert.deepStrictEqual(sale(validateSaleRequest(withPath(boletoBody(), 'boleto.dueDate', '2028-02-29'), NOW)).boleto, { dueDate: '2028-02-29' });
  assert.deepStrictEqual(fields(validateSaleRequest(withPath(boletoBody(), 'boleto.dueDate', '2027-02-29'), NOW)), ['boleto.dueDate']);
});

// ---------- junk sweep ----------

const HUGE = 'x'.repeat(100_000);
const HUGE_DIGITS = '4'.repeat(100_000);

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    undefined,
    true,
    false,
    0,
    -0,
    -1,
    -15000,
    1.5,
    99.99,
    NaN,
    Infinity,
    -Infinity,
    2 ** 53,
    Number.MAX_VALUE,
    '',
    ' ',
    'NaN',
    'Infinity',
    '-1',
    '1e3',
    '15000',
    '0x10',
    'null',
    'true',
    '{}',
    '[]',
    HUGE,
    HUGE_DIGITS,
    `${HUGE}@example.com`,
    `https://${HUGE}.com`,
    '__proto__',
    'PIX',
    'CREDIT_CARD',
    'BOLETO',
    '2026-11-21',
    '52998224725',
    [],
    {},
    [[[[[]]]]],
    { a: { b: { c: { d: {} } } } },
    Object.create(null),
    JSON.parse('{"__proto__": {"x": 1}}'),
    new Date(0),
    10n,
    Symbol('s'),
    () => 1,
  ),
  fc.integer(),
  fc.double(),
  fc.string(),
  fc.anything({ maxDepth: 3 }),
);

const validBody = fc.constantFrom(pixBody, cardBody, boletoBody).map((f) => f() as Body);

const PATHS = [
  'amount',
  'paymentMethod',
  'customer',
  'customer.name',
  'customer.email',
  'customer.document',
  'customer.phone',
  'items',
  'items.0',
  'items.0.title',
  'items.0.unitPrice',
  'items.0.quantity',
  'items.0.tangible',
  'postbackUrl',
  'installments',
  'card',
  'card.number',
  'card.holderName',
  'card.expirationMonth',
  'card.expirationYear',
  'card.cvv',
  'shipping',
  'shipping.fee',
  'shipping.state',
  'shipping.zipCode',
  'shipping.complement',
  'pix',
  'pix.expiresInSeconds',
  'boleto',
  'boleto.dueDate',
  '__proto__',
  'constructor',
];

/** Sets `path` without structuredClone (junk may hold symbols and functions); missing parents become objects. */
function mutate(body: Body, path: string, value: unknown): Body {
  const keys = path.split('.');
  let target: Record<string, unknown> = body;
  for (const key of keys.slice(0, -1)) {
    const next = target[key];
    if (typeof next !== 'object' || next === null) target[key] = {};
    target = target[key] as Record<string, unknown>;
  }
  Object.defineProperty(target, keys[keys.length - 1]!, { value, enumerable: true, writable: true, configurable: true });
  return body;
}

const mutatedBody = fc
  .tuple(validBody, fc.array(fc.tuple(fc.constantFrom(...PATHS), junk), { minLength: 1, maxLength: 4 }))
  .map(([body, edits]) => edits.reduce((b, [path, value]) => mutate(b, path, value), body));

const SWEEP_NOW = NOW;

/** Everything a caller may rely on in an ok result. */
function assertWellFormed(s: SaleRequest): void {
  assert.ok(Number.isSafeInteger(s.amount) && s.amount >= 100 && s.amount <= 9_999_999_999);
  assert.ok((PAYMENT_METHODS as readonly string[]).includes(s.paymentMethod));
  assert.ok(typeof s.customer.name === 'string' && s.customer.name.trim() !== '');
  assert.ok(typeof s.customer.email === 'string' && s.customer.email.includes('@'));
  if (s.customer.document !== null) {
    const parsed = parseDocument(s.customer.document);
    assert.ok(parsed.ok && parsed.value === s.customer.document, 'document is stored normalised');
  }
  if (s.paymentMethod === 'BOLETO') assert.ok(s.customer.document !== null);
  assert.ok(s.customer.phone === null || /^\d{10,11}$/.test(s.customer.phone));
  assert.ok(s.items.length >= 1 && s.items.length <= 100);
  let sum = BigInt(s.shipping?.fee ?? 0);
  for (const it of s.items) {
    assert.ok(Number.isSafeInteger(it.unitPrice) && it.unitPrice >= 1);
    assert.ok(Number.isSafeInteger(it.quantity) && it.quantity >= 1 && it.quantity <= 10_000);
    assert.equal(typeof it.tangible, 'boolean');
    sum += BigInt(it.unitPrice) * BigInt(it.quantity);
  }
  assert.equal(sum, BigInt(s.amount));
  if (s.items.some((it) => it.tangible)) assert.ok(s.shipping !== null);
  if (s.shipping) assert.ok(/^[A-Z]{2}$/.test(s.shipping.state) && /^\d{8}$/.test(s.shipping.zipCode));
  const isCard = s.paymentMethod === 'CREDIT_CARD' || s.paymentMethod === 'DEBIT_CARD';
  assert.equal(s.card !== null, isCard);
  if (s.card) assert.ok(!('cvv' in s.card) && /^\d{12,19}$/.test(s.card.number) && s.card.lastFour === s.card.number.slice(-4));
  assert.equal(s.installments !== null, s.paymentMethod === 'CREDIT_CARD');
  if (s.installments !== null) assert.ok(Number.isSafeInteger(s.installments) && s.installments >= 1 && s.installments <= 12);
  assert.equal(s.pix !== null, s.paymentMethod === 'PIX');
  assert.equal(s.boleto !== null, s.paymentMethod === 'BOLETO');
  if (s.boleto) assert.ok(/^\d{4}-\d{2}-\d{2}$/.test(s.boleto.dueDate) && s.boleto.dueDate >= saoPauloDate(SWEEP_NOW));
  assert.ok(s.postbackUrl === null || /^https?:\/\//i.test(s.postbackUrl));
  // Plain JSON data: no undefined, no -0, nothing JSON would change.
  assert.deepStrictEqual(JSON.parse(JSON.stringify(s)), s);
}

function assertResultShape(r: SaleRequestResult): void {
  if (r.ok) {
    assertWellFormed(r.value);
    return;
  }
  assert.ok(r.refusal.details!.length > 0);
  for (const e of r.refusal.details!) assert.ok(typeof e.field === 'string' && e.field !== '' && typeof e.message === 'string' && e.message !== '');
}

test('junk sweep: 2500 arbitrary values as the body never throw', () => {
  fc.assert(
    fc.property(fc.oneof(junk, fc.dictionary(fc.constantFrom(...PATHS, 'x'), junk)), (body) => {
      assertResultShape(validateSaleRequest(body, SWEEP_NOW));
    }),
    { seed: 20261121, numRuns: 2500 },
  );
});

test('junk sweep: 3000 valid bodies with junk planted in 1–4 fields never throw and stay well-formed', () => {
  let oks = 0;
  fc.assert(
    fc.property(mutatedBody, (body) => {
      const r = validateSaleRequest(body, SWEEP_NOW);
      assertResultShape(r);
      if (r.ok) oks++;
    }),
    { seed: 42, numRuns: 3000 },
  );
  // Some junk is harmless (an unknown key, null where optional), so a few must still pass.
  assert.ok(oks > 0);
});

test('3-D Secure: authentication required for DEBIT_CARD, optional for CREDIT_CARD, refused elsewhere; each field named', () => {
  const debit = { ...withPath(cardBody(), 'paymentMethod', 'DEBIT_CARD') };
  delete debit.installments;
  assert.deepStrictEqual(fields(validateSaleRequest(debit, NOW)), ['authentication']);
  const given = sale(validateSaleRequest({ ...debit, authentication: authenticationExample() }, NOW));
  assert.deepStrictEqual(given.authentication, authenticationExample());
  assert.equal(sale(validateSaleRequest(cardBody(), NOW)).authentication, null);
  assert.deepStrictEqual(
    sale(validateSaleRequest({ ...cardBody(), authentication: authenticationExample() }, NOW)).authentication,
    authenticationExample(),
  );
  assert.deepStrictEqual(fields(validateSaleRequest({ ...pixBody(), authentication: authenticationExample() }, NOW)), ['authentication']);
  const withAuth = (path: string, value: unknown) =>
    validateSaleRequest(withPath({ ...debit, authentication: authenticationExample() }, path, value), NOW);
  const cases: [string, unknown, string][] = [
    ['authentication.returnUrl', 'http://loja.example.com/volta', 'authentication.returnUrl'],
    ['authentication.returnUrl', 'ftp://loja.example.com/volta', 'authentication.returnUrl'],
    ['authentication.ip', '999.1.1.1', 'authentication.ip'],
    ['authentication.browser.colorDepth', 0, 'authentication.browser.colorDepth'],
    ['authentication.browser.timeZoneOffset', 900, 'authentication.browser.timeZoneOffset'],
    ['authentication.browser.javaEnabled', 'no', 'authentication.browser.javaEnabled'],
    ['authentication.browser.userAgent', DELETE, 'authentication.browser.userAgent'],
    ['authentication.browser', DELETE, 'authentication.browser'],
  ];
  for (const [path, value, field] of cases) assert.deepStrictEqual(fields(withAuth(path, value)), [field], `${path} = ${String(value)}`);
  assert.deepStrictEqual(fields(withAuth('authentication', 'sim')), ['authentication']);
  const several = withPath(
    withPath({ ...debit, authentication: authenticationExample('http://loja.example.com/v') }, 'authentication.ip', 'nope'),
    'authentication.browser.colorDepth',
    0,
  );
  assert.deepStrictEqual(fields(validateSaleRequest(several, NOW)).sort(), [
    'authentication.browser.colorDepth',
    'authentication.ip',
    'authentication.returnUrl',
  ]);
  for (const url of ['http://localhost:8080/volta', 'http://127.0.0.1/volta', 'https://loja.example.com/volta?pedido=1'])
    assert.equal(sale(withAuth('authentication.returnUrl', url)).authentication?.returnUrl, url);
  assert.equal(sale(withAuth('authentication.ip', '2001:db8::7')).authentication?.ip, '2001:db8::7');
});
