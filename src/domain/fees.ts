/**
 * Fee schedules and the split of a sale or cashout into fees, reserve and net (CONTRACT §5, §8).
 * Everything is integer cents and basis points; rounding is half-even via percentOf.
 */
import { Type } from 'typebox';
import type { FieldError } from './errors.ts';
import { percentOf } from './money.ts';
import { invalid, ok, type Result } from './result.ts';
import type { PaymentMethod } from './transaction-states.ts';

export type MethodFee = { fixedCents: number; percentBasisPoints: number };

export interface FeeSchedule {
  pix: MethodFee;
  boleto: MethodFee;
  creditCard: MethodFee;
  debitCard: MethodFee;
  reserveBasisPoints: number;
  reserveDays: number;
  chargebackFineCents: number;
  cashout: { fixedCents: number; variableBasisPoints: number };
}

export const DEFAULT_FEE_SCHEDULE: Readonly<FeeSchedule> = deepFreeze({
  pix: { fixedCents: 0, percentBasisPoints: 199 },
  boleto: { fixedCents: 349, percentBasisPoints: 0 },
  creditCard: { fixedCents: 49, percentBasisPoints: 499 },
  debitCard: { fixedCents: 49, percentBasisPoints: 299 },
  reserveBasisPoints: 0,
  reserveDays: 30,
  chargebackFineCents: 1500,
  cashout: { fixedCents: 200, variableBasisPoints: 0 },
});

// Frozen so no caller can change the platform default for everyone by mutating a shared object.
function deepFreeze<T extends object>(value: T): T {
  for (const v of Object.values(value)) if (typeof v === 'object' && v !== null) deepFreeze(v);
  return Object.freeze(value);
}

const METHOD_KEYS = {
  PIX: 'pix',
  BOLETO: 'boleto',
  CREDIT_CARD: 'creditCard',
  DEBIT_CARD: 'debitCard',
} as const satisfies Record<PaymentMethod, keyof FeeSchedule>;

export function methodFee(schedule: FeeSchedule, method: PaymentMethod): MethodFee {
  return schedule[METHOD_KEYS[method]];
}

export interface SaleSplit {
  systemFee: number;
  reserveAmount: number;
  netAmount: number;
}

/** §5 split at the first payment; the three parts always add up to the amount. */
export function splitSale(amountCents: number, fee: MethodFee, reserveBasisPoints: number): SaleSplit {
  // Capped at the amount: fees never make a sale's net negative.
  const systemFee = Math.min(amountCents, fee.fixedCents + percentOf(amountCents, fee.percentBasisPoints));
  const reserveAmount = percentOf(amountCents - systemFee, reserveBasisPoints);
  return { systemFee, reserveAmount, netAmount: amountCents - systemFee - reserveAmount };
}

export interface CashoutFees {
  fixed: number;
  variable: number;
  total: number;
  net: number;
}

/**
 * §8 cashout fees. Not capped: `net` ≤ 0 means the fees reach the amount, which the caller
 * answers with 422 MINIMUM_VALUE.
 */
export function cashoutFees(amountCents: number, fee: FeeSchedule['cashout']): CashoutFees {
  const variable = percentOf(amountCents, fee.variableBasisPoints);
  const total = fee.fixedCents + variable;
  return { fixed: fee.fixedCents, variable, total, net: amountCents - total };
}

// ---- operator patches (PATCH /admin/settings, PATCH /admin/sellers/{id}) ----

/** R$ 1,000,000.00: no fixed fee or fine beyond it is a typo we should accept. */
export const fee_cents_max = 100_000_000;
const basis_points_max = 10_000;
const reserve_days_max = 365;

const cents = Type.Integer({ minimum: 0, maximum: fee_cents_max, description: `an integer of cents from 0 to ${fee_cents_max}` });
const basisPoints = Type.Integer({
  minimum: 0,
  maximum: basis_points_max,
  description: `an integer of basis points from 0 to ${basis_points_max} (100 bp = 1 %)`,
});
const days = Type.Integer({ minimum: 0, maximum: reserve_days_max, description: `an integer number of days from 0 to ${reserve_days_max}` });
const strict = { additionalProperties: false } as const;
const methodFeeSchema = (partial: boolean) =>
  Type.Object(
    partial
      ? { fixedCents: Type.Optional(cents), percentBasisPoints: Type.Optional(basisPoints) }
      : { fixedCents: cents, percentBasisPoints: basisPoints },
    {
      ...strict,
      title: partial ? 'MethodFeePatch' : 'MethodFee',
      description: 'fixedCents + percentBasisPoints of the sale amount',
    },
  );
const cashoutFee = (partial: boolean) =>
  Type.Object(
    partial
      ? { fixedCents: Type.Optional(cents), variableBasisPoints: Type.Optional(basisPoints) }
      : { fixedCents: cents, variableBasisPoints: basisPoints },
    {
      ...strict,
      title: partial ? 'CashoutFeePatch' : 'CashoutFee',
      description: 'fixedCents + variableBasisPoints of the cashout amount',
    },
  );

/** A whole fee schedule (CONTRACT §5), as answered. */
export const FeeScheduleSchema = Type.Object(
  {
    pix: methodFeeSchema(false),
    boleto: methodFeeSchema(false),
    creditCard: methodFeeSchema(false),
    debitCard: methodFeeSchema(false),
    reserveBasisPoints: basisPoints,
    reserveDays: days,
    chargebackFineCents: cents,
    cashout: cashoutFee(false),
  },
  {
    ...strict,
    title: 'FeeSchedule',
    description:
      'Fixed amounts in cents, percentages in basis points (100 bp = 1 %): the fee of each payment method; the reserve held from each net ' +
      '(reserveBasisPoints) and the days until it is released (reserveDays); the pre-chargeback fine; the cashout fee.',
  },
);

/** A deep-partial patch of a fee schedule: any of its keys, each in range; an unknown key is refused. */
export const FeeSchedulePatch = Type.Object(
  {
    pix: Type.Optional(methodFeeSchema(true)),
    boleto: Type.Optional(methodFeeSchema(true)),
    creditCard: Type.Optional(methodFeeSchema(true)),
    debitCard: Type.Optional(methodFeeSchema(true)),
    reserveBasisPoints: Type.Optional(basisPoints),
    reserveDays: Type.Optional(days),
    chargebackFineCents: Type.Optional(cents),
    cashout: Type.Optional(cashoutFee(true)),
  },
  { ...strict, title: 'FeeSchedulePatch', description: 'a deep-partial fee schedule: any of its keys, the others kept' },
);

interface IntRule {
  min: number;
  max: number;
  what: string;
}
const CENTS: IntRule = { min: 0, max: fee_cents_max, what: `an integer of cents from 0 to ${fee_cents_max}` };
const BASIS_POINTS: IntRule = { min: 0, max: basis_points_max, what: `an integer of basis points from 0 to ${basis_points_max}` };
const DAYS: IntRule = { min: 0, max: reserve_days_max, what: `an integer number of days from 0 to ${reserve_days_max}` };

const METHOD_FEE_RULES = { fixedCents: CENTS, percentBasisPoints: BASIS_POINTS };
const CASHOUT_RULES = { fixedCents: CENTS, variableBasisPoints: BASIS_POINTS };
const TOP_RULES = { reserveBasisPoints: BASIS_POINTS, reserveDays: DAYS, chargebackFineCents: CENTS };
const SECTION_KEYS = { pix: true, boleto: true, creditCard: true, debitCard: true, cashout: true };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Overlays the patch's integer fields in `rules` onto `base`, collecting every violation (types
 * are never coerced). An unknown field is refused: a misspelt key would change nothing (CONTRACT §3).
 */
function mergeInts<T extends Record<string, number>>(
  base: T,
  patch: Record<string, unknown>,
  rules: Record<keyof T & string, IntRule>,
  prefix: string,
  errors: FieldError[],
): T {
  const merged: Record<string, number> = { ...base };
  for (const key of Object.keys(patch)) {
    if (!(key in rules) && !(prefix === '' && key in SECTION_KEYS)) errors.push({ field: prefix + key, message: 'is not a known field' });
  }
  for (const [key, rule] of Object.entries(rules) as [string, IntRule][]) {
    if (!(key in patch)) continue;
    const value = patch[key];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= rule.min && value <= rule.max) merged[key] = value;
    else errors.push({ field: prefix + key, message: `must be ${rule.what}` });
  }
  return merged as T;
}

function mergeSection<T extends Record<string, number>>(
  base: T,
  value: unknown,
  rules: Record<keyof T & string, IntRule>,
  field: string,
  errors: FieldError[],
): T {
  if (value === undefined) return { ...base };
  if (!isPlainObject(value)) {
    errors.push({ field, message: 'must be an object' });
    return { ...base };
  }
  return mergeInts(base, value, rules, `${field}.`, errors);
}

/** A deep-partial patch over `base`: the full merged schedule, or every field error at once. */
export function mergeFeeSchedule(base: FeeSchedule, patch: unknown): Result<FeeSchedule> {
  if (!isPlainObject(patch)) return invalid([{ field: 'feeSchedule', message: 'must be an object' }]);
  const errors: FieldError[] = [];
  const top = mergeInts(
    { reserveBasisPoints: base.reserveBasisPoints, reserveDays: base.reserveDays, chargebackFineCents: base.chargebackFineCents },
    patch,
    TOP_RULES,
    '',
    errors,
  );
  const schedule: FeeSchedule = {
    pix: mergeSection(base.pix, patch.pix, METHOD_FEE_RULES, 'pix', errors),
    boleto: mergeSection(base.boleto, patch.boleto, METHOD_FEE_RULES, 'boleto', errors),
    creditCard: mergeSection(base.creditCard, patch.creditCard, METHOD_FEE_RULES, 'creditCard', errors),
    debitCard: mergeSection(base.debitCard, patch.debitCard, METHOD_FEE_RULES, 'debitCard', errors),
    ...top,
    cashout: mergeSection(base.cashout, patch.cashout, CASHOUT_RULES, 'cashout', errors),
  };
  return errors.length > 0 ? invalid(errors) : ok(schedule);
}
