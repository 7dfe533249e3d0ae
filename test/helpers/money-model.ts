/**
 * An independent model of the gateway's money movements, written from CONTRACT §5 (fee schedule,
 * split, posting table) and §6 (state machine, repeat rule), NOT from src/. Tests drive the gateway
 * and this model side by side and compare balances, platform accounts and statuses.
 *
 * Nothing here imports from src/ on purpose: a bug shared by the code and its test is a bug no test
 * finds. Everything is integer cents and basis points.
 *
 * Cashouts (CONTRACT §5 rows "cashout created / COMPLETED / REJECTED or CANCELLED", §6 cashout
 * events, §8 fees) are modelled at the end of the class.
 */

import { allows, EVENT_TABLE, EVENTS, METHODS, type Method, type Status, saleOf, type TxEvent } from './fixtures.ts';

// CONTRACT §6's event table lives in fixtures.ts (one transcription for every test); re-exported here.
export { EVENT_TABLE, EVENTS, METHODS, type Method, type Status, type TxEvent };

export interface MethodFeeModel {
  fixedCents: number;
  percentBasisPoints: number;
}
export interface ScheduleModel {
  pix: MethodFeeModel;
  boleto: MethodFeeModel;
  creditCard: MethodFeeModel;
  debitCard: MethodFeeModel;
  reserveBasisPoints: number;
  reserveDays: number;
  chargebackFineCents: number;
  cashout: { fixedCents: number; variableBasisPoints: number };
}

/** CONTRACT §5 defaults. */
export function defaultSchedule(): ScheduleModel {
  return {
    pix: { fixedCents: 0, percentBasisPoints: 199 },
    boleto: { fixedCents: 349, percentBasisPoints: 0 },
    creditCard: { fixedCents: 49, percentBasisPoints: 499 },
    debitCard: { fixedCents: 49, percentBasisPoints: 299 },
    reserveBasisPoints: 0,
    reserveDays: 30,
    chargebackFineCents: 1500,
    cashout: { fixedCents: 200, variableBasisPoints: 0 },
  };
}

export type SchedulePatch = {
  pix?: Partial<MethodFeeModel>;
  boleto?: Partial<MethodFeeModel>;
  creditCard?: Partial<MethodFeeModel>;
  debitCard?: Partial<MethodFeeModel>;
  reserveBasisPoints?: number;
  reserveDays?: number;
  chargebackFineCents?: number;
  cashout?: Partial<ScheduleModel['cashout']>;
};

/** Deep-partial overlay of a (valid) patch on a schedule; returns a fresh object. */
export function patchSchedule(base: ScheduleModel, patch: SchedulePatch): ScheduleModel {
  return {
    pix: { ...base.pix, ...patch.pix },
    boleto: { ...base.boleto, ...patch.boleto },
    creditCard: { ...base.creditCard, ...patch.creditCard },
    debitCard: { ...base.debitCard, ...patch.debitCard },
    reserveBasisPoints: patch.reserveBasisPoints ?? base.reserveBasisPoints,
    reserveDays: patch.reserveDays ?? base.reserveDays,
    chargebackFineCents: patch.chargebackFineCents ?? base.chargebackFineCents,
    cashout: { ...base.cashout, ...patch.cashout },
  };
}

function feeOf(schedule: ScheduleModel, method: Method): MethodFeeModel {
  if (method === 'PIX') return schedule.pix;
  if (method === 'BOLETO') return schedule.boleto;
  if (method === 'CREDIT_CARD') return schedule.creditCard;
  return schedule.debitCard;
}

/**
 * round(value × bp / 10000), half to even, for non-negative integers. Written independently of
 * src/domain/money.ts: quotient and remainder by integer division on bigint, tie compared on the
 * doubled remainder.
 */
export function bpHalfEven(value: number, basisPoints: number): number {
  if (!Number.isSafeInteger(value) || !Number.isSafeInteger(basisPoints) || value < 0 || basisPoints < 0) {
    throw new RangeError(`bpHalfEven(${value}, ${basisPoints})`);
  }
  const product = BigInt(value) * BigInt(basisPoints);
  const whole = product / 10000n;
  const rest = product % 10000n;
  let result = whole;
  if (rest > 5000n) result += 1n;
  else if (rest === 5000n && whole % 2n === 1n) result += 1n;
  return Number(result);
}

export interface Split {
  systemFee: number;
  reserveAmount: number;
  netAmount: number;
}

/** CONTRACT §5 split formulas. */
export function splitOf(amount: number, fee: MethodFeeModel, reserveBasisPoints: number): Split {
  const systemFee = Math.min(amount, fee.fixedCents + bpHalfEven(amount, fee.percentBasisPoints));
  const reserveAmount = bpHalfEven(amount - systemFee, reserveBasisPoints);
  return { systemFee, reserveAmount, netAmount: amount - systemFee - reserveAmount };
}

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface ModelSale {
  id: number;
  sellerId: number;
  method: Method;
  amount: number;
  /** The schedule in force at creation (CONTRACT §5: a sale keeps it). */
  schedule: ScheduleModel;
  status: Status;
  lastEvent: TxEvent | null;
  split: Split | null;
  reserveHeld: number;
  /** ms since epoch when the held reserve falls due; null when nothing is held. */
  releaseAt: number | null;
  /** Net of this sale's customer_funds lines. */
  customerFunds: number;
  /** CONTRACT §5a: refunds that SUCCEEDED, the refund PENDING (0: none), what an open MED blocks. */
  refunded: number;
  pendingRefund: number;
  medBlocked: number;
}

export type RefundRequestOutcome = 'requested' | 'refused' | 'exceeds';

export interface SellerTally {
  available: number;
  blocked: number;
  /** Platform accounts, summed over postings attributed to this seller. */
  feeRevenue: number;
  disputeLosses: number;
  customerFunds: number;
  payouts: number;
}

export type EventOutcome = 'moved' | 'noop' | 'refused';

export type CashoutStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'CANCELLED' | 'REJECTED';
export type CashoutEvent = 'PROCESSING' | 'COMPLETED' | 'REJECTED' | 'CANCELLED';
export const CASHOUT_EVENT_TABLE: Readonly<Record<CashoutEvent, { from: readonly CashoutStatus[]; to: CashoutStatus }>> = {
  PROCESSING: { from: ['PENDING'], to: 'PROCESSING' },
  COMPLETED: { from: ['PROCESSING'], to: 'COMPLETED' },
  REJECTED: { from: ['PENDING', 'PROCESSING'], to: 'REJECTED' },
  CANCELLED: { from: ['PENDING'], to: 'CANCELLED' },
};
export interface ModelCashout {
  id: number;
  sellerId: number;
  amount: number;
  feeTotal: number;
  netAmount: number;
  status: CashoutStatus;
  lastEvent: CashoutEvent | null;
  /** Money the receiver's bank sent back after COMPLETED (CONTRACT §11.3), at most netAmount. */
  returned: number;
}

export class MoneyModel {
  platformSchedule: ScheduleModel = defaultSchedule();
  readonly sellerSchedules = new Map<number, ScheduleModel | null>();
  readonly tallies = new Map<number, SellerTally>();
  readonly sales = new Map<number, ModelSale>();
  readonly cashouts = new Map<number, ModelCashout>();

  addSeller(id: number): void {
    this.sellerSchedules.set(id, null);
    this.tallies.set(id, { available: 0, blocked: 0, feeRevenue: 0, disputeLosses: 0, customerFunds: 0, payouts: 0 });
  }

  tally(sellerId: number): SellerTally {
    const t = this.tallies.get(sellerId);
    if (!t) throw new Error(`model: unknown seller ${sellerId}`);
    return t;
  }

  balance(sellerId: number): { available: number; blocked: number; total: number } {
    const t = this.tally(sellerId);
    return { available: t.available, blocked: t.blocked, total: t.available + t.blocked };
  }

  scheduleOf(sellerId: number): ScheduleModel {
    return this.sellerSchedules.get(sellerId) ?? this.platformSchedule;
  }

  /** PATCH /admin/sellers/{id} { feeSchedule }: a deep-partial over its own or the platform's; null follows the platform. */
  patchSellerSchedule(sellerId: number, patch: SchedulePatch | null): void {
    this.sellerSchedules.set(sellerId, patch === null ? null : patchSchedule(this.scheduleOf(sellerId), patch));
  }

  patchPlatformSchedule(patch: SchedulePatch): void {
    this.platformSchedule = patchSchedule(this.platformSchedule, patch);
  }

  createSale(id: number, sellerId: number, method: Method, amount: number): ModelSale {
    const sale: ModelSale = {
      id,
      sellerId,
      method,
      amount,
      schedule: structuredClone(this.scheduleOf(sellerId)),
      status: 'PENDENTE',
      lastEvent: null,
      split: null,
      reserveHeld: 0,
      releaseAt: null,
      customerFunds: 0,
      refunded: 0,
      pendingRefund: 0,
      medBlocked: 0,
    };
    this.sales.set(id, sale);
    return sale;
  }

  sale(id: number): ModelSale {
    const s = this.sales.get(id);
    if (!s) throw new Error(`model: unknown sale ${id}`);
    return s;
  }

  /** Would `event` move, repeat (200, nothing changes) or be refused (409)? */
  outcomeOf(sale: ModelSale, event: TxEvent): EventOutcome {
    const row = EVENT_TABLE[event];
    if (sale.lastEvent === event && sale.status === row.to) return 'noop';
    // §5a: while a refund is PENDING, no other refund and no dispute.
    if (sale.pendingRefund > 0 && (event === 'REFUNDED' || event === 'MED_OPENED' || event === 'CHARGEBACK_OPENED')) return 'refused';
    return allows(event, sale.status, sale.method) ? 'moved' : 'refused';
  }

  legalEvents(sale: ModelSale): TxEvent[] {
    return EVENTS.filter((e) => this.outcomeOf(sale, e) === 'moved');
  }

  applyEvent(saleId: number, event: TxEvent, now: number): EventOutcome {
    const sale = this.sale(saleId);
    const outcome = this.outcomeOf(sale, event);
    if (outcome !== 'moved') return outcome;
    const from = sale.status;
    const to = EVENT_TABLE[event].to;
    sale.status = to;
    sale.lastEvent = event;
    this.post(sale, from, to, now);
    return 'moved';
  }

  /** The posting table of CONTRACT §5, keyed by the pair of statuses. */
  private post(sale: ModelSale, from: Status, to: Status, now: number): void {
    // No money moves before the first payment, nor when a sale ends unpaid.
    if (to === 'EM_PROCESSAMENTO' || to === 'FALHA' || to === 'CANCELADO' || to === 'RECUSADO') return;
    const t = this.tally(sale.sellerId);
    if (to === 'PAGO' && (from === 'PENDENTE' || from === 'EM_PROCESSAMENTO' || from === 'FALHA')) {
      const split = splitOf(sale.amount, feeOf(sale.schedule, sale.method), sale.schedule.reserveBasisPoints);
      sale.split = split;
      sale.reserveHeld = split.reserveAmount;
      sale.releaseAt = split.reserveAmount > 0 ? now + sale.schedule.reserveDays * DAY_MS : null;
      sale.customerFunds -= sale.amount;
      t.customerFunds -= sale.amount;
      t.available += split.netAmount;
      t.blocked += split.reserveAmount;
      t.feeRevenue += split.systemFee;
      return;
    }
    const split = sale.split;
    if (!split) throw new Error(`model: sale ${sale.id} ${from} → ${to} without a split`);
    const net = split.netAmount;
    const left = sale.amount - sale.refunded;
    if (from === 'PAGO' && to === 'ESTORNADO') {
      // The operator's REFUNDED: a refund of all that is left, requested and SUCCEEDED at once.
      this.refundRequested(sale, left);
      this.refundSettled(sale, 'SUCCEEDED');
      return;
    }
    if (from === 'CHARGEBACK' && to === 'ESTORNADO') {
      // What is left goes back: the reserve still held first, the rest from available. The processor
      // took it from the platform's funds at the opening (CONTRACT §15): the seller makes the loss good.
      t.blocked -= sale.reserveHeld;
      t.available -= left - sale.reserveHeld;
      t.disputeLosses += left;
      sale.reserveHeld = 0;
      sale.releaseAt = null;
      return;
    }
    if (from === 'PAGO' && to === 'MED') {
      sale.medBlocked = Math.min(net, left);
      t.available -= sale.medBlocked;
      t.blocked += sale.medBlocked;
      return;
    }
    if (from === 'MED' && to === 'PAGO') {
      t.blocked -= sale.medBlocked;
      t.available += sale.medBlocked;
      sale.medBlocked = 0;
      this.releaseIfDue(sale, now);
      return;
    }
    if (from === 'MED' && to === 'ESTORNADO') {
      // Left goes back from the MED block, then the reserve held; the platform absorbs what they do not
      // cover; what they hold beyond it returns to available.
      const fromHolds = sale.medBlocked + sale.reserveHeld;
      t.blocked -= fromHolds;
      if (left >= fromHolds) t.disputeLosses -= left - fromHolds;
      else t.available += fromHolds - left;
      sale.medBlocked = 0;
      this.returnToCustomer(sale, t, left);
      return;
    }
    if (from === 'PAGO' && to === 'CHARGEBACK') {
      t.available -= sale.schedule.chargebackFineCents;
      t.feeRevenue += sale.schedule.chargebackFineCents;
      this.chargebackDebit(sale, t, left);
      return;
    }
    if (from === 'CHARGEBACK' && to === 'PAGO') {
      this.chargebackDebit(sale, t, -left);
      this.releaseIfDue(sale, now);
      return;
    }
    throw new Error(`model: no posting row for ${from} → ${to}`);
  }

  /** The processor debits the disputed amount from the platform's funds (credits it back when reversed). */
  private chargebackDebit(sale: ModelSale, t: SellerTally, amount: number): void {
    sale.customerFunds += amount;
    t.customerFunds += amount;
    t.disputeLosses -= amount;
  }

  private returnToCustomer(sale: ModelSale, t: SellerTally, amount: number): void {
    sale.customerFunds += amount;
    t.customerFunds += amount;
    sale.reserveHeld = 0;
    sale.releaseAt = null;
  }

  // ---- refunds (CONTRACT §5a) ----

  /** A refund of `amount` cents (null: all that is left) asked of a sale: 409, 422, or PENDING. */
  requestRefund(saleId: number, amount: number | null): RefundRequestOutcome {
    const sale = this.sale(saleId);
    if (sale.status !== 'PAGO' || sale.pendingRefund > 0) return 'refused';
    const left = sale.amount - sale.refunded;
    if ((amount ?? left) > left) return 'exceeds';
    this.refundRequested(sale, amount ?? left);
    return 'requested';
  }

  /** The PENDING refund settles; false when there is none. */
  settleRefund(saleId: number, outcome: 'SUCCEEDED' | 'FAILED'): boolean {
    const sale = this.sale(saleId);
    if (sale.pendingRefund === 0) return false;
    this.refundSettled(sale, outcome);
    return true;
  }

  private refundRequested(sale: ModelSale, amount: number): void {
    const t = this.tally(sale.sellerId);
    t.available -= amount;
    t.blocked += amount;
    sale.pendingRefund = amount;
  }

  private refundSettled(sale: ModelSale, outcome: 'SUCCEEDED' | 'FAILED'): void {
    const t = this.tally(sale.sellerId);
    const amount = sale.pendingRefund;
    sale.pendingRefund = 0;
    t.blocked -= amount;
    if (outcome === 'FAILED') {
      t.available += amount;
      return;
    }
    sale.refunded += amount;
    sale.customerFunds += amount;
    t.customerFunds += amount;
    if (sale.refunded < sale.amount) return;
    // All refunded: ESTORNADO, and the reserve still held goes back to available.
    sale.status = 'ESTORNADO';
    sale.lastEvent = 'REFUNDED';
    t.blocked -= sale.reserveHeld;
    t.available += sale.reserveHeld;
    sale.reserveHeld = 0;
    sale.releaseAt = null;
  }

  private releaseIfDue(sale: ModelSale, now: number): void {
    if (sale.status !== 'PAGO' || sale.reserveHeld === 0 || sale.releaseAt === null || sale.releaseAt > now) return;
    const t = this.tally(sale.sellerId);
    t.blocked -= sale.reserveHeld;
    t.available += sale.reserveHeld;
    sale.reserveHeld = 0;
    sale.releaseAt = null;
  }

  /** The reserve-release job at `now`: every PAGO sale whose reserve fell due. */
  releaseDue(now: number): void {
    for (const sale of this.sales.values()) this.releaseIfDue(sale, now);
  }

  /** customer_funds a sale should net to: −amount while paid and not returned, else 0. */
  expectedCustomerFunds(saleId: number): number {
    return this.sale(saleId).customerFunds;
  }

  // ---- cashouts (CONTRACT §5 rows, §6 cashout events, §8 fees) ----

  cashoutFees(sellerId: number, amount: number): { fixed: number; variable: number; total: number; net: number } {
    const c = this.scheduleOf(sellerId).cashout;
    const variable = bpHalfEven(amount, c.variableBasisPoints);
    const total = c.fixedCents + variable;
    return { fixed: c.fixedCents, variable, total, net: amount - total };
  }

  /** Creation (PENDING): available −amount; blocked +amount. Returns false when it would overdraw (422). */
  createCashout(id: number, sellerId: number, amount: number): boolean {
    const t = this.tally(sellerId);
    if (amount > t.available) return false;
    const fees = this.cashoutFees(sellerId, amount);
    this.cashouts.set(id, { id, sellerId, amount, feeTotal: fees.total, netAmount: fees.net, status: 'PENDING', lastEvent: null, returned: 0 });
    t.available -= amount;
    t.blocked += amount;
    return true;
  }

  applyCashoutEvent(id: number, event: CashoutEvent): EventOutcome {
    const c = this.cashouts.get(id);
    if (!c) throw new Error(`model: unknown cashout ${id}`);
    const row = CASHOUT_EVENT_TABLE[event];
    if (c.lastEvent === event && c.status === row.to) return 'noop';
    if (!row.from.includes(c.status)) return 'refused';
    c.status = row.to;
    c.lastEvent = event;
    const t = this.tally(c.sellerId);
    if (row.to === 'COMPLETED') {
      t.blocked -= c.amount;
      // The net leaves the platform's funds at the account that sent it (CONTRACT §15).
      t.customerFunds += c.netAmount;
      t.feeRevenue += c.feeTotal;
    }
    if (row.to === 'REJECTED' || row.to === 'CANCELLED') {
      t.blocked -= c.amount;
      t.available += c.amount;
    }
    return 'moved';
  }

  /**
   * A returned payout (CONTRACT §11.3 "returned"): customer_funds −amount, available +amount; only on a
   * COMPLETED cashout and never beyond what was paid. Returns false when it cannot be.
   */
  returnCashout(id: number, amount: number): boolean {
    const c = this.cashouts.get(id);
    if (!c) throw new Error(`model: unknown cashout ${id}`);
    if (c.status !== 'COMPLETED' || amount <= 0 || c.returned + amount > c.netAmount) return false;
    c.returned += amount;
    const t = this.tally(c.sellerId);
    t.customerFunds -= amount;
    t.available += amount;
    return true;
  }
}

/** A POST /api/sales body for one digital item (CONTRACT §4); cards use the sandbox's approved Visa; PIX never expires. */
export function saleBody(method: Method, amount: number): Record<string, unknown> {
  return saleOf(method, {
    amount,
    title: 'Item',
    holderName: 'X',
    cardNumber: '4111111111111111',
    installments: null,
    pix: { expiresInSeconds: null },
  });
}
