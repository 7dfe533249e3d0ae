import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { cashoutFees, DEFAULT_FEE_SCHEDULE, type FeeSchedule, fee_cents_max, mergeFeeSchedule, methodFee, splitSale } from '../../src/domain/fees.ts';
import { PAYMENT_METHODS } from '../../src/domain/transaction-states.ts';

describe('DEFAULT_FEE_SCHEDULE', () => {
  it('matches CONTRACT §5', () => {
    assert.deepEqual(DEFAULT_FEE_SCHEDULE, {
      pix: { fixedCents: 0, percentBasisPoints: 199 },
      boleto: { fixedCents: 349, percentBasisPoints: 0 },
      creditCard: { fixedCents: 49, percentBasisPoints: 499 },
      debitCard: { fixedCents: 49, percentBasisPoints: 299 },
      reserveBasisPoints: 0,
      reserveDays: 30,
      chargebackFineCents: 1500,
      cashout: { fixedCents: 200, variableBasisPoints: 0 },
    });
  });

  it('cannot be mutated by a caller', () => {
    assert.throws(() => {
      (DEFAULT_FEE_SCHEDULE.pix as { fixedCents: number }).fixedCents = 1;
    }, TypeError);
    assert.equal(DEFAULT_FEE_SCHEDULE.pix.fixedCents, 0);
  });
});

describe('methodFee', () => {
  it('picks the fee of each method', () => {
    const s = DEFAULT_FEE_SCHEDULE;
    assert.equal(methodFee(s, 'PIX'), s.pix);
    assert.equal(methodFee(s, 'BOLETO'), s.boleto);
    assert.equal(methodFee(s, 'CREDIT_CARD'), s.creditCard);
    assert.equal(methodFee(s, 'DEBIT_CARD'), s.debitCard);
  });
});

describe('splitSale', () => {
  it('PIX 15000 at 0 + 199 bp, no reserve → 298 / 0 / 14702 (§5 example)', () => {
    assert.deepEqual(splitSale(15000, { fixedCents: 0, percentBasisPoints: 199 }, 0), { systemFee: 298, reserveAmount: 0, netAmount: 14702 });
  });

  it('credit 15000 at 49 + 499 bp, reserve 1000 bp → 797 / 1420 / 12783 (§5 example)', () => {
    assert.deepEqual(splitSale(15000, { fixedCents: 49, percentBasisPoints: 499 }, 1000), { systemFee: 797, reserveAmount: 1420, netAmount: 12783 });
  });

  it('boleto default: flat 349', () => {
    assert.deepEqual(splitSale(10000, DEFAULT_FEE_SCHEDULE.boleto, 0), { systemFee: 349, reserveAmount: 0, netAmount: 9651 });
  });

  it('caps the fee at the amount', () => {
    assert.deepEqual(splitSale(300, DEFAULT_FEE_SCHEDULE.boleto, 5000), { systemFee: 300, reserveAmount: 0, netAmount: 0 });
  });

  it('rounds the reserve half-even', () => {
    // no fee, so the reserve base is the whole amount: 100 × 50 bp = 0.5, 300 × 50 bp = 1.5
    assert.equal(splitSale(100, { fixedCents: 0, percentBasisPoints: 0 }, 50).reserveAmount, 0); // 0.5 → 0
    assert.equal(splitSale(300, { fixedCents: 0, percentBasisPoints: 0 }, 50).reserveAmount, 2); // 1.5 → 2
  });

  const methodFeeArb = fc.record({ fixedCents: fc.integer({ min: 0, max: 1_000_000 }), percentBasisPoints: fc.integer({ min: 0, max: 10_000 }) });
  const scheduleArb: fc.Arbitrary<FeeSchedule> = fc.record({
    pix: methodFeeArb,
    boleto: methodFeeArb,
    creditCard: methodFeeArb,
    debitCard: methodFeeArb,
    reserveBasisPoints: fc.integer({ min: 0, max: 10_000 }),
    reserveDays: fc.integer({ min: 0, max: 365 }),
    chargebackFineCents: fc.integer({ min: 0, max: fee_cents_max }),
    cashout: fc.record({ fixedCents: fc.integer({ min: 0, max: fee_cents_max }), variableBasisPoints: fc.integer({ min: 0, max: 10_000 }) }),
  });

  it('parts add up to the amount and are never negative (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        scheduleArb,
        fc.constantFrom(...PAYMENT_METHODS),
        (amount, schedule, method) => {
          // Random schedules go through the validator too: anything it accepts must split cleanly.
          assert.ok(mergeFeeSchedule(DEFAULT_FEE_SCHEDULE, schedule).ok);
          const { systemFee, reserveAmount, netAmount } = splitSale(amount, methodFee(schedule, method), schedule.reserveBasisPoints);
          assert.equal(systemFee + reserveAmount + netAmount, amount);
          assert.ok(systemFee >= 0 && reserveAmount >= 0 && netAmount >= 0);
          assert.ok([systemFee, reserveAmount, netAmount].every(Number.isSafeInteger));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('cashoutFees', () => {
  it('default: 200 fixed, no variable', () => {
    assert.deepEqual(cashoutFees(10000, DEFAULT_FEE_SCHEDULE.cashout), { fixed: 200, variable: 0, total: 200, net: 9800 });
  });

  it('variable part rounds half-even', () => {
    // 10050 × 50 / 10000 = 50.25 → 50; 10100 × 50 / 10000 = 50.5 → 50; 10300 × 50 / 10000 = 51.5 → 52
    assert.deepEqual(cashoutFees(10050, { fixedCents: 100, variableBasisPoints: 50 }), { fixed: 100, variable: 50, total: 150, net: 9900 });
    assert.equal(cashoutFees(10100, { fixedCents: 0, variableBasisPoints: 50 }).variable, 50);
    assert.equal(cashoutFees(10300, { fixedCents: 0, variableBasisPoints: 50 }).variable, 52);
  });

  it('is not capped: fees reaching the amount show as net ≤ 0 (caller answers MINIMUM_VALUE)', () => {
    assert.equal(cashoutFees(200, DEFAULT_FEE_SCHEDULE.cashout).net, 0);
    assert.equal(cashoutFees(150, DEFAULT_FEE_SCHEDULE.cashout).net, -50);
  });
});

describe('mergeFeeSchedule', () => {
  const base: FeeSchedule = DEFAULT_FEE_SCHEDULE;

  it('an empty patch returns the base, as a fresh object', () => {
    const r = mergeFeeSchedule(base, {});
    assert.deepEqual(r, { ok: true, value: base });
    assert.ok(r.ok && r.value !== base && r.value.pix !== base.pix);
  });

  it('merges nested fields deeply', () => {
    const r = mergeFeeSchedule(base, { pix: { percentBasisPoints: 150 }, reserveBasisPoints: 1000, cashout: { variableBasisPoints: 10 } });
    assert.ok(r.ok);
    assert.deepEqual(r.value.pix, { fixedCents: 0, percentBasisPoints: 150 });
    assert.equal(r.value.reserveBasisPoints, 1000);
    assert.equal(r.value.reserveDays, 30);
    assert.deepEqual(r.value.cashout, { fixedCents: 200, variableBasisPoints: 10 });
    assert.deepEqual(r.value.creditCard, base.creditCard);
  });

  it('accepts the limits', () => {
    const r = mergeFeeSchedule(base, {
      pix: { fixedCents: 0, percentBasisPoints: 10000 },
      reserveBasisPoints: 10000,
      reserveDays: 365,
      chargebackFineCents: 0,
      cashout: { fixedCents: 0, variableBasisPoints: 0 },
    });
    assert.ok(r.ok);
    assert.equal(mergeFeeSchedule(base, { reserveDays: 0 }).ok, true);
  });

  it('refuses unknown fields, naming each (a misspelt key would otherwise change nothing)', () => {
    const r = mergeFeeSchedule(base, { whatever: 1, pix: { other: 'x' }, PIX: { percent: -5 } });
    assert.ok(!r.ok, 'refused');
    assert.deepEqual(r.refusal.details!.map((e) => e.field).sort(), ['PIX', 'pix.other', 'whatever']);
  });

  it('refuses amounts of cents beyond R$ 1,000,000.00', () => {
    const r = mergeFeeSchedule(base, { chargebackFineCents: fee_cents_max + 1 });
    assert.ok(!r.ok, 'refused');
    assert.deepEqual(r.refusal.details, [{ field: 'chargebackFineCents', message: `must be an integer of cents from 0 to ${fee_cents_max}` }]);
    assert.ok(mergeFeeSchedule(base, { chargebackFineCents: fee_cents_max }).ok, 'the bound itself is accepted');
  });

  it('reports every violation at once, with dotted field paths', () => {
    const r = mergeFeeSchedule(base, {
      pix: { fixedCents: -1, percentBasisPoints: 10001 },
      boleto: null,
      creditCard: [],
      debitCard: { fixedCents: 1.5, percentBasisPoints: '100' },
      reserveBasisPoints: -5,
      reserveDays: 366,
      chargebackFineCents: -1,
      cashout: { fixedCents: Number.MAX_SAFE_INTEGER + 1, variableBasisPoints: null },
    });
    assert.ok(!r.ok);
    assert.deepEqual(r.refusal.details!.map((e) => e.field).sort(), [
      'boleto',
      'cashout.fixedCents',
      'cashout.variableBasisPoints',
      'chargebackFineCents',
      'creditCard',
      'debitCard.fixedCents',
      'debitCard.percentBasisPoints',
      'pix.fixedCents',
      'pix.percentBasisPoints',
      'reserveBasisPoints',
      'reserveDays',
    ]);
    assert.ok(r.refusal.details!.every((e) => e.message.length > 0));
  });

  it('refuses a patch that is not an object', () => {
    for (const patch of [null, undefined, 5, 'x', []]) assert.equal(mergeFeeSchedule(base, patch).ok, false);
  });

  it('does not coerce types', () => {
    assert.equal(mergeFeeSchedule(base, { reserveDays: '30' }).ok, false);
    assert.equal(mergeFeeSchedule(base, { reserveDays: NaN }).ok, false);
    assert.equal(mergeFeeSchedule(base, { reserveDays: Infinity }).ok, false);
  });
});
