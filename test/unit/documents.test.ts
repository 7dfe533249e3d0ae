import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as bu from '@brazilian-utils/brazilian-utils';
import * as vbr from 'validation-br';
import { cnpjCheckDigits, cpfCheckDigits, isValidCnpj, isValidCpf, normalizeDocument, parseDocument } from '../../src/domain/documents.ts';

const NOT_A_DOCUMENT = { ok: false, refusal: { code: 'VALIDATION_ERROR', message: 'must be a valid CPF or CNPJ' } };

// Fixed-seed PRNG (mulberry32): the generated cases are the same on every run.
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = (r: () => number, alphabet: string, n: number): string =>
  Array.from({ length: n }, () => alphabet[Math.floor(r() * alphabet.length)]!).join('');
/** Replaces one character with a different one of the same alphabet. */
function mutate(r: () => number, s: string, alphabet: string): string {
  const i = Math.floor(r() * s.length);
  const others = alphabet.replace(s[i]!, '');
  return s.slice(0, i) + others[Math.floor(r() * others.length)]! + s.slice(i + 1);
}
const DIGITS = '0123456789';
const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

test('BRAZIL.md CPF vectors', () => {
  assert.equal(isValidCpf('52998224725'), true);
  assert.equal(isValidCpf('12345678909'), true);
  assert.equal(cpfCheckDigits('529982247'), '25');
  assert.equal(cpfCheckDigits('123456789'), '09');
  assert.deepEqual(parseDocument('529.982.247-25'), { ok: true, value: '52998224725' });
  assert.deepEqual(parseDocument(' 123.456.789-09 '), { ok: true, value: '12345678909' });
});

test('BRAZIL.md CNPJ vectors, numeric and alphanumeric', () => {
  assert.equal(isValidCnpj('11222333000181'), true);
  assert.equal(isValidCnpj('12ABC34501DE35'), true);
  assert.equal(cnpjCheckDigits('112223330001'), '81');
  assert.equal(cnpjCheckDigits('12ABC34501DE'), '35');
  assert.deepEqual(parseDocument('11.222.333/0001-81'), { ok: true, value: '11222333000181' });
  assert.deepEqual(parseDocument('12.abc.345/01de-35'), { ok: true, value: '12ABC34501DE35' });
});

test('normalizeDocument strips . - / and whitespace and upper-cases', () => {
  assert.equal(normalizeDocument('12.abc.345/01de-35'), '12ABC34501DE35');
  assert.equal(normalizeDocument(' 529 982\t247-25 '), '52998224725');
  assert.equal(normalizeDocument('529*982'), '529*982');
});

test('wrong check digits are refused', () => {
  assert.equal(isValidCpf('52998224724'), false);
  assert.equal(isValidCpf('52998224715'), false);
  assert.equal(isValidCnpj('11222333000182'), false);
  assert.equal(isValidCnpj('11222333000171'), false);
  assert.equal(isValidCnpj('12ABC34501DE36'), false);
  assert.equal(isValidCnpj('12ABC34501DF35'), false);
  assert.deepEqual(parseDocument('529.982.247-24'), NOT_A_DOCUMENT);
});

test('all-equal digits are refused even though their check digits add up', () => {
  for (const d of DIGITS) {
    assert.equal(isValidCpf(d.repeat(11)), false);
    assert.equal(isValidCnpj(d.repeat(14)), false);
    assert.deepEqual(parseDocument(d.repeat(11)), NOT_A_DOCUMENT);
    assert.deepEqual(parseDocument(d.repeat(14)), NOT_A_DOCUMENT);
  }
  // 00000000000 and 00000000000000 are the arithmetic's own fixed points: the rule is what stops them.
  assert.equal(cpfCheckDigits('000000000'), '00');
  assert.equal(cnpjCheckDigits('000000000000'), '00');
});

test('bad lengths, junk characters and letters where they do not belong are refused', () => {
  for (const raw of [
    '',
    '5299822472',
    '529982247250',
    '1122233300018',
    '112223330001810',
    'abc',
    '52998224725x',
    '529_982_247_25',
    '52998224725\u0000',
  ]) {
    assert.deepEqual(parseDocument(raw), NOT_A_DOCUMENT, raw);
  }
  assert.equal(isValidCpf('5299822472A'), false);
  assert.equal(isValidCnpj('12ABC34501DEA5'), false, 'check digits are always numeric');
  assert.equal(isValidCnpj('12abc34501de35'), false, 'isValidCnpj takes normalised (upper-case) input');
  assert.equal(isValidCpf('529.982.247-25'), false, 'isValidCpf takes normalised input');
  assert.deepEqual(parseDocument('12ÁBC34501DE35'), NOT_A_DOCUMENT);
  assert.equal(cpfCheckDigits('12345678'), null);
  assert.equal(cnpjCheckDigits('12abc34501de'), null);
  assert.deepEqual(parseDocument(12345678909 as unknown as string), NOT_A_DOCUMENT);
});

test('CPF verdicts agree with @brazilian-utils and validation-br on generated numbers', () => {
  const r = rng(20260101);
  let invalid = 0;
  for (let i = 0; i < 2000; i++) {
    const base = pick(r, DIGITS, 9);
    const valid = base + cpfCheckDigits(base)!;
    const candidates = [valid, mutate(r, valid, DIGITS)];
    for (const cpf of candidates) {
      const ours = isValidCpf(cpf);
      if (!ours) invalid++;
      assert.equal(bu.isValidCpf(cpf), ours, `brazilian-utils on ${cpf}`);
      assert.equal(vbr.isCPF(cpf), ours, `validation-br on ${cpf}`);
    }
    assert.equal(isValidCpf(valid), !/^(\d)\1{10}$/.test(valid));
  }
  // One changed digit nearly always breaks a DV; r = 0 and r = 1 both give 0, so not always.
  assert.ok(invalid > 1800, `only ${invalid} mutants rejected`);
});

test('numeric CNPJ verdicts agree with both oracles on generated numbers', () => {
  const r = rng(42);
  let invalid = 0;
  for (let i = 0; i < 2000; i++) {
    const base = pick(r, DIGITS, 12);
    const valid = base + cnpjCheckDigits(base)!;
    for (const cnpj of [valid, mutate(r, valid, DIGITS)]) {
      const ours = isValidCnpj(cnpj);
      if (!ours) invalid++;
      assert.equal(bu.isValidCnpj(cnpj), ours, `brazilian-utils v1 on ${cnpj}`);
      assert.equal(bu.isValidCnpj(cnpj, { version: 2 }), ours, `brazilian-utils v2 on ${cnpj}`);
      assert.equal(vbr.isCNPJ(cnpj), ours, `validation-br on ${cnpj}`);
    }
  }
  assert.ok(invalid > 1800, `only ${invalid} mutants rejected`);
});

test('alphanumeric CNPJ verdicts agree with both oracles, lower-case input normalised', () => {
  const r = rng(7);
  let invalid = 0;
  for (let i = 0; i < 2000; i++) {
    const base = pick(r, ALNUM, 12);
    const valid = base + cnpjCheckDigits(base)!;
    // Mutate only the 12 alphanumeric characters, then also try a DV change.
    const mutant = i % 2 === 0 ? mutate(r, base, ALNUM) + valid.slice(12) : base + mutate(r, valid.slice(12), DIGITS);
    for (const cnpj of [valid, mutant]) {
      const ours = isValidCnpj(cnpj);
      if (!ours) invalid++;
      assert.equal(bu.isValidCnpj(cnpj, { version: 2 }), ours, `brazilian-utils v2 on ${cnpj}`);
      assert.equal(vbr.isCNPJ(cnpj), ours, `validation-br on ${cnpj}`);
      const parsed = parseDocument(cnpj.toLowerCase());
      assert.equal(parsed.ok, ours);
      if (parsed.ok) assert.deepEqual(parsed, { ok: true, value: cnpj });
    }
  }
  assert.ok(invalid > 1800, `only ${invalid} mutants rejected`);
});

test('parseDocument accepts the punctuation the oracles accept and normalises it', () => {
  const r = rng(99);
  for (let i = 0; i < 300; i++) {
    const base = pick(r, DIGITS, 9);
    const cpf = base + cpfCheckDigits(base)!;
    const masked = `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`;
    const expected = isValidCpf(cpf);
    assert.equal(bu.isValidCpf(masked), expected);
    assert.deepEqual(parseDocument(masked), expected ? { ok: true, value: cpf } : NOT_A_DOCUMENT);
  }
});
