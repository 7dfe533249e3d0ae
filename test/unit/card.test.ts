import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import creditCardType from 'credit-card-type';
import { type CardBrand, type CardInput, cardFingerprint, DEBIT_BRANDS, detectBrand, luhnValid, validateCard } from '../../src/domain/card.ts';

const NOW = new Date('2026-05-15T12:00:00Z');

/** Completes a prefix to `length` digits with a valid Luhn check digit. */
function withLuhn(prefix: string, length = 16): string {
  const body = prefix.padEnd(length - 1, '0');
  for (let d = 0; d <= 9; d++) if (luhnValid(body + d)) return body + d;
  throw new Error('unreachable');
}

const card = (over: Partial<CardInput> = {}): CardInput => ({
  number: '4111111111111111',
  holderName: 'MARIA SILVA',
  expirationMonth: 12,
  expirationYear: 2030,
  cvv: '123',
  ...over,
});

const fields = (r: ReturnType<typeof validateCard>): string[] => (r.ok ? [] : r.refusal.details!.map((e) => e.field));

const SAMPLES: [string, CardBrand][] = [
  ['4111111111111111', 'VISA'],
  ['5555555555554444', 'MASTERCARD'],
  ['378282246310005', 'AMEX'],
  ['36490102462661', 'DINERS'],
  ['6362970000457013', 'ELO'],
  ['6062825624254001', 'HIPERCARD'],
];

test('BRAZIL.md Luhn samples pass Luhn and get their brands', () => {
  for (const [number, brand] of SAMPLES) {
    assert.equal(luhnValid(number), true, number);
    assert.equal(detectBrand(number), brand, number);
  }
});

test('Luhn refuses a changed digit, non-digits and empty input', () => {
  for (const [number] of SAMPLES) {
    const last = Number(number.at(-1));
    assert.equal(luhnValid(number.slice(0, -1) + ((last + 1) % 10)), false);
  }
  assert.equal(luhnValid('4111 1111 1111 1111'), false);
  assert.equal(luhnValid(''), false);
  assert.equal(luhnValid('0'), false);
  assert.equal(luhnValid('00'), true);
  assert.equal(luhnValid('79927398713'), true); // the textbook example
});

// BRAZIL.md's Elo table; every BIN in it must come out ELO, including those overlapping Visa (4…) and Discover (65…).
const ELO_RANGES: [number, number][] = [
  [401178, 401179],
  [431274, 431274],
  [438935, 438935],
  [451416, 451416],
  [457393, 457393],
  [457631, 457632],
  [504175, 504175],
  [506699, 506778],
  [509000, 509999],
  [627780, 627780],
  [636297, 636297],
  [636368, 636368],
  [650031, 650033],
  [650035, 650051],
  [650405, 650439],
  [650485, 650538],
  [650541, 650598],
  [650700, 650718],
  [650720, 650727],
  [650901, 650978],
  [651652, 651679],
  [655000, 655019],
  [655021, 655058],
];

test('every Elo BIN of BRAZIL.md is Elo (credit-card-type alone calls 650923 Troy)', () => {
  for (const [from, to] of ELO_RANGES) {
    for (let bin = from; bin <= to; bin++) assert.equal(detectBrand(withLuhn(String(bin))), 'ELO', String(bin));
  }
  assert.equal(detectBrand('4011780000000000'), 'ELO');
  assert.equal(detectBrand(withLuhn('650923')), 'ELO');
});

test('neighbours of the Elo ranges fall back to the library', () => {
  assert.equal(detectBrand(withLuhn('401177')), 'VISA');
  assert.equal(detectBrand(withLuhn('401180')), 'VISA');
  assert.equal(detectBrand(withLuhn('650034')), null); // Discover: not a brand we take
  assert.equal(detectBrand(withLuhn('6011')), null);
});

test("a number's first 8 digits decide the library's answer (what lets detectBrand keep one answer per 8-digit prefix)", () => {
  let seed = 12345;
  const digit = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return String(seed % 10);
  };
  const types = (digits: string) => creditCardType(digits).map((t) => t.type);
  const starts = ['2', '3', '4', '5', '6', '8', '9'];
  for (let i = 0; i < 20_000; i++) {
    let n = starts[i % starts.length]!;
    const length = 12 + (i % 8);
    while (n.length < length) n += digit();
    assert.deepEqual(types(n), types(n.slice(0, 8)), n);
  }
});

test('brand prefixes of BRAZIL.md', () => {
  const cases: [string, CardBrand | null, number?][] = [
    ['4', 'VISA'],
    ['51', 'MASTERCARD'],
    ['55', 'MASTERCARD'],
    ['2221', 'MASTERCARD'],
    ['2720', 'MASTERCARD'],
    ['34', 'AMEX', 15],
    ['37', 'AMEX', 15],
    ['300', 'DINERS', 14],
    ['305', 'DINERS', 14],
    ['36', 'DINERS', 14],
    ['38', 'DINERS', 14],
    ['39', 'DINERS', 14],
    ['606282', 'HIPERCARD'],
    ['2220', null],
    ['2721', null],
    ['306', null, 14],
    ['35', null],
    ['1', null],
    ['9', null],
  ];
  for (const [prefix, brand, length] of cases) assert.equal(detectBrand(withLuhn(prefix, length)), brand, prefix);
  assert.equal(detectBrand('4111-1111-1111-1111'), null);
  assert.equal(detectBrand(''), null);
});

test('a good credit card gives brand, last four and BIN', () => {
  assert.deepEqual(validateCard(card(), 'CREDIT_CARD', NOW), { ok: true, value: { brand: 'VISA', lastFour: '1111', bin: '411111' } });
  assert.deepEqual(validateCard(card({ number: '378282246310005', cvv: '1234' }), 'CREDIT_CARD', NOW), {
    ok: true,
    value: { brand: 'AMEX', lastFour: '0005', bin: '378282' },
  });
  for (const [number, brand] of SAMPLES) {
    const r = validateCard(card({ number, cvv: brand === 'AMEX' ? '1234' : '123' }), 'CREDIT_CARD', NOW);
    assert.ok(r.ok && r.value.brand === brand, number);
  }
});

test('debit only for Visa, Mastercard and Elo', () => {
  assert.deepEqual([...DEBIT_BRANDS], ['VISA', 'MASTERCARD', 'ELO']);
  for (const [number, brand] of SAMPLES) {
    const r = validateCard(card({ number, cvv: brand === 'AMEX' ? '1234' : '123' }), 'DEBIT_CARD', NOW);
    if (DEBIT_BRANDS.includes(brand)) assert.ok(r.ok, number);
    else {
      assert.deepEqual(fields(r), ['card.number'], number);
      assert.ok(!r.ok && r.refusal.details![0]!.message.includes('debit'));
    }
  }
});

test('card number: digits only, 12 to 19, Luhn, known brand', () => {
  for (const number of [
    '4111 1111 1111 1111',
    '4111-1111-1111-1111',
    '41111111111',
    '4'.padEnd(20, '0'),
    '',
    '4111111111111112',
    withLuhn('6011'),
    withLuhn('35'),
  ]) {
    assert.deepEqual(fields(validateCard(card({ number }), 'CREDIT_CARD', NOW)), ['card.number'], number);
  }
  assert.deepEqual(fields(validateCard(card({ number: 4111111111111111 as unknown as string }), 'CREDIT_CARD', NOW)), ['card.number']);
});

test('expiry: valid through the end of its month, in UTC', () => {
  const may = { expirationMonth: 5, expirationYear: 2026 };
  assert.ok(validateCard(card(may), 'CREDIT_CARD', NOW).ok);
  assert.ok(validateCard(card(may), 'CREDIT_CARD', new Date('2026-05-31T23:59:59.999Z')).ok);
  assert.deepEqual(fields(validateCard(card(may), 'CREDIT_CARD', new Date('2026-06-01T00:00:00Z'))), ['card.expirationMonth']);
  assert.deepEqual(fields(validateCard(card({ expirationMonth: 4, expirationYear: 2026 }), 'CREDIT_CARD', NOW)), ['card.expirationMonth']);
  assert.deepEqual(fields(validateCard(card({ expirationMonth: 12, expirationYear: 2025 }), 'CREDIT_CARD', NOW)), ['card.expirationYear']);
  // December rolls over to January of the next year.
  assert.ok(validateCard(card({ expirationMonth: 12, expirationYear: 2026 }), 'CREDIT_CARD', new Date('2026-12-31T23:00:00Z')).ok);
});

test('expiry fields must be integers in range', () => {
  for (const expirationMonth of [0, 13, 1.5, Number.NaN, '12' as unknown as number]) {
    assert.deepEqual(fields(validateCard(card({ expirationMonth }), 'CREDIT_CARD', NOW)), ['card.expirationMonth'], String(expirationMonth));
  }
  for (const expirationYear of [30, 999, 10000, 2030.5, '2030' as unknown as number]) {
    assert.deepEqual(fields(validateCard(card({ expirationYear }), 'CREDIT_CARD', NOW)), ['card.expirationYear'], String(expirationYear));
  }
});

test('CVV: 3 digits, 4 for Amex', () => {
  for (const cvv of ['12', '1234', '12a', '', ' 123', 123 as unknown as string]) {
    assert.deepEqual(fields(validateCard(card({ cvv }), 'CREDIT_CARD', NOW)), ['card.cvv'], String(cvv));
  }
  assert.deepEqual(fields(validateCard(card({ number: '378282246310005', cvv: '123' }), 'CREDIT_CARD', NOW)), ['card.cvv']);
  assert.ok(validateCard(card({ number: '6362970000457013', cvv: '000' }), 'DEBIT_CARD', NOW).ok);
});

test('holder name: 1 to 100 characters, not blank', () => {
  for (const holderName of ['', '   ', 'A'.repeat(101), null as unknown as string]) {
    assert.deepEqual(fields(validateCard(card({ holderName }), 'CREDIT_CARD', NOW)), ['card.holderName']);
  }
  assert.ok(validateCard(card({ holderName: 'A' }), 'CREDIT_CARD', NOW).ok);
  assert.ok(validateCard(card({ holderName: 'Ç'.repeat(100) }), 'CREDIT_CARD', NOW).ok);
});

test('every problem is reported at once, and nothing throws on junk', () => {
  const r = validateCard({ number: '123', holderName: '', expirationMonth: 0, expirationYear: 1, cvv: 'x' }, 'DEBIT_CARD', NOW);
  assert.deepEqual(fields(r), ['card.number', 'card.holderName', 'card.expirationMonth', 'card.expirationYear', 'card.cvv']);
  assert.deepEqual(fields(validateCard(null as unknown as CardInput, 'CREDIT_CARD', NOW)), ['card']);
  assert.deepEqual(fields(validateCard({} as CardInput, 'CREDIT_CARD', NOW)).length, 5);
});

test('errors never echo the card number or the CVV', () => {
  const r = validateCard(card({ number: '4111111111111112', cvv: '98' }), 'CREDIT_CARD', NOW);
  assert.ok(!r.ok);
  const text = JSON.stringify(r);
  assert.ok(!text.includes('4111111111111112') && !text.includes('"98"'));
});

test('cardFingerprint is the keyed HMAC-SHA256 in lower-case hex', () => {
  const fp = cardFingerprint('4111111111111111', 'secret');
  assert.match(fp, /^[0-9a-f]{64}$/);
  assert.equal(fp, createHmac('sha256', 'secret').update('4111111111111111').digest('hex'));
  assert.equal(cardFingerprint('4111111111111111', 'secret'), fp);
  assert.notEqual(cardFingerprint('4111111111111111', 'other'), fp);
  assert.notEqual(cardFingerprint('5555555555554444', 'secret'), fp);
});
