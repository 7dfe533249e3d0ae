/**
 * CONTRACT §5's posting table for transactions, as pure functions: given a sale's money state and
 * a move, the postings to write and the sale's new money state. Every row is one balanced posting.
 */
import { type FeeSchedule, methodFee, splitSale } from './fees.ts';
import type { Posting } from './ledger.ts';
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
}

export interface MoneyUpdate {
  systemFee?: number;
  reserveAmount?: number;
  netAmount?: number;
  reserveHeld?: number;
  reserveReleaseAt?: Date | null;
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
    case 'CHARGEBACK_CONFIRMED': {
      // The seller gives back the whole amount; the fee is not returned.
      const held = sale.reserveHeld;
      return {
        postings: [
          posting(kind, [
            { account: 'blocked', amount: -held },
            { account: 'available', amount: -(sale.amount - held) },
            { account: 'customer_funds', amount: sale.amount },
          ]),
        ],
        update: { reserveHeld: 0, reserveReleaseAt: null },
      };
    }
    case 'MED_OPENED': {
      const net = paid(sale).netAmount;
      return {
        postings: [
          posting(kind, [
            { account: 'available', amount: -net },
            { account: 'blocked', amount: net },
          ]),
        ],
        update: {},
      };
    }
    case 'MED_WON': {
      const net = paid(sale).netAmount;
      const won = posting(kind, [
        { account: 'blocked', amount: -net },
        { account: 'available', amount: net },
      ]);
      const release = reserveRelease(sale, at);
      return { postings: [won, ...release.postings], update: release.update };
    }
    case 'MED_LOST': {
      // Nothing more from available: the platform absorbs the fee and any reserve already released.
      const { netAmount: net } = paid(sale);
      const held = sale.reserveHeld;
      return {
        postings: [
          posting(kind, [
            { account: 'blocked', amount: -net },
            { account: 'blocked', amount: -held },
            { account: 'dispute_losses', amount: -(sale.amount - net - held) },
            { account: 'customer_funds', amount: sale.amount },
          ]),
        ],
        update: { reserveHeld: 0, reserveReleaseAt: null },
      };
    }
    case 'CHARGEBACK_OPENED': {
      const fine = sale.feeSchedule.chargebackFineCents;
      return {
        postings: [
          posting(kind, [
            { account: 'available', amount: -fine },
            { account: 'fee_revenue', amount: fine },
          ]),
        ],
        update: {},
      };
    }
    case 'CHARGEBACK_REVERTED':
      // No posting of its own (the fine stays); a reserve that fell due meanwhile is released now.
      return reserveRelease(sale, at);
  }
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
