/**
 * The one apply step of every provider's facts (CONTRACT §14): the fact is stored once (a repeat
 * changes nothing), what it concerns is found and locked, its plan is made (pure) and written in
 * the same transaction: the sale's moves with their postings and outbox rows, a refund settled,
 * or the fact held or left for the operator. Once a sale moves, its held facts are tried again, in
 * order, in that same transaction. Calls the gateway then owes the provider follow after the commit.
 */
import { applyPayoutFact } from '../../cashouts/payout-moves.ts';
import type { AppContext } from '../../context.ts';
import type { Queryable } from '../../db/db.ts';
import { type FactPlan, planRefundFact, planSaleFact, type SaleSnapshot, unknownSale } from '../../domain/fact-plans.ts';
import type { Fact, FactState, ProviderFact } from '../../domain/provider-facts.ts';
import type { MoveRefs } from '../../domain/transaction-postings.ts';
import { unclaimedReceived, unclaimedReturned } from '../../ledger/unclaimed.ts';
import { settleRefund } from '../../transactions/refund-moves.ts';
import { moveTransaction } from '../../transactions/transitions.ts';
import { planRecordedInfraction } from '../med/infraction-record.ts';
import { sendFollowup } from './followups.ts';
import { findByIdentity, heldOf, recordOnce, type Settled, type StoredEvent, setFollowup, settleEvent, unclaimedOf } from './store.ts';
import { lockRefund, lockSale, lockSaleById, nameSale } from './subjects.ts';

export interface AppliedFact {
  eventId: number | null;
  /** `repeat`: the provider told this before; nothing changed. */
  state: FactState | 'repeat';
  reason: string | null;
  transactionId: number | null;
}

// A held fact may wait for another held one of its sale (a reversal for its chargeback): passes over them until none moves.
const max_held_passes = 5;

export async function applyProviderFact(ctx: AppContext, pf: ProviderFact): Promise<AppliedFact> {
  const at = ctx.clock.now();
  const owed: StoredEvent[] = [];
  const result = await ctx.db.tx(async (q) => {
    owed.length = 0;
    const event = await recordOnce(q, pf, at);
    if (!event) return null;
    const settled = await applyStored(q, event, at);
    await settleEvent(q, event.id, settled, at);
    if (settled.followup) owed.push(event);
    if (settled.transactionId !== null && settled.state !== 'held') owed.push(...(await applyHeld(q, settled.transactionId, at)));
    return { event, settled };
  });
  // Made after the commit; the followup job sends again what does not get through now.
  for (const event of owed) await sendFollowup(ctx, event.id).catch(() => {});
  if (!result) return { eventId: null, state: 'repeat', reason: null, transactionId: null };
  return { eventId: result.event.id, state: result.settled.state, reason: result.settled.reason, transactionId: result.settled.transactionId };
}

/** Tries the held facts of a sale again, oldest first; answers those that now owe the provider a call. */
export async function applyHeld(q: Queryable, transactionId: number, at: Date): Promise<StoredEvent[]> {
  const owed: StoredEvent[] = [];
  // The sale before its facts: the order a move takes (its statement marks the held facts), so neither waits on the other.
  if (!(await lockSaleById(q, transactionId))) return owed;
  for (let pass = 0; pass < max_held_passes; pass++) {
    let moved = false;
    for (const event of await heldOf(q, transactionId)) {
      const settled = await applyStored(q, event, at);
      await settleEvent(q, event.id, settled, at);
      if (settled.followup) owed.push(event);
      moved ||= settled.state !== 'held';
    }
    if (!moved) break;
  }
  return owed;
}

/** The sale a fact concerns, found by what the provider named. */
async function saleOf(q: Queryable, event: StoredEvent, fact: Fact): Promise<SaleSnapshot | null> {
  if (event.transaction_id !== null) return lockSaleById(q, Number(event.transaction_id));
  return 'sale' in fact ? lockSale(q, event.provider, fact.sale) : null;
}

const outcome = (plan: FactPlan, transactionId: number | null, refundId: number | null = null): Settled => ({
  state: plan.state,
  reason: plan.reason,
  transactionId,
  refundId,
  followup: plan.followup,
});

async function applyStored(q: Queryable, event: StoredEvent, at: Date): Promise<Settled> {
  const { fact } = event;
  switch (fact.kind) {
    case 'NOTICE':
      return { state: 'applied', reason: null, transactionId: null, refundId: null, followup: null };
    case 'REFUND': {
      const refund = fact.refundId === null ? null : await lockRefund(q, event.provider, fact.refundId);
      const plan = planRefundFact(fact, refund);
      if (plan.settle && refund) await settleRefund(q, refund.id, plan.settle, at);
      return outcome(plan, refund?.transactionId ?? null, refund?.id ?? null);
    }
    case 'PIX_RETURN':
      return applyReturn(q, event, fact, at);
    case 'PAYOUT_OUTCOME':
    case 'PAYOUT_RETURNED': {
      const { plan, cashoutId } = await applyPayoutFact(q, fact, at);
      return { state: plan.state, reason: plan.reason, transactionId: null, refundId: null, cashoutId, followup: null };
    }
    case 'INFRACTION':
      return applySaleFact(q, event, fact, at, (sale) => planRecordedInfraction(q, fact, sale, at));
    default: {
      const settled = await applySaleFact(q, event, fact, at);
      // A Pix of ours the sale cannot take: at the PSP's account now, owed back to its payer.
      if (fact.kind === 'PIX_RECEIVED' && settled.followup === 'RETURN')
        await unclaimedReceived(q, { account: fact.account ?? null, endToEndId: fact.endToEndId, amount: fact.amount });
      return settled;
    }
  }
}

async function applySaleFact(
  q: Queryable,
  event: StoredEvent,
  fact: Fact,
  at: Date,
  planOf: (sale: SaleSnapshot) => Promise<FactPlan> = async (sale) => planSaleFact(fact, sale),
): Promise<Settled> {
  const sale = await saleOf(q, event, fact);
  if (!sale) return outcome(unknownSale(fact), null);
  const plan = await planOf(sale);
  if (plan.state !== 'held') {
    if (plan.naming) await nameSale(q, sale.id, plan.naming);
    for (const move of plan.events) {
      const moved = await moveTransaction(q, sale.id, move, at, undefined, refsOf(fact));
      // The plan was checked against the locked row: a refusal now is a bug, and rolls everything back.
      if (moved.kind === 'refused' || moved.kind === 'not_found') throw new Error(`sale ${sale.id}: ${move} planned, yet ${moved.kind}`);
    }
  }
  return outcome(plan, sale.id);
}

/** How our return of a Pix ended: recorded on the Pix's own fact. */
async function applyReturn(q: Queryable, event: StoredEvent, fact: Extract<Fact, { kind: 'PIX_RETURN' }>, at: Date): Promise<Settled> {
  const received = await findByIdentity(q, event.provider, fact.endToEndId);
  if (received?.followup !== 'RETURN')
    return { state: 'needs_operator', reason: 'a return of a Pix the gateway never asked for', transactionId: null, refundId: null, followup: null };
  await setFollowup(q, received.id, fact.status, fact.detail, at);
  if (fact.status === 'DONE') await unclaimedReturned(q, unclaimedOf(received), fact.returnId ?? null);
  return { state: 'applied', reason: null, transactionId: received.transaction_id, refundId: null, followup: null };
}

/** The provider's references of the money a fact moves (CONTRACT §15): what its record names. */
function refsOf(fact: Fact): MoveRefs {
  switch (fact.kind) {
    case 'PIX_RECEIVED':
      return { payment: fact.endToEndId };
    case 'AUTHORISATION':
    case 'CAPTURE':
    case 'CARD_ANSWER':
      return { payment: fact.paymentId };
    case 'BOLETO_STATUS':
      return { payment: fact.chargeId };
    case 'MED':
      return { devolucao: fact.returnId ?? fact.devolucaoId };
    default:
      return {};
  }
}
