/**
 * Applies one Adyen notification item (CONTRACT §11.2), once: the item is recorded by Adyen's own
 * key (pspReference + eventCode + success) in the same database transaction as the moves it causes,
 * so a resent item changes nothing. Calls it makes Adyen owe (a capture, a reversal) are made after
 * the commit, and sent again by the follow-up job should Adyen not answer.
 */
import type { AppContext } from '../context.ts';
import type { Queryable } from '../db/db.ts';
import { maybeOne } from '../db/sql.ts';
import { ApiError } from '../domain/errors.ts';
import type { TransactionEvent, TransactionStatus } from '../domain/transaction-states.ts';
import { settleRefund } from '../refunds/refund-moves.ts';
import { moveTransaction } from '../transactions/transitions.ts';
import type { AdyenRail } from './adyen-rail.ts';
import { capturePayment } from './card-processor.ts';
import { AdyenError } from './client.ts';
import { actionOf, type NotificationAction, type NotificationItem } from './event-mapping.ts';
import { eventsToPaid, eventsToRefused } from './payment-request.ts';

/** Outcomes that begin so need a person: the log shows them as errors. */
export const for_operator = 'FOR THE OPERATOR:';

interface CardSale {
  id: number;
  status: TransactionStatus;
  amount: number;
  external_transaction_id: string;
  capture_ref: string | null;
}

/** What applying an item decided: its words for the record, and the call owed to Adyen after the commit. */
interface Applied {
  outcome: string;
  saleId: number | null;
  followup: 'REVERSAL' | 'CAPTURE' | null;
}

export async function applyAdyenItem(ctx: AppContext, rail: AdyenRail, item: NotificationItem): Promise<string> {
  const action = actionOf(item);
  const at = ctx.clock.now();
  const applied = await ctx.db.tx(async (q) => {
    const recorded = await q.query(
      `INSERT INTO adyen_notifications (psp_reference, event_code, success, original_reference, merchant_reference, amount, currency, outcome, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'applying', $8) ON CONFLICT DO NOTHING`,
      [
        item.pspReference,
        item.eventCode,
        item.success === 'true',
        item.originalReference ?? null,
        item.merchantReference,
        item.amount?.value ?? null,
        item.amount?.currency ?? null,
        at,
      ],
    );
    if (recorded.rowCount === 0) return null;
    const result = await decide(q, rail, item, action, at);
    await q.query(
      `UPDATE adyen_notifications SET outcome = $4, transaction_id = $5, followup = $6
       WHERE psp_reference = $1 AND event_code = $2 AND success = $3`,
      [item.pspReference, item.eventCode, item.success === 'true', result.outcome, result.saleId, result.followup === 'REVERSAL' ? 'REVERSAL' : null],
    );
    return result;
  });
  if (applied === null) return 'already applied';
  if (applied.followup && applied.saleId !== null) await owedCall(ctx, rail, item, applied).catch(() => {});
  return applied.outcome;
}

async function decide(q: Queryable, rail: AdyenRail, item: NotificationItem, action: NotificationAction, at: Date): Promise<Applied> {
  if (action.kind === 'ignore') return { outcome: `ignored: ${action.why}`, saleId: null, followup: null };
  if (action.kind === 'refund') return settleAdyenRefund(q, item, action.outcome, at);
  const sale = await findSale(q, item, action.kind === 'dispute');
  if (!sale) return { outcome: 'ignored: no card sale of this gateway has this payment', saleId: null, followup: null };
  const plan = planFor(rail, sale, item, action);
  // Money that goes back is not this sale's payment: the sale keeps its own ids.
  if (action.kind === 'authorisation' && action.authorised && plan.followup !== 'REVERSAL') {
    await q.query(
      `UPDATE transactions SET external_transaction_id = $2, provider_data = coalesce(provider_data, '{}'::jsonb) || '{"authorised": true}' WHERE id = $1`,
      [sale.id, item.pspReference],
    );
  }
  const moved = await applyEvents(q, sale.id, plan.events, at);
  return { outcome: [plan.note, moved].filter(Boolean).join('; ') || 'nothing to change', saleId: sale.id, followup: plan.followup };
}

interface Plan {
  events: TransactionEvent[];
  followup: Applied['followup'];
  note: string | null;
}

/** Pure given the sale as read: the moves an item causes and what the gateway then owes Adyen. */
function planFor(rail: AdyenRail, sale: CardSale, item: NotificationItem, action: Exclude<NotificationAction, { kind: 'ignore' | 'refund' }>): Plan {
  const none: Plan = { events: [], followup: null, note: null };
  switch (action.kind) {
    case 'authorisation': {
      if (!action.authorised) return { ...none, events: eventsToRefused(sale.status) };
      if (item.amount.value !== sale.amount || item.amount.currency !== 'BRL')
        return {
          ...none,
          followup: 'REVERSAL',
          note: `authorised ${item.amount.value} ${item.amount.currency} for a sale of ${sale.amount} BRL: returned`,
        };
      const paid = eventsToPaid(sale.status);
      if (paid === null) return { ...none, followup: 'REVERSAL', note: `authorised for a ${sale.status} sale: returned` };
      if (rail.connection.capture === 'automatic') return { ...none, events: paid };
      // Manual capture: the sale waits in EM_PROCESSAMENTO (or FALHA) for its capture.
      const waiting = sale.status === 'PENDENTE' ? (['SENT_TO_PROCESSOR'] as TransactionEvent[]) : [];
      return { events: waiting, followup: paid.length > 0 && !sale.capture_ref ? 'CAPTURE' : null, note: null };
    }
    case 'capture': {
      if (!action.captured)
        return sale.status === 'PAGO'
          ? { ...none, note: `${for_operator} capture failed for a PAGO sale` }
          : { ...none, events: ['PROCESSING_ERROR'] };
      const paid = eventsToPaid(sale.status);
      return paid === null ? { ...none, followup: 'REVERSAL', note: `captured for a ${sale.status} sale: returned` } : { ...none, events: paid };
    }
    case 'cancellation':
      return { ...none, events: sale.status === 'PENDENTE' || sale.status === 'FALHA' ? ['CANCELLED'] : [] };
    case 'dispute':
      return { ...none, events: disputeEvents(sale.status, action.step) };
  }
}

function disputeEvents(status: TransactionStatus, step: 'opened' | 'reversed' | 'lost'): TransactionEvent[] {
  if (step === 'opened') return status === 'PAGO' ? ['CHARGEBACK_OPENED'] : [];
  if (step === 'reversed') return status === 'CHARGEBACK' ? ['CHARGEBACK_REVERTED'] : [];
  if (status === 'PAGO') return ['CHARGEBACK_OPENED', 'CHARGEBACK_CONFIRMED'];
  return status === 'CHARGEBACK' ? ['CHARGEBACK_CONFIRMED'] : [];
}

async function applyEvents(q: Queryable, saleId: number, events: TransactionEvent[], at: Date): Promise<string> {
  const said: string[] = [];
  for (const event of events) {
    const moved = await moveTransaction(q, saleId, event, at);
    if (moved.kind === 'moved') said.push(`${event}: ${moved.from} → ${moved.row.status}`);
    else if (moved.kind === 'refused') {
      // A refund of the sale still PENDING holds the move back, not for ever: the whole item is rolled
      // back and Adyen, answered 503, sends it again later.
      if (moved.row.refund_pending > 0)
        throw new ApiError('SERVICE_UNAVAILABLE', `${event} waits for a pending refund of sale ${saleId}; send again later`);
      said.push(`${event} refused: ${moved.reason}`);
      break;
    }
  }
  return said.join('; ');
}

/**
 * The payment's own pspReference is the item's originalReference for a modification, its pspReference
 * otherwise. Before Adyen's answer was recorded the sale is known by our reference: the sale id (a
 * payment's merchantReference) or `capture-{id}` (a capture's). A dispute may carry a pspReference of
 * its own and no originalReference; it keeps the payment's merchantReference, which is then enough.
 */
async function findSale(q: Queryable, item: NotificationItem, byReference: boolean): Promise<CardSale | null> {
  const refs = [item.originalReference, item.pspReference].filter((r): r is string => typeof r === 'string' && r !== '');
  const columns = `id, status, amount, external_transaction_id, provider_data->>'captureRef' AS capture_ref`;
  const adyen = `payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') AND provider_data->>'provider' = 'adyen'`;
  const byPsp = maybeOne(
    await q.query<CardSale>(`SELECT ${columns} FROM transactions WHERE external_transaction_id = ANY($1::text[]) AND ${adyen} LIMIT 1`, [refs]),
  );
  const id = /^(?:capture-)?(\d{1,18})$/.exec(item.merchantReference)?.[1];
  if (byPsp || !id) return byPsp;
  return maybeOne(
    await q.query<CardSale>(
      `SELECT ${columns} FROM transactions WHERE id = $1::bigint AND (external_transaction_id = $2 OR $3::boolean) AND ${adyen}`,
      [id, id, byReference],
    ),
  );
}

async function settleAdyenRefund(
  q: Queryable,
  item: NotificationItem,
  outcome: { status: 'SUCCEEDED' } | { status: 'FAILED'; reason: string },
  at: Date,
): Promise<Applied> {
  const id = /^refund-(\d{1,18})$/.exec(item.merchantReference)?.[1];
  const refund = id
    ? maybeOne(
        await q.query<{ id: number; status: string; transaction_id: number; external_transaction_id: string }>(
          `SELECT r.id, r.status, r.transaction_id, t.external_transaction_id FROM refunds r JOIN transactions t ON t.id = r.transaction_id WHERE r.id = $1`,
          [id],
        ),
      )
    : null;
  // The refund must be of the payment the item names: a reference alone is not enough.
  if (!refund || (item.originalReference && refund.external_transaction_id !== item.originalReference))
    return { outcome: 'ignored: no refund of this gateway has this reference', saleId: null, followup: null };
  if (refund.status === 'SUCCEEDED' && outcome.status === 'FAILED')
    // The scheme sent back a refund after it succeeded: the payer was not paid back. Not undone here.
    return {
      outcome: `${for_operator} refund ${refund.id} failed after it SUCCEEDED: ${outcome.reason}`,
      saleId: Number(refund.transaction_id),
      followup: null,
    };
  if (refund.status !== 'PENDING')
    return { outcome: `refund ${refund.id} already ${refund.status}`, saleId: Number(refund.transaction_id), followup: null };
  const settled = await settleRefund(q, Number(refund.id), outcome, at);
  return { outcome: `refund ${refund.id} ${settled.status}`, saleId: Number(refund.transaction_id), followup: null };
}

/** After the commit: the capture (manual capture) or the return of money a sale cannot take. */
async function owedCall(ctx: AppContext, rail: AdyenRail, item: NotificationItem, applied: Applied): Promise<void> {
  const saleId = applied.saleId!;
  if (applied.followup === 'CAPTURE') {
    const psp = item.pspReference;
    const captured = await capturePayment(rail.client, rail.connection, saleId, psp, item.amount.value);
    await ctx.db.query(`UPDATE transactions SET provider_data = provider_data || jsonb_build_object('captureRef', $2::text) WHERE id = $1`, [
      saleId,
      captured.pspReference,
    ]);
    return;
  }
  await sendReversal(ctx, rail, {
    psp_reference: item.pspReference,
    original_reference: item.originalReference ?? null,
    event_code: item.eventCode,
    success: item.success === 'true',
  });
}

export interface OwedReversal {
  psp_reference: string;
  original_reference: string | null;
  event_code: string;
  success: boolean;
}

/** Returns a payment to the shopper (Adyen cancels it if uncaptured, refunds it otherwise); recorded once done. */
export async function sendReversal(ctx: AppContext, rail: AdyenRail, owed: OwedReversal): Promise<void> {
  // A modification's item names the payment as its originalReference; an AUTHORISATION is the payment.
  const payment = owed.original_reference || owed.psp_reference;
  const body = { merchantAccount: rail.connection.merchantAccount, reference: `reversal-${payment}` };
  let note = '';
  try {
    await rail.client.modify('reversals', payment, body, `reversal-${payment}`);
  } catch (error) {
    // Adyen's refusal is final (nothing left to reverse, or not its payment): recorded for the operator, not retried.
    if (!(error instanceof AdyenError) || error.retryable) throw error;
    note = `; reversal refused: ${error.message.slice(0, 200)}`;
  }
  await ctx.db.query(
    `UPDATE adyen_notifications SET followup_done_at = $4, outcome = outcome || $5
     WHERE psp_reference = $1 AND event_code = $2 AND success = $3 AND followup_done_at IS NULL`,
    [owed.psp_reference, owed.event_code, owed.success, ctx.clock.now(), note],
  );
}
