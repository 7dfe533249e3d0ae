import assert from 'node:assert/strict';
import { test } from 'node:test';
import { saoPauloMidnight } from '../../src/domain/calendar.ts';
import { reais, reaisTyped, whenSaoPaulo } from '../../src/panel/format.ts';

test('reais as people type them become the API decimal text; ambiguous or malformed text is refused', () => {
  const accepted: [string, string][] = [
    ['1.234,56', '1234.56'],
    ['1234,56', '1234.56'],
    ['150,5', '150.5'],
    ['150', '150'],
    ['R$ 1.234,56', '1234.56'],
    ['  R$100,00 ', '100.00'],
    ['100.50', '100.50'],
    ['1.234', '1234'],
    ['100.505', '100505'],
    ['1.234.567,89', '1234567.89'],
    ['0,01', '0.01'],
  ];
  for (const [typed, api] of accepted) assert.equal(reaisTyped(typed), api, typed);
  for (const typed of ['1.23,45', '1.2.3,45', '12.34.567,00', '1,234.56', '1,2,3', '150,555', '-10,00', '1e3', 'dez reais', '', ',50', '1.']) {
    assert.equal(reaisTyped(typed), null, typed);
  }
});

test('money and dates as the panel writes them', () => {
  assert.equal(reais(123456), 'R$ 1.234,56');
  assert.equal(reais(-5000), '-R$ 50,00');
  assert.equal(whenSaoPaulo(new Date('2026-11-23T02:30:00Z')), '22/11/2026 23:30', 'São Paulo is UTC−3');
});

test('a São Paulo day begins at 03:00 UTC; an impossible date is null', () => {
  assert.equal(saoPauloMidnight('2026-11-23')?.toISOString(), '2026-11-23T03:00:00.000Z');
  assert.equal(saoPauloMidnight('2026-02-30'), null);
  assert.equal(saoPauloMidnight('23/11/2026'), null);
});
