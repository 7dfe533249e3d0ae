import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { centsToReaisString, centsToString, parseReaisToCents, percentOf, roundHalfEven } from '../../src/domain/money.ts';

describe('roundHalfEven', () => {
  it('rounds exact halves to the even neighbour', () => {
    assert.equal(roundHalfEven(2985n, 10n), 298n); // 298.5 → 298
    assert.equal(roundHalfEven(2995n, 10n), 300n); // 299.5 → 300
    assert.equal(roundHalfEven(5n, 10n), 0n); // 0.5 → 0
    assert.equal(roundHalfEven(15n, 10n), 2n); // 1.5 → 2
    assert.equal(roundHalfEven(25n, 10n), 2n); // 2.5 → 2
  });

  it('rounds non-halves to the nearest', () => {
    assert.equal(roundHalfEven(2984n, 10n), 298n);
    assert.equal(roundHalfEven(2986n, 10n), 299n);
    assert.equal(roundHalfEven(30n, 10n), 3n);
    assert.equal(roundHalfEven(0n, 7n), 0n);
  });

  it('handles negative numerators and denominators symmetrically', () => {
    assert.equal(roundHalfEven(-25n, 10n), -2n);
    assert.equal(roundHalfEven(-35n, 10n), -4n);
    assert.equal(roundHalfEven(-26n, 10n), -3n);
    assert.equal(roundHalfEven(-24n, 10n), -2n);
    assert.equal(roundHalfEven(25n, -10n), -2n);
    assert.equal(roundHalfEven(-25n, -10n), 2n);
  });

  it('refuses a zero denominator', () => {
    assert.throws(() => roundHalfEven(1n, 0n), RangeError);
  });

  it('is within half of the exact quotient, ties to even (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.bigInt({ min: 1n, max: 10n ** 6n }), (n, d) => {
        const q = roundHalfEven(n, d);
        const twiceError = 2n * (n - q * d); // 2·(n/d − q)·d
        assert.ok(twiceError <= d && twiceError >= -d);
        if (twiceError === d || twiceError === -d) assert.equal(q % 2n, 0n);
      }),
    );
  });
});

describe('percentOf', () => {
  it('applies basis points with half-even rounding', () => {
    assert.equal(percentOf(15000, 199), 298); // 298.5
    assert.equal(percentOf(15050, 199), 299); // 299.495
    assert.equal(percentOf(15000, 499), 748); // 748.5 → 748
  });

  it('stays exact when amount × basis points passes 2^53', () => {
    const amount = Number.MAX_SAFE_INTEGER; // 9007199254740991
    assert.equal(percentOf(amount, 10000), amount);
    // 9007199254740991 × 5000 / 10000 = 4503599627370495.5 → even neighbour 4503599627370496
    assert.equal(percentOf(amount, 5000), 4503599627370496);
  });

  it('refuses non-integer inputs (a bug upstream)', () => {
    assert.throws(() => percentOf(1.5, 100), RangeError);
    assert.throws(() => percentOf(100, 1.5), RangeError);
  });
});

describe('centsToReaisString', () => {
  it('formats two decimals', () => {
    assert.equal(centsToReaisString(10050), '100.50');
    assert.equal(centsToReaisString(5), '0.05');
    assert.equal(centsToReaisString(50), '0.50');
    assert.equal(centsToReaisString(0), '0.00');
    assert.equal(centsToReaisString(-150), '-1.50');
    assert.equal(centsToReaisString(-5), '-0.05');
    assert.equal(centsToReaisString(10000000), '100000.00');
    assert.equal(centsToReaisString(Number.MAX_SAFE_INTEGER), '90071992547409.91');
  });

  it('round-trips through parseReaisToCents (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (cents) => {
        assert.deepEqual(parseReaisToCents(centsToReaisString(cents)), { ok: true, value: cents });
      }),
    );
  });

  it('refuses non-integer cents', () => {
    assert.throws(() => centsToReaisString(1.5), RangeError);
  });
});

describe('centsToString', () => {
  it('formats integer cents', () => {
    assert.equal(centsToString(15000), '15000');
    assert.equal(centsToString(0), '0');
    assert.equal(centsToString(-0), '0');
    assert.throws(() => centsToString(NaN), RangeError);
  });
});

describe('parseReaisToCents', () => {
  const accepts: [unknown, number][] = [
    [100.1, 10010],
    [0.29, 29],
    [1.15, 115],
    [100, 10000],
    [1e2, 10000],
    [0.01, 1],
    [100000, 10000000],
    ['100', 10000],
    ['100.5', 10050],
    ['100.50', 10050],
    ['0.29', 29],
    ['007.10', 710],
    [1e13, 1e15],
    ['90071992547409.91', Number.MAX_SAFE_INTEGER],
  ];
  for (const [input, cents] of accepts) {
    it(`accepts ${typeof input} ${String(input)} → ${cents}`, () => {
      assert.deepEqual(parseReaisToCents(input), { ok: true, value: cents });
    });
  }

  const rejects: unknown[] = [
    100.005,
    '100.005',
    0.30000000000000004,
    0.1 + 0.2,
    NaN,
    Infinity,
    -Infinity,
    -1,
    -0.5,
    0,
    -0,
    '0',
    '0.00',
    '1e2',
    '-1',
    '+1',
    ' 100',
    '100 ',
    '1,50',
    '.5',
    '5.',
    '',
    'abc',
    '１００',
    1e-7,
    5e-324,
    1e21,
    1e300,
    Number.MAX_VALUE,
    90071992547409.92 * 1000,
    '90071992547409.92',
    '99999999999999999999',
    null,
    undefined,
    true,
    {},
    [],
    [100],
    100n,
  ];
  for (const input of rejects) {
    it(`rejects ${typeof input} ${JSON.stringify(input, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)) ?? String(input)}`, () => {
      const result = parseReaisToCents(input);
      assert.equal(result.ok, false);
      if (!result.ok) assert.ok(result.refusal.message.length > 0);
    });
  }

  it('names the reason', () => {
    const refused = (message: string) => ({ ok: false, refusal: { code: 'VALIDATION_ERROR', message } });
    assert.deepEqual(parseReaisToCents(100.005), refused('must have at most two decimal places'));
    assert.deepEqual(parseReaisToCents(0), refused('must be greater than zero'));
    assert.deepEqual(parseReaisToCents('0.00'), refused('must be greater than zero'));
    assert.deepEqual(parseReaisToCents(1e21), refused('is too large'));
  });

  it('agrees with the decimal text of any number of cents (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Math.floor(Number.MAX_SAFE_INTEGER / 100) }), (cents) => {
        // The JS number closest to cents/100 must parse back to exactly those cents.
        assert.deepEqual(parseReaisToCents(cents / 100), { ok: true, value: cents });
      }),
    );
  });
});
