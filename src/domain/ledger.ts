/**
 * Postings of the double-entry ledger, as values. Each line raises (+) or lowers (−) one account;
 * a posting's lines sum to zero. Pure: the SQL that writes them lives in src/ledger.
 */
export const SELLER_ACCOUNTS = ['available', 'blocked'] as const;
export const PLATFORM_ACCOUNTS = ['customer_funds', 'fee_revenue', 'payouts', 'dispute_losses', 'unclaimed_funds'] as const;
export type SellerAccount = (typeof SELLER_ACCOUNTS)[number];
export type PlatformAccount = (typeof PLATFORM_ACCOUNTS)[number];
/**
 * The platform's money at one provider account (CONTRACT §15), and what that provider charged the
 * platform there. Plain `customer_funds` is money of no known account (history before accounts).
 */
export type FundsAccount = `customer_funds:${string}` | `provider_fees:${string}`;
export type Account = SellerAccount | PlatformAccount | FundsAccount;

export interface PostingLine {
  account: Account;
  amount: number;
  /** The provider's reference of the movement, on a line that moves an account's money (null: none, e.g. an operator's word). */
  reference?: string | null;
}

export interface Posting {
  kind: string;
  /** Null: the platform's own posting (a provider's fee). */
  sellerId: number | null;
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

/** Where a sale's or cashout's money moves: the account's funds, and the provider's reference of this movement. */
export interface MoneyAt {
  /** The provider account, null when none is known (rows of before accounts). */
  account: string | null;
  reference: string | null;
}

export const fundsOf = (account: string | null): Account => (account ? `customer_funds:${account}` : 'customer_funds');

/**
 * The posting with its customer_funds lines moved to the account's funds, each naming `reference`.
 * The posting table of CONTRACT §5 is written against one customer_funds; §15 splits it per account.
 */
export function atAccount(posting: Posting, at: MoneyAt | undefined): Posting {
  if (!at) return posting;
  return {
    ...posting,
    lines: posting.lines.map((l) => (l.account === 'customer_funds' ? { ...l, account: fundsOf(at.account), reference: at.reference } : l)),
  };
}
