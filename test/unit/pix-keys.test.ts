import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizePixKey, PIX_KEY_MAX_LENGTH, PIX_KEY_TYPES, type PixKeyType } from '../../src/domain/pix-keys.ts';

const ok = (type: PixKeyType, raw: string, key: string) => assert.deepEqual(normalizePixKey(type, raw), { ok: true, value: key }, `${type} ${raw}`);
const bad = (type: PixKeyType, raw: string) => {
  const r = normalizePixKey(type, raw);
  assert.equal(r.ok, false, `${type} ${JSON.stringify(raw)} should be refused`);
  if (!r.ok) assert.ok(r.refusal.message.length > 0);
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

test('PHONE keys: +55, DDD 11-99, 8 or 9 digits, formatting stripped', () => {
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
