/**
 * A PSP's word on a payout applied to its cashout (CONTRACT §11.3, §14), in the caller's
 * transaction: the cashout locked, the plan made (pure), its moves written with their postings and
 * outbox rows, or money returned after the payout credited back.
 */
import type { Queryable } from '../db/db.ts';
import { maybeOne, run, sql } from '../db/sql.ts';
import { cashoutReturnedPosting } from '../domain/cashout-postings.ts';
import { atAccount } from '../domain/ledger.ts';
import { type PayoutPlan, planPayoutFact } from '../domain/payout-plans.ts';
import type { Fact } from '../domain/provider-facts.ts';
import { postingsCte } from '../ledger/postings.ts';
import { type CashoutRow, cashoutMoney } from './cashouts-repo.ts';
import { moveCashout } from './transitions.ts';

type PayoutFact = Extract<Fact, { kind: 'PAYOUT_OUTCOME' | 'PAYOUT_RETURNED' }>;

export async function lockCashout(q: Queryable, id: number): Promise<CashoutRow | null> {
  return maybeOne(await run<CashoutRow>(q, sql`SELECT * FROM cashouts WHERE id = ${id} FOR UPDATE`));
}

/** Applies the fact to its cashout; answers the plan and the cashout it concerned (null when unknown). */
export async function applyPayoutFact(q: Queryable, fact: PayoutFact, at: Date): Promise<{ plan: PayoutPlan; cashoutId: number | null }> {
  const row = await lockCashout(q, fact.cashoutId);
  const plan = planPayoutFact(fact, row && { id: row.id, status: row.status, netAmount: row.net_amount, returnedAmount: row.returned_amount });
  if (!row || plan.state !== 'applied') return { plan, cashoutId: row?.id ?? null };
  if (fact.kind === 'PAYOUT_OUTCOME') {
    const providerData = { ...(row.provider_data ?? {}), idEnvio: fact.idEnvio, status: fact.status, endToEndId: fact.endToEndId };
    for (const event of plan.events) {
      const moved = await moveCashout(q, row.id, event, at, { externalId: fact.endToEndId, providerData, failureReason: fact.reason });
      if (moved.kind === 'refused' || moved.kind === 'not_found') throw new Error(`cashout ${row.id}: ${event} planned, yet ${moved.kind}`);
    }
  }
  if (plan.returned > 0) await creditReturn(q, row, plan.returned, fact.kind === 'PAYOUT_RETURNED' ? fact.returnId : null);
  return { plan, cashoutId: row.id };
}

/** Money back from the receiver's bank: the seller's available balance, in one statement with the cashout's running total. */
async function creditReturn(q: Queryable, row: CashoutRow, amount: number, returnId: string | null): Promise<void> {
  await run(
    q,
    sql`WITH returned AS (
      UPDATE cashouts SET returned_amount = returned_amount + ${amount} WHERE id = ${row.id} RETURNING id
    ), ${postingsCte([atAccount(cashoutReturnedPosting(cashoutMoney(row), amount), { account: row.account, reference: returnId })], 'returned')}
    SELECT (SELECT count(*) FROM returned)::int AS n`,
  );
}
