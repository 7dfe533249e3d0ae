/**
 * A refund's two moves (CONTRACT §5a), in the transaction move's shape: one read, a pure plan, one
 * statement guarded on the sale row's xmin that writes the refund row, the sale's money columns,
 * the postings and (when the sale reaches ESTORNADO) the status, its event and its notifications.
 */
import type { Queryable } from '../db/db.ts';
import { CONFLICT, retryOnConflict } from '../db/optimistic.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
import { leftToRefund, refundRequested, refundSettled } from '../domain/transaction-postings.ts';
import type { RefundRequester } from './refund-cte.ts';
import { findRefund, type RefundRow } from './refunds-repo.ts';
import { saleMoney, withMoneyUpdate } from './sale-money.ts';
import { type MoveInput, type MovePlan, planMove, readForMove, writeMove } from './transitions.ts';

export interface RefundRequest {
  /** Cents; null: all that is left. */
  amount: number | null;
  requestedBy: RefundRequester;
  /** When given, the sale must be this seller's (403 otherwise). */
  sellerId?: number;
}

/**
 * Records a PENDING refund and moves its cents from available to blocked. Refused (nothing written)
 * unless the sale is PAGO with no refund pending (409), or when the amount exceeds what is left (422).
 */
export async function requestRefund(q: Queryable, id: number, request: RefundRequest, at: Date): Promise<Result<RefundRow>> {
  const made = await retryOnConflict(`transaction ${id}: refund`, async (): Promise<Result<number> | typeof CONFLICT> => {
    const input = await readForMove(q, id);
    if (!input) return refuse('NOT_FOUND', 'Transaction not found');
    if (request.sellerId !== undefined && input.row.seller_id !== request.sellerId)
      return refuse('FORBIDDEN', 'This transaction belongs to another account');
    const amount = refundableAmount(input, request.amount);
    if (!amount.ok) return amount;
    const money = refundRequested(saleMoney(input.row), amount.value);
    const plan: MovePlan = {
      after: withMoneyUpdate({ ...input.row, updated_at: at }, money.update),
      event: null,
      at,
      postings: money.postings,
      outbox: [],
      refund: { kind: 'create', amount: amount.value, status: 'PENDING', requestedBy: request.requestedBy, completedAt: null },
    };
    const refundId = (await writeMove(q, input, plan))?.refundId;
    return refundId ? ok(refundId) : CONFLICT;
  });
  return made.ok ? ok(await mustFind(q, made.value)) : made;
}

function refundableAmount(input: MoveInput, requested: number | null): Result<number> {
  const { row } = input;
  if (row.status !== 'PAGO') return refuse('INVALID_TRANSITION', `Cannot refund a ${row.status} transaction: only PAGO transactions can be refunded`);
  if (row.refund_pending > 0) return refuse('INVALID_TRANSITION', 'Cannot refund this transaction: a refund of it is pending');
  const left = leftToRefund({ amount: row.amount, refundedAmount: row.refunded_amount });
  const amount = requested ?? left;
  if (amount > left)
    return refuse('REFUND_EXCEEDS_AMOUNT', `Refund of ${amount} cents exceeds the ${left} cents left to refund`, [
      { field: 'amount', message: `must be at most ${left} (cents not yet refunded)` },
    ]);
  return ok(amount);
}

/**
 * Settles a PENDING refund as the provider reported it. SUCCEEDED sends its cents to the payer and,
 * once the refunds reach the amount, moves the sale to ESTORNADO (notified); FAILED returns them to
 * available. A refund already settled is left as it is (a repeated callback changes nothing).
 */
export async function settleRefund(
  q: Queryable,
  refundId: number,
  outcome: { status: 'SUCCEEDED' } | { status: 'FAILED'; reason: string },
  at: Date,
): Promise<RefundRow> {
  const transactionId = (await mustFind(q, refundId)).transaction_id;
  await retryOnConflict(`refund ${refundId}: ${outcome.status}`, async () => {
    // The sale first, then the refund: a settlement or a new refund committed in between changes the
    // sale's xmin, so this write cannot settle one refund with another's reading.
    const input = await readForMove(q, transactionId);
    if (!input) throw new Error(`refund ${refundId}: its transaction is gone`);
    const refund = await mustFind(q, refundId);
    if (refund.status !== 'PENDING') return true;
    if (input.row.refund_pending !== Number(refund.amount))
      throw new Error(`refund ${refundId}: ${refund.amount} cents PENDING but the sale holds ${input.row.refund_pending}`);
    const money = refundSettled(saleMoney(input.row), outcome.status);
    const settle = {
      kind: 'settle',
      id: refundId,
      status: outcome.status,
      failureReason: outcome.status === 'FAILED' ? outcome.reason : null,
      completedAt: at,
    } as const;
    const base: MovePlan = money.final
      ? planMove(input, 'ESTORNADO', 'REFUNDED', at)
      : { after: input.row, event: null, at, postings: [], outbox: [], refund: null };
    const plan: MovePlan = {
      ...base,
      after: withMoneyUpdate({ ...base.after, updated_at: at }, money.update),
      postings: money.postings,
      refund: settle,
      refs: { refund: refund.provider_ref },
    };
    return (await writeMove(q, input, plan)) !== null || CONFLICT;
  });
  return mustFind(q, refundId);
}

async function mustFind(q: Queryable, id: number): Promise<RefundRow> {
  const row = await findRefund(q, id);
  if (!row) throw new Error(`refund ${id} not found`);
  return row;
}
