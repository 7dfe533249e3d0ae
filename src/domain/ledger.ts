/**
 * Postings of the double-entry ledger, as values. Each line raises (+) or lowers (−) one account;
 * a posting's lines sum to zero. Pure: the SQL that writes them lives in src/ledger.
 */
export const SELLER_ACCOUNTS = ['available', 'blocked'] as const;
export const PLATFORM_ACCOUNTS = ['customer_funds', 'fee_revenue', 'payouts', 'dispute_losses'] as const;
export type SellerAccount = (typeof SELLER_ACCOUNTS)[number];
export type PlatformAccount = (typeof PLATFORM_ACCOUNTS)[number];
export type Account = SellerAccount | PlatformAccount;

export interface PostingLine {
  account: Account;
  amount: number;
}

export interface Posting {
  kind: string;
  sellerId: number;
  transactionId?: number | null;
  cashoutId?: number | null;
  lines: PostingLine[];
}

/** Thrown only for bugs: a use case built a posting that cannot be right. */
export class LedgerInvariantError extends Error {}

export function assertBalanced(posting: Posting): void {
  let sum = 0n;
  for (const line of posting.lines) {
    if (!Number.isSafeInteger(line.amount)) throw new LedgerInvariantError(`${posting.kind}: amount ${line.amount} is not integer cents`);
    sum += BigInt(line.amount);
  }
  if (sum !== 0n) throw new LedgerInvariantError(`${posting.kind}: lines sum to ${sum}, not 0`);
}

/** Drops zero lines (a fee of 0, a reserve of 0): the journal keeps only real movements. */
export function withoutZeroLines(posting: Posting): Posting {
  return { ...posting, lines: posting.lines.filter((l) => l.amount !== 0) };
}

export interface BalanceDelta {
  available: number;
  blocked: number;
}

export function sellerDelta(posting: Posting): BalanceDelta {
  const delta = { available: 0, blocked: 0 };
  for (const line of posting.lines) {
    if (line.account === 'available' || line.account === 'blocked') delta[line.account] += line.amount;
  }
  return delta;
}
