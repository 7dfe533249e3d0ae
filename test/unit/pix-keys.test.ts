import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getAreaCodeInfo, isValidLandlinePhone, isValidMobilePhone, isValidPixKey } from '@brazilian-utils/brazilian-utils';
import fc from 'fast-check';
import { BRAZIL_AREA_CODES } from '../../src/domain/phone-area-codes.ts';
import { normalizePixKey, PIX_KEY_MAX_LENGTH, PIX_KEY_TYPES, type PixKeyType, pixKeyTypeOf } from '../../src/domain/pix-keys.ts';

const ok = (type: PixKeyType, raw: string, key: string) => assert.deepEqual(normalizePixKey(type, raw), { ok: true, value: key }, `${type} ${raw}`);
const bad = (type: PixKeyType, raw: string, message?: RegExp) => {
  const r = normalizePixKey(type, raw);
  assert.equal(r.ok, false, `${type} ${JSON.stringify(raw)} should be refused`);
  if (!r.ok) {
    assert.equal(r.refusal.code, 'INVALID_PIX_KEY');
    assert.ok(r.refusal.message.length > 0 && !r.refusal.message.includes('\n'), r.refusal.message);
    if (message) assert.match(r.refusal.message, message);
  }
};

test('the five DICT key types', () => {
  assert.deepEqual([...PIX_KEY_TYPES], ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM']);
});

test('CPF keys: check digits, punctuation allowed and stripped', () => {
  ok('CPF', '52998224725', '52998224725');
  ok('CPF', '529.982.247-25', '52998224725');
  ok('CPF', '123.456.789-09', '12345678909');
  bad('CPF', '52998224724');
  bad('CPF', '11111111111');
  bad('CPF', '11222333000181'); // a CNPJ is not a CPF key
  bad('CPF', '5299822472');
  bad('CPF', 'maria@example.com');
});

test('CNPJ keys: numeric and alphanumeric, upper-cased', () => {
  ok('CNPJ', '11222333000181', '11222333000181');
  ok('CNPJ', '11.222.333/0001-81', '11222333000181');
  ok('CNPJ', '12ABC34501DE35', '12ABC34501DE35');
  ok('CNPJ', '12.abc.345/01de-35', '12ABC34501DE35');
  bad('CNPJ', '11222333000182');
  bad('CNPJ', '00000000000000');
  bad('CNPJ', '52998224725');
});

test('EMAIL keys: lower-cased, DICT-like shape, at most 77 characters', () => {
  ok('EMAIL', 'Maria.Silva@Example.COM', 'maria.silva@example.com');
  ok('EMAIL', 'joao+pix@sub.example.com.br', 'joao+pix@sub.example.com.br');
  ok('EMAIL', '  fulano@example.com ', 'fulano@example.com');
  for (const raw of [
    'maria',
    'maria@',
    '@example.com',
    'maria@example',
    'maria silva@example.com',
    'maria@exa mple.com',
    'maria@@example.com',
    'maria@-example.com',
    'maria@example-.com',
    'maria@example..com',
    'maria@.example.com',
    'maria@example.com.',
    'maria%x@example.com',
    'maria@exämple.com',
  ]) {
    bad('EMAIL', raw);
  }
  const local = 'a'.repeat(PIX_KEY_MAX_LENGTH - '@example.com'.length);
  ok('EMAIL', `${local}@example.com`, `${local}@example.com`);
  bad('EMAIL', `${local}a@example.com`);
});

test('PHONE keys: +55, DDD, 8 or 9 digits, formatting stripped', () => {
  ok('PHONE', '+5511987654321', '+5511987654321');
  ok('PHONE', '+551133334444', '+551133334444');
  ok('PHONE', '+55 (11) 98765-4321', '+5511987654321');
  ok('PHONE', '+5599987654321', '+5599987654321');
  for (const raw of [
    '11987654321',
    '5511987654321',
    '+55011987654321',
    '+5501987654321',
    '+5510987654321',
    '+55119876543210',
    '+55111234567',
    '+1 415 555 2671',
    '+551198765432a',
    '+55 11 9876 54321 ext 2',
    '',
  ]) {
    bad('PHONE', raw);
  }
});

// ANATEL's 67 area codes, as the issue lists them.
const ANATEL_DDDS =
  '11 12 13 14 15 16 17 18 19 21 22 24 27 28 31 32 33 34 35 37 38 41 42 43 44 45 46 47 48 49 51 53 54 55 ' +
  '61 62 63 64 65 66 67 68 69 71 73 74 75 77 79 81 82 83 84 85 86 87 88 89 91 92 93 94 95 96 97 98 99';

test('PHONE keys: only area codes (DDD) that exist, the list agreeing with ANATEL and brazilian-utils', () => {
  assert.deepEqual(BRAZIL_AREA_CODES, ANATEL_DDDS.split(' '));
  for (let n = 0; n < 100; n++) {
    const ddd = String(n).padStart(2, '0');
    const exists = getAreaCodeInfo(ddd) !== null;
    assert.equal(exists, ANATEL_DDDS.includes(ddd) && ddd !== '00', `oracle and ANATEL on DDD ${ddd}`);
    assert.equal(normalizePixKey('PHONE', `+55${ddd}987654321`).ok, exists, `mobile with DDD ${ddd}`);
    assert.equal(normalizePixKey('PHONE', `+55${ddd}33334444`).ok, exists, `landline with DDD ${ddd}`);
  }
  bad('PHONE', '+5520987654321', /area code \(DDD\) 20 does not exist/);
  bad('PHONE', '+5523987654321', /DDD\) 23/);
  bad('PHONE', '+5530987654321', /DDD\) 30/);
  bad('PHONE', '+55 (52) 3333-4444', /DDD\) 52/);
});

test('PHONE keys: a 9-digit number starts with 9 (mobile), an 8-digit one with 2 to 5 (landline)', () => {
  for (const first of '0123456789') {
    assert.equal(normalizePixKey('PHONE', `+5511${first}87654321`).ok, first === '9', `mobile starting ${first}`);
    assert.equal(normalizePixKey('PHONE', `+5511${first}3334444`).ok, '2345'.includes(first), `landline starting ${first}`);
  }
  bad('PHONE', '+5511887654321', /9-digit \(mobile\) number starts with 9/);
  bad('PHONE', '+5521187654321', /starts with 9, this one with 1/);
  bad('PHONE', '+551193334444', /8-digit \(landline\) number starts with 2, 3, 4 or 5/);
  bad('PHONE', '+551163334444', /this one with 6/);
  bad('PHONE', '11987654321', /\+55/);
  ok('PHONE', '+55 61 2345-6789', '+556123456789');
});

test('PHONE keys: every accepted number is one brazilian-utils also reads as Brazilian (property)', () => {
  const national = fc.stringMatching(/^[0-9]{10,11}$/);
  fc.assert(
    fc.property(national, (digits) => {
      const r = normalizePixKey('PHONE', `+55${digits}`);
      // brazilian-utils also takes mobiles starting with 6 to 8 (its version 1 rule) and landlines
      // starting with 6; ours is narrower: 9 for a mobile, 2 to 5 for a landline.
      const oracle = digits.length === 11 ? isValidMobilePhone(digits) && digits[2] === '9' : isValidLandlinePhone(digits) && digits[2] !== '6';
      assert.equal(r.ok, oracle, `+55${digits}`);
      // brazilian-utils takes a PIX phone key to be a mobile only; a mobile we accept is one it accepts.
      if (r.ok && digits.length === 11) assert.ok(isValidPixKey(`+55${digits}`, { accept: ['phone'] }), `+55${digits}`);
    }),
    { numRuns: 2000 },
  );
});

test('refusals say why, for the cashout message "pixKey is not a valid TYPE key: …"', () => {
  bad('CPF', '52998224724', /check digits/);
  bad('CPF', '11111111111', /equal digits/);
  bad('CPF', '5299822472', /11 digits/);
  bad('CNPJ', '11222333000182', /check digits/);
  bad('CNPJ', '1122233300018', /14 characters/);
  bad('EMAIL', 'maria@', /e-mail address/);
  bad('RANDOM', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', /UUID/);
});

test('pixKeyTypeOf: the type a key has by its shape', () => {
  const cases: [string, PixKeyType | null][] = [
    ['52998224725', 'CPF'],
    ['529.982.247-25', 'CPF'],
    ['52998224724', 'CPF'],
    ['11222333000181', 'CNPJ'],
    ['11.222.333/0001-81', 'CNPJ'],
    ['12ABC34501DE35', 'CNPJ'],
    ['12abc34501de35', 'CNPJ'],
    ['fulano@example.com', 'EMAIL'],
    ['FULANO@EXAMPLE.COM', 'EMAIL'],
    ['not-an-email@', 'EMAIL'],
    ['+5511987654321', 'PHONE'],
    ['+55 (11) 98765-4321', 'PHONE'],
    ['+1 415 555 2671', 'PHONE'],
    ['123e4567-e12b-12d1-a456-426655440000', 'RANDOM'],
    ['123E4567-E12B-12D1-A456-426655440000', 'RANDOM'],
    ['not-a-pix-key', null],
    ['', null],
    ['(11) 98765-4321', null],
    ['123e4567e12b12d1a456426655440000', null],
    [42 as unknown as string, null],
  ];
  for (const [raw, type] of cases) assert.equal(pixKeyTypeOf(raw), type, JSON.stringify(raw));
});

test('RANDOM keys: UUID shape, lower-cased, version nibble not checked', () => {
  ok('RANDOM', '123e4567-e12b-12d1-a456-426655440000', '123e4567-e12b-12d1-a456-426655440000'); // BCB's example, not v4
  ok('RANDOM', '9D36B84F-C70B-478F-B95C-12729B90CA25', '9d36b84f-c70b-478f-b95c-12729b90ca25');
  ok('RANDOM', '00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000');
  for (const raw of [
    '123e4567e12b12d1a456426655440000',
    '123e4567-e12b-12d1-a456-42665544000',
    '123e4567-e12b-12d1-a456-4266554400000',
    '{123e4567-e12b-12d1-a456-426655440000}',
    '123e4567-e12b-12d1-a456-42665544000g',
    '123e4567-e12b-12d1a-456-426655440000',
  ]) {
    bad('RANDOM', raw);
  }
});

test('unknown types and non-string keys are refused, not thrown', () => {
  bad('EVP' as PixKeyType, '123e4567-e12b-12d1-a456-426655440000');
  bad('toString' as PixKeyType, 'anything');
  bad('__proto__' as PixKeyType, 'anything');
  bad('CPF', 52998224725 as unknown as string);
  bad('EMAIL', null as unknown as string);
});

test('every accepted key is at most 77 characters', () => {
  const samples: [PixKeyType, string][] = [
    ['CPF', '529.982.247-25'],
    ['CNPJ', '12.abc.345/01de-35'],
    ['EMAIL', 'x@example.com'],
    ['PHONE', '+5511987654321'],
    ['RANDOM', '123e4567-e12b-12d1-a456-426655440000'],
  ];
  for (const [type, raw] of samples) {
    const r = normalizePixKey(type, raw);
    assert.ok(r.ok && r.value.length <= PIX_KEY_MAX_LENGTH);
  }
});
