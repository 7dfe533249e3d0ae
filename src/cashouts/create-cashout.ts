import type { Queryable } from '../db/db.ts';
import { cashoutCreatedPosting } from '../domain/cashout-postings.ts';
import { type CashoutRequest, checkCashoutPolicy, type SellerCashoutSettings } from '../domain/cashout-request.ts';
import { ApiError } from '../domain/errors.ts';
import type { FeeSchedule } from '../domain/fees.ts';
import { platformSchedule } from '../fees/fee-settings.ts';
import { postIfCovered } from '../ledger/postings.ts';
import { findSeller } from '../sellers/sellers-repo.ts';
import { type CashoutRow, cashoutMoney } from './cashouts-repo.ts';

/** Where a cashout is asked: `apiWithdrawalEnabled` closes the API only, the seller's panel stays open. */
export type CashoutChannel = 'API' | 'PANEL';

/** The seller's settings that CONTRACT §8 steps 4–7 read, as seen from this channel. */
export async function cashoutSettings(q: Queryable, sellerId: number, channel: CashoutChannel): Promise<SellerCashoutSettings> {
  const seller = (await findSeller(q, sellerId))!;
  return {
    apiWithdrawalEnabled: channel === 'PANEL' || seller.api_withdrawal_enabled,
    transferAllowed: seller.transfer_allowed,
    feeSchedule: (seller.fee_schedule as FeeSchedule | null) ?? (await platformSchedule(q)),
  };
}

/**
 * Creates a PENDING cashout in the caller's transaction (CONTRACT §8 steps 4–8). The debit is one
 * conditional statement (postIfCovered): if the balance does not cover it, nothing is written.
 */
export async function createCashout(
  q: Queryable,
  sellerId: number,
  request: CashoutRequest,
  now: Date,
  channel: CashoutChannel = 'API',
): Promise<CashoutRow> {
  const checked = checkCashoutPolicy(request, await cashoutSettings(q, sellerId, channel));
  if (!checked.ok) throw new ApiError(checked.refusal.code, checked.refusal.message, checked.refusal.details);
  const fees = checked.value;
  const r = await q.query<CashoutRow>(
    `
    INSERT INTO cashouts (seller_id, status, amount, fee_fixed, fee_variable, fee_total, net_amount, pix_key, pix_key_type, created_at, updated_at)
    VALUES ($1, 'PENDING', $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING *`,
    [sellerId, request.amount, fees.fixed, fees.variable, fees.total, fees.net, request.pixKey, request.pixKeyType, now],
  );
  const row = r.rows[0]!;
  const debited = await postIfCovered(q, cashoutCreatedPosting(cashoutMoney(row)));
  // Throwing rolls the insert back with everything else in this transaction.
  if (!debited) throw new ApiError('INSUFFICIENT_BALANCE', 'The available balance does not cover this cashout');
  return row;
}
