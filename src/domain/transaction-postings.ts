/**
 * CONTRACT §5's posting table for transactions, as pure functions: given a sale's money state and
 * a move, the postings to write and the sale's new money state. Every row is one balanced posting.
 */
import { type FeeSchedule, methodFee, splitSale } from './fees.ts';
import { atAccount, type Posting } from './ledger.ts';
import type { PaymentMethod, PostingKind } from './transaction-states.ts';

export interface SaleMoney {
  id: number;
  sellerId: number;
  paymentMethod: PaymentMethod;
  amount: number;
  feeSchedule: FeeSchedule;
  systemFee: number | null;
  reserveAmount: number | null;
  netAmount: number | null;
  /** The part of the reserve not yet released. */
  reserveHeld: number;
  reserveReleaseAt: Date | null;
  /** Refunds that SUCCEEDED (CONTRACT §5a). */
  refundedAmount: number;
  /** The refund PENDING, 0 when none (one at a time). */
  refundPending: number;
  /** What an open MED holds in blocked: min(netAmount, what is left after refunds). */
  medBlocked: number;
}

export interface MoneyUpdate {
  systemFee?: number;
  reserveAmount?: number;
  netAmount?: number;
  reserveHeld?: number;
  reserveReleaseAt?: Date | null;
  refundedAmount?: number;
  refundPending?: number;
  medBlocked?: number;
}

/** What a move writes to the ledger, and the sale's money state after it. */
export interface SalePostings {
  postings: Posting[];
  update: MoneyUpdate;
}

const day_ms = 24 * 60 * 60 * 1000;
const none: SalePostings = { postings: [], update: {} };

export function salePostings(kind: PostingKind, sale: SaleMoney, at: Date): SalePostings {
  const posting = (name: string, lines: Posting['lines']): Posting => ({ kind: name, sellerId: sale.sellerId, transactionId: sale.id, lines });
  switch (kind) {
    case 'FIRST_PAYMENT':
      return firstPayment(sale, at, posting);
    case 'REFUND':
      // The status move of a refund of all that is left, requested and settled at once (the operator's
      // REFUNDED, which stands for the provider): the rows a refund's lifecycle writes, in one go.
      return refundAtOnce(sale, leftToRefund(sale));
    case 'CHARGEBACK_CONFIRMED': {
      // What is left goes back to the payer: from the reserve still held, the rest from available.
      // The processor took it from the platform at the opening; the seller now makes that loss good.
      const held = sale.reserveHeld;
      const left = leftToRefund(sale);
      return {
        postings: [
          posting(kind, [
            { account: 'blocked', amount: -held },
            { account: 'available', amount: -(left - held) },
            { account: 'dispute_losses', amount: left },
          ]),
        ],
        update: { reserveHeld: 0, reserveReleaseAt: null },
      };
    }
    case 'MED_OPENED': {
      const blocked = Math.min(paid(sale).netAmount, leftToRefund(sale));
      return {
        postings: [
          posting(kind, [
            { account: 'available', amount: -blocked },
            { account: 'blocked', amount: blocked },
          ]),
        ],
        update: { medBlocked: blocked },
      };
    }
    case 'MED_WON': {
      const won = posting(kind, [
        { account: 'blocked', amount: -sale.medBlocked },
        { account: 'available', amount: sale.medBlocked },
      ]);
      const release = reserveRelease(sale, at);
      return { postings: [won, ...release.postings], update: { ...release.update, medBlocked: 0 } };
    }
    case 'MED_LOST':
      return medLost(sale, posting(kind, []));
    case 'CHARGEBACK_OPENED':
    case 'CHARGEBACK_REVERTED':
      return chargebackMove(kind, sale, at);
  }
}

/**
 * A chargeback opened: the pre-chargeback fine, and the processor's debit of the disputed amount from
 * the platform's funds (CONTRACT §15), the platform's loss until decided. Reverted: the fine stays,
 * the processor credits the amount back, and a reserve that fell due meanwhile is released now.
 */
function chargebackMove(kind: 'CHARGEBACK_OPENED' | 'CHARGEBACK_REVERTED', sale: SaleMoney, at: Date): SalePostings {
  const posting = (name: string, lines: Posting['lines']): Posting => ({ kind: name, sellerId: sale.sellerId, transactionId: sale.id, lines });
  const disputed = leftToRefund(sale);
  if (kind === 'CHARGEBACK_OPENED') {
    const fine = sale.feeSchedule.chargebackFineCents;
    return {
      postings: [
        posting(kind, [
          { account: 'available', amount: -fine },
          { account: 'fee_revenue', amount: fine },
        ]),
        posting('CHARGEBACK_DEBITED', [
          { account: 'customer_funds', amount: disputed },
          { account: 'dispute_losses', amount: -disputed },
        ]),
      ],
      update: {},
    };
  }
  const credited = posting('CHARGEBACK_CREDITED', [
    { account: 'customer_funds', amount: -disputed },
    { account: 'dispute_losses', amount: disputed },
  ]);
  const release = reserveRelease(sale, at);
  return { postings: [credited, ...release.postings], update: release.update };
}

/**
 * What is left goes back to the payer, taken from the MED block, then from the reserve still held;
 * the platform absorbs the rest (the fee and any reserve already released), nothing more from
 * available. After a partial refund the block and the reserve may exceed what is left: the excess
 * returns to available (the reserve is never released after ESTORNADO).
 */
function medLost(sale: SaleMoney, shell: Posting): SalePostings {
  const left = leftToRefund(sale);
  const uncovered = left - sale.medBlocked - sale.reserveHeld;
  return {
    postings: [
      {
        ...shell,
        lines: [
          { account: 'blocked', amount: -sale.medBlocked },
          { account: 'blocked', amount: -sale.reserveHeld },
          { account: 'dispute_losses', amount: -Math.max(uncovered, 0) },
          { account: 'available', amount: Math.max(-uncovered, 0) },
          { account: 'customer_funds', amount: left },
        ],
      },
    ],
    update: { reserveHeld: 0, reserveReleaseAt: null, medBlocked: 0 },
  };
}

/** What a refund or a dispute may still return to the payer (CONTRACT §5a). */
export function leftToRefund(sale: Pick<SaleMoney, 'amount' | 'refundedAmount'>): number {
  return sale.amount - sale.refundedAmount;
}

/** A refund of `amount` requested: the seller's available cents wait in blocked until it settles. */
export function refundRequested(sale: SaleMoney, amount: number): SalePostings {
  return {
    postings: [
      refundPosting(sale, 'REFUND_REQUESTED', [
        { account: 'available', amount: -amount },
        { account: 'blocked', amount },
      ]),
    ],
    update: { refundPending: sale.refundPending + amount },
  };
}

/**
 * The PENDING refund settled. SUCCEEDED: the blocked cents go to the payer, and once the refunds
 * reach the amount (`final`: the sale moves to ESTORNADO) the reserve still held returns to
 * available. FAILED: the cents return to available.
 */
export function refundSettled(sale: SaleMoney, outcome: 'SUCCEEDED' | 'FAILED'): SalePostings & { final: boolean } {
  const amount = sale.refundPending;
  if (outcome === 'FAILED') {
    return {
      postings: [
        refundPosting(sale, 'REFUND_FAILED', [
          { account: 'blocked', amount: -amount },
          { account: 'available', amount },
        ]),
      ],
      update: { refundPending: 0 },
      final: false,
    };
  }
  const refunded = sale.refundedAmount + amount;
  const succeeded = refundPosting(sale, 'REFUND_SUCCEEDED', [
    { account: 'blocked', amount: -amount },
    { account: 'customer_funds', amount },
  ]);
  if (refunded < sale.amount) return { postings: [succeeded], update: { refundPending: 0, refundedAmount: refunded }, final: false };
  const release = refundPosting(sale, 'RESERVE_RELEASE', [
    { account: 'blocked', amount: -sale.reserveHeld },
    { account: 'available', amount: sale.reserveHeld },
  ]);
  return {
    postings: [succeeded, release],
    update: { refundPending: 0, refundedAmount: refunded, reserveHeld: 0, reserveReleaseAt: null },
    final: true,
  };
}

/** Requested and SUCCEEDED in one go (a provider that refunds synchronously, or the operator's word). */
export function refundAtOnce(sale: SaleMoney, amount: number): SalePostings & { final: boolean } {
  const requested = refundRequested(sale, amount);
  const settled = refundSettled({ ...sale, ...requested.update }, 'SUCCEEDED');
  return { postings: [...requested.postings, ...settled.postings], update: { ...requested.update, ...settled.update }, final: settled.final };
}

function refundPosting(sale: SaleMoney, kind: string, lines: Posting['lines']): Posting {
  return { kind, sellerId: sale.sellerId, transactionId: sale.id, lines };
}

function firstPayment(sale: SaleMoney, at: Date, posting: (name: string, lines: Posting['lines']) => Posting): SalePostings {
  const split = splitSale(sale.amount, methodFee(sale.feeSchedule, sale.paymentMethod), sale.feeSchedule.reserveBasisPoints);
  return {
    postings: [
      posting('FIRST_PAYMENT', [
        { account: 'customer_funds', amount: -sale.amount },
        { account: 'available', amount: split.netAmount },
        { account: 'blocked', amount: split.reserveAmount },
        { account: 'fee_revenue', amount: split.systemFee },
      ]),
    ],
    update: {
      ...split,
      reserveHeld: split.reserveAmount,
      reserveReleaseAt: split.reserveAmount > 0 ? new Date(at.getTime() + sale.feeSchedule.reserveDays * day_ms) : null,
    },
  };
}

/** Releases the held reserve when it is due (the sale must be PAGO; the caller checks). */
export function reserveRelease(sale: SaleMoney, at: Date): SalePostings {
  if (sale.reserveHeld === 0 || !sale.reserveReleaseAt || sale.reserveReleaseAt.getTime() > at.getTime()) return none;
  return {
    postings: [
      {
        kind: 'RESERVE_RELEASE',
        sellerId: sale.sellerId,
        transactionId: sale.id,
        lines: [
          { account: 'blocked', amount: -sale.reserveHeld },
          { account: 'available', amount: sale.reserveHeld },
        ],
      },
    ],
    update: { reserveHeld: 0, reserveReleaseAt: null },
  };
}

function paid(sale: SaleMoney): { netAmount: number } {
  if (sale.netAmount === null) throw new Error(`sale ${sale.id}: dispute before any payment split`);
  return { netAmount: sale.netAmount };
}

/**
 * The provider's references of what a move moves (CONTRACT §15), from the fact that caused it: the
 * payment (a Pix's endToEndId, a pspReference, a charge id), the devolução of a MED, the refund's
 * reference at its provider. None for an operator's word: no provider booked it.
 */
export interface MoveRefs {
  payment?: string | null;
  devolucao?: string | null;
  refund?: string | null;
}

function referenceOf(kind: string, refs: MoveRefs): string | null {
  switch (kind) {
    case 'FIRST_PAYMENT':
      return refs.payment ?? null;
    case 'CHARGEBACK_DEBITED':
      return refs.payment ? `${refs.payment}:chargeback` : null;
    case 'CHARGEBACK_CREDITED':
      return refs.payment ? `${refs.payment}:chargeback-reversed` : null;
    case 'MED_LOST':
      return refs.devolucao ?? null;
    case 'REFUND_SUCCEEDED':
      return refs.refund ?? null;
    default:
      return null;
  }
}

/** A sale's postings with its money on `account`'s funds, each line naming the provider's reference of its movement. */
export const postingsAt = (postings: Posting[], account: string | null, refs: MoveRefs): Posting[] =>
  postings.map((p) => atAccount(p, { account, reference: referenceOf(p.kind, refs) }));
