import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertBalanced, LedgerInvariantError, sellerDelta, withoutZeroLines } from '../../src/domain/ledger.ts';

const posting = (lines: [string, number][]) => ({
  kind: 'TEST',
  sellerId: 1,
  lines: lines.map(([account, amount]) => ({ account: account as 'available', amount })),
});

test('a balanced posting passes; an unbalanced one is a bug', () => {
  assert.doesNotThrow(() =>
    assertBalanced(
      posting([
        ['customer_funds', -100],
        ['available', 98],
        ['fee_revenue', 2],
      ]),
    ),
  );
  assert.throws(
    () =>
      assertBalanced(
        posting([
          ['customer_funds', -100],
          ['available', 99],
        ]),
      ),
    LedgerInvariantError,
  );
});

test('fractional or unsafe amounts are refused', () => {
  assert.throws(
    () =>
      assertBalanced(
        posting([
          ['available', 0.5],
          ['blocked', -0.5],
        ]),
      ),
    LedgerInvariantError,
  );
  assert.throws(
    () =>
      assertBalanced(
        posting([
          ['available', 2 ** 53],
          ['blocked', -(2 ** 53)],
        ]),
      ),
    LedgerInvariantError,
  );
});

test('seller delta sums only the seller accounts; zero lines are dropped', () => {
  const p = posting([
    ['customer_funds', -1000],
    ['available', 900],
    ['blocked', 0],
    ['fee_revenue', 100],
  ]);
  assert.deepEqual(sellerDelta(p), { available: 900, blocked: 0 });
  assert.equal(withoutZeroLines(p).lines.length, 3);
});
