// The extrato's lines as a seller reads them, derived from postings as the journal stores them:
// a paid sale as the sale, its fee and its reserve; a cashout as the amount set aside, then paid out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { entriesOf, linesOf } from '../../src/panel/statement-entries.ts';
import type { PostingSums } from '../../src/panel/statement-read.ts';

const at = new Date('2025-03-01T12:00:00Z');
const posting = (p: Partial<PostingSums> & Pick<PostingSums, 'id' | 'kind'>): PostingSums => ({
  transaction_id: null,
  cashout_id: null,
  created_at: at,
  available: 0,
  blocked: 0,
  fee_revenue: 0,
  customer_funds: 0,
  payouts: 0,
  ...p,
});

// R$ 100,00 paid: R$ 3,00 fee, R$ 10,00 reserve, R$ 87,00 available (the lines FIRST_PAYMENT writes).
const paid = posting({ id: 1, kind: 'FIRST_PAYMENT', transaction_id: 7, customer_funds: -10000, fee_revenue: 300, blocked: 1000, available: 8700 });
const asked = posting({ id: 2, kind: 'CASHOUT_CREATED', cashout_id: 3, available: -5000, blocked: 5000 });
const paidOut = posting({ id: 3, kind: 'CASHOUT_COMPLETED', cashout_id: 3, blocked: -5000, payouts: 4800, fee_revenue: 200 });

test('a paid sale reads as the sale, its fee and its reserve, adding up to what reached available', () => {
  assert.deepEqual(
    linesOf(paid).map((l) => [l.text, l.amount]),
    [
      ['Venda paga', 10000],
      ['Tarifa da venda', -300],
      ['Reserva retida', -1000],
    ],
  );
});

test('a posting whose lines do not add up as a sale reads as one line of what reached available', () => {
  const odd = { ...paid, available: 8000 };
  assert.deepEqual(
    linesOf(odd).map((l) => [l.text, l.amount]),
    [['First payment', 8000]],
  );
});

test('a cashout: set aside when asked, paid out from what was set aside; the balance runs newest first', () => {
  const entries = entriesOf([paidOut, asked, paid], 3700);
  assert.deepEqual(
    entries.map((e) => [e.text, e.amount, e.balance]),
    [
      ['Saque concluído', 0, 3700],
      ['Saque pedido', -5000, 3700],
      ['Reserva retida', -1000, 8700],
      ['Tarifa da venda', -300, 9700],
      ['Venda paga', 10000, 10000],
    ],
  );
  assert.equal(entries[0]!.detail, 'R$ 48,00 enviados por PIX e R$ 2,00 de tarifa, do valor separado no pedido.');
  assert.equal(entries.at(-1)!.balance - entries.at(-1)!.amount, 0, 'the oldest line starts from nothing');
});
