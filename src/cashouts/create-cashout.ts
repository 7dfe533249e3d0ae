import type { Queryable } from '../db/db.ts';
import { one, run, sql } from '../db/sql.ts';
import { cashoutCreatedPosting } from '../domain/cashout-postings.ts';
import { type CashoutRequest, checkCashoutPolicy, type SellerCashoutSettings } from '../domain/cashout-request.ts';
import type { FeeSchedule } from '../domain/fees.ts';
import type { ProviderName } from '../domain/provider-facts.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
import { platformSchedule } from '../fees/fee-settings.ts';
import { postIfCovered } from '../ledger/postings.ts';
import { findSeller } from '../sellers/sellers-repo.ts';
import { type CashoutRow, cashoutMoney } from './cashouts-repo.ts';
import { firstCheck } from './payout-schedule.ts';

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
 * Creates a PENDING cashout in the caller's transaction (CONTRACT §8 steps 4–8), to be paid by
 * the payout `account`. The debit is one conditional statement (postIfCovered): if the balance does not cover
 * it, the refusal is answered and the caller's transaction (or savepoint) drops the row.
 */
export async function createCashout(
  q: Queryable,
  sellerId: number,
  request: CashoutRequest,
  now: Date,
  account: { id: string; connector: ProviderName },
  channel: CashoutChannel = 'API',
): Promise<Result<CashoutRow>> {
  const checked = checkCashoutPolicy(request, await cashoutSettings(q, sellerId, channel));
  if (!checked.ok) return checked;
  const fees = checked.value;
  const r = await run<CashoutRow>(
    q,
    sql`INSERT INTO cashouts (seller_id, status, amount, fee_fixed, fee_variable, fee_total, net_amount, pix_key, pix_key_type, created_at, updated_at,
          provider, account, next_check_at)
        VALUES (${sellerId}, 'PENDING', ${request.amount}, ${fees.fixed}, ${fees.variable}, ${fees.total}, ${fees.net}, ${request.pixKey},
          ${request.pixKeyType}, ${now}, ${now}, ${account.connector}, ${account.id}, ${firstCheck(now)}) RETURNING *`,
  );
  const row = one(r);
  const debited = await postIfCovered(q, cashoutCreatedPosting(cashoutMoney(row)));
  return debited ? ok(row) : refuse('INSUFFICIENT_BALANCE', 'The available balance does not cover this cashout');
}
