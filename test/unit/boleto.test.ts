import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as bu from '@brazilian-utils/brazilian-utils';
import * as vbr from 'validation-br';
import {
  BOLETO_MAX_AMOUNT_CENTS,
  buildBoleto,
  dueDateFactor,
  dueDateFromFactor,
  formatDigitableLine,
  freeFieldForSale,
  isValidDigitableLine,
  mod10,
  mod11Boleto,
  parseDigitableLine,
} from '../../src/domain/boleto.ts';

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
const digits = (r: () => number, n: number): string => Array.from({ length: n }, () => Math.floor(r() * 10)).join('');
const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const BB = {
  input: { bankCode: '001', amountCents: 15090, dueDate: '2025-12-31', freeField: '0000001234567000000000117' },
  barcode: '00199131200000150900000001234567000000000117',
  formatted: '00190.00009 01234.567004 00000.001172 9 13120000015090',
};
const ITAU = {
  input: { bankCode: '341', amountCents: 25990, dueDate: '2026-03-15', freeField: '1090000000123456789012340' },
  barcode: '34196138600000259901090000000123456789012340',
  line: '34191090080000012345567890123408613860000025990',
};

test('due-date factor vectors, including the 2025 reset', () => {
  assert.equal(dueDateFactor('2025-12-31'), 1312);
  assert.equal(dueDateFactor('2026-03-15'), 1386);
  assert.equal(dueDateFactor('2025-02-21'), 9999);
  assert.equal(dueDateFactor('2025-02-22'), 1000);
  assert.equal(dueDateFactor('2000-07-03'), 1000); // first day the old cycle reached 1000
  // The next reset, 9000 days after 2025-02-22.
  assert.equal(dueDateFactor('2049-10-12'), 9998);
  assert.equal(dueDateFactor('2049-10-13'), 9999);
  assert.equal(dueDateFactor('2049-10-14'), 1000);
});

test('malformed or unrepresentable due dates give NaN', () => {
  for (const d of ['2025-02-30', '2025-13-01', '2025-1-01', '31/12/2025', '', '2025-12-31T00:00:00Z', '2000-07-02', '1997-10-07']) {
    assert.ok(Number.isNaN(dueDateFactor(d)), d);
  }
});

test('dueDateFromFactor picks the candidate nearest today', () => {
  assert.equal(dueDateFromFactor(1312, '2025-06-01'), '2025-12-31');
  assert.equal(dueDateFromFactor(9999, '2025-06-01'), '2025-02-21');
  assert.equal(dueDateFromFactor(1000, '2025-06-01'), '2025-02-22');
  assert.equal(dueDateFromFactor(1000, '2001-01-01'), '2000-07-03');
  assert.equal(dueDateFromFactor(0, '2025-06-01'), null);
  assert.equal(dueDateFromFactor(1312, 'bad'), null);
  const r = rng(3);
  for (let i = 0; i < 500; i++) {
    const due = isoDay(Date.UTC(2000, 6, 3) + Math.floor(r() * 20000) * 86_400_000);
    // Nearest-candidate decoding is exact within ±4500 days of the due date.
    const today = isoDay(Date.parse(due) + Math.floor((r() - 0.5) * 8000) * 86_400_000);
    assert.equal(dueDateFromFactor(dueDateFactor(due), today), due, `${due} seen on ${today}`);
  }
});

test('Banco do Brasil vector byte for byte', () => {
  const b = buildBoleto(BB.input);
  assert.ok(b.ok);
  assert.equal(b.value.barcode, BB.barcode);
  assert.equal(b.value.digitableLine, BB.formatted.replace(/[.\s]/g, ''));
  assert.equal(formatDigitableLine(b.value.digitableLine), BB.formatted);
});

test('Itaú vector byte for byte', () => {
  const b = buildBoleto(ITAU.input);
  assert.ok(b.ok);
  assert.equal(b.value.barcode, ITAU.barcode);
  assert.equal(b.value.digitableLine, ITAU.line);
  assert.equal(formatDigitableLine(ITAU.line), '34191.09008 00000.123455 67890.123408 6 13860000025990');
});

test('parseDigitableLine reads both vectors back, with or without punctuation', () => {
  assert.deepEqual(parseDigitableLine(BB.formatted), {
    ok: true,
    value: {
      digitableLine: '00190000090123456700400000001172913120000015090',
      barcode: BB.barcode,
      bankCode: '001',
      factor: 1312,
      amountCents: 15090,
      freeField: BB.input.freeField,
    },
  });
  const parsed = parseDigitableLine(ITAU.line);
  assert.ok(parsed.ok);
  const itau = parsed.value;
  assert.equal(itau.barcode, ITAU.barcode);
  assert.equal(itau.amountCents, 25990);
  assert.equal(itau.freeField, ITAU.input.freeField);
  assert.equal(dueDateFromFactor(itau.factor, '2026-01-01'), '2026-03-15');
});

test('check digits: mod10 and mod11 on the vectors', () => {
  assert.equal(mod10('001900000'), 9);
  assert.equal(mod10('0123456700'), 4);
  assert.equal(mod10('0000000117'), 2);
  assert.equal(mod11Boleto(BB.barcode.slice(0, 4) + BB.barcode.slice(5)), 9);
  assert.equal(mod11Boleto(ITAU.barcode.slice(0, 4) + ITAU.barcode.slice(5)), 6);
  assert.equal(mod10(''), 0);
});

test('mod11Boleto maps remainders 0 and 1 to DV 1', () => {
  // One digit d has weight 2, so sum = 2d: d = 0 gives r = 0 (11 → 1), d = 6 gives r = 1 (10 → 1).
  assert.equal(mod11Boleto('0'), 1);
  assert.equal(mod11Boleto('6'), 1);
  assert.equal(mod11Boleto('1'), 9); // 2 → 11 − 2
});

test('wrong check digits, lengths and characters are refused', () => {
  const line = ITAU.line;
  const flip = (i: number) => line.slice(0, i) + ((Number(line[i]) + 1) % 10) + line.slice(i + 1);
  for (const i of [9, 20, 31, 32]) assert.equal(isValidDigitableLine(flip(i)), false, `DV at ${i + 1}`);
  assert.equal(isValidDigitableLine(flip(0)), false);
  assert.equal(isValidDigitableLine(line.slice(1)), false);
  assert.equal(isValidDigitableLine(`${line}0`), false);
  assert.equal(isValidDigitableLine(`${line.slice(0, 46)}x`), false);
  assert.equal(isValidDigitableLine(ITAU.barcode), false, 'a barcode is not a linha');
  assert.equal(isValidDigitableLine(''), false);
  assert.equal(isValidDigitableLine(42 as unknown as string), false);
  // A general DV of 0 never occurs: FEBRABAN maps it to 1.
  const zeroDv = `${line.slice(0, 32)}0${line.slice(33)}`;
  assert.equal(isValidDigitableLine(zeroDv), false);
});

test('buildBoleto refuses bad input with a reason instead of throwing', () => {
  const base = ITAU.input;
  const cases: Partial<typeof base>[] = [
    { bankCode: '34' },
    { bankCode: '3411' },
    { bankCode: 'abc' },
    { bankCode: 341 as unknown as string },
    { amountCents: -1 },
    { amountCents: 1.5 },
    { amountCents: BOLETO_MAX_AMOUNT_CENTS + 1 },
    { amountCents: Number.NaN },
    { dueDate: '2026-02-30' },
    { dueDate: '1999-01-01' },
    { dueDate: '15/03/2026' },
    { freeField: '123' },
    { freeField: '1'.repeat(26) },
    { freeField: 'a'.repeat(25) },
  ];
  for (const c of cases) {
    const r = buildBoleto({ ...base, ...c });
    assert.equal(r.ok, false, JSON.stringify(c));
    if (!r.ok) assert.ok(r.refusal.message.length > 0);
  }
  const max = buildBoleto({ ...base, amountCents: BOLETO_MAX_AMOUNT_CENTS });
  assert.ok(max.ok && max.value.barcode.slice(9, 19) === '9999999999');
  const zero = buildBoleto({ ...base, amountCents: 0 });
  assert.ok(zero.ok && isValidDigitableLine(zero.value.digitableLine));
});

test('formatDigitableLine leaves anything but 47 digits alone', () => {
  assert.equal(formatDigitableLine('123'), '123');
  assert.equal(formatDigitableLine(BB.formatted), BB.formatted);
});

test('freeFieldForSale is the zero-padded id, 25 digits', () => {
  assert.equal(freeFieldForSale(1), '0000000000000000000000001');
  assert.equal(freeFieldForSale(Number.MAX_SAFE_INTEGER), '0000000009007199254740991');
  assert.equal(freeFieldForSale(0).length, 25);
  assert.throws(() => freeFieldForSale(-1), RangeError);
  assert.throws(() => freeFieldForSale(1.5), RangeError);
  const b = buildBoleto({ bankCode: '001', amountCents: 100, dueDate: '2026-01-01', freeField: freeFieldForSale(123456) });
  assert.ok(b.ok && b.value.barcode.endsWith('123456'));
});

test('generated boletos: @brazilian-utils and validation-br accept our linhas and read the same amount and date', () => {
  const r = rng(2026);
  for (let i = 0; i < 1000; i++) {
    const dueDate = isoDay(Date.UTC(2025, 0, 1) + Math.floor(r() * 3000) * 86_400_000);
    const amountCents = i % 10 === 0 ? BOLETO_MAX_AMOUNT_CENTS - Math.floor(r() * 1000) : Math.floor(r() * 10_000_000);
    const input = { bankCode: digits(r, 3), amountCents, dueDate, freeField: digits(r, 25) };
    const b = buildBoleto(input);
    assert.ok(b.ok);
    assert.equal(b.value.barcode.length, 44);
    assert.equal(b.value.digitableLine.length, 47);
    assert.equal(bu.isValidBoleto(b.value.digitableLine), true, b.value.digitableLine);
    assert.equal(bu.isValidBoleto(formatDigitableLine(b.value.digitableLine)), true);
    assert.equal(vbr.isBoleto(b.value.digitableLine), true, b.value.digitableLine);
    const info = bu.getBoletoInfo(b.value.digitableLine, { referenceDate: new Date(`${dueDate}T12:00:00Z`) });
    assert.ok(info);
    assert.equal(info.amount, amountCents);
    assert.equal(info.bankCode, input.bankCode);
    assert.ok(info.expirationDate);
    assert.equal(
      Math.round((info.expirationDate.getTime() - Date.parse(dueDate)) / 86_400_000),
      0,
      `${dueDate} read as ${info.expirationDate.toISOString()}`,
    );
    const parsed = parseDigitableLine(b.value.digitableLine);
    assert.ok(parsed.ok);
    assert.deepEqual(
      [parsed.value.barcode, parsed.value.bankCode, parsed.value.amountCents, parsed.value.freeField],
      [b.value.barcode, input.bankCode, amountCents, input.freeField],
    );
  }
});

test('mutated linhas: our verdict agrees with @brazilian-utils', () => {
  const r = rng(11);
  let refused = 0;
  for (let i = 0; i < 2000; i++) {
    const b = buildBoleto({ bankCode: digits(r, 3), amountCents: Math.floor(r() * 1e9), dueDate: '2026-06-30', freeField: digits(r, 25) });
    assert.ok(b.ok);
    const pos = Math.floor(r() * 47);
    const d = (Number(b.value.digitableLine[pos]) + 1 + Math.floor(r() * 9)) % 10;
    const mutant = b.value.digitableLine.slice(0, pos) + d + b.value.digitableLine.slice(pos + 1);
    const ours = isValidDigitableLine(mutant);
    if (!ours) refused++;
    assert.equal(bu.isValidBoleto(mutant), ours, `${mutant} (position ${pos + 1})`);
  }
  // The general DV folds remainders 0 and 1 together, so a few field-5 mutants survive; nearly all do not.
  assert.ok(refused > 1900, `only ${refused} mutants refused`);
});
