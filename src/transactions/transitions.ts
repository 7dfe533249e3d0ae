import type { Queryable } from '../db/db.ts';
import { applyTransactionEvent, type TransactionEvent, type TransactionStatus } from '../domain/transaction-states.ts';
import { findTransaction, type TransactionRow } from './transactions-repo.ts';
import { transitionEffects } from './effects.ts';

export type MoveResult =
  | { kind: 'moved'; row: TransactionRow; from: TransactionStatus }
  | { kind: 'noop'; row: TransactionRow }
  | { kind: 'refused'; row: TransactionRow; reason: string }
  | { kind: 'not_found' };

/** What an effect (ledger postings, outbox rows) sees of one status change. */
export interface TransactionMove {
  before: TransactionRow;
  after: TransactionRow;
  event: TransactionEvent;
  at: Date;
}

const move_sql = `
  WITH moved AS (
    UPDATE transactions SET status = $2, last_event = $3, updated_at = $4,
      completed_at = CASE WHEN $2 = 'PAGO' THEN coalesce(completed_at, $4) ELSE completed_at END
    WHERE id = $1
    RETURNING *, boleto_due_date::text AS boleto_due_date
  ), logged AS (
    INSERT INTO transaction_events (transaction_id, event, from_status, to_status, created_at)
    SELECT id, $3, $5, $2, $4 FROM moved
  )
  SELECT * FROM moved`;

/**
 * The one place a transaction changes status. It locks the row, so two events on one transaction
 * are serialized and a sale is never paid twice; then, in the caller's database transaction, it
 * writes the move and runs every effect (ledger postings, outbox rows) of that move.
 */
export async function moveTransaction(q: Queryable, id: number, event: TransactionEvent, at: Date): Promise<MoveResult> {
  const before = await findTransaction(q, id, true);
  if (!before) return { kind: 'not_found' };
  const outcome = applyTransactionEvent({ status: before.status, paymentMethod: before.payment_method, lastEvent: before.last_event }, event);
  if (outcome.kind === 'noop') return { kind: 'noop', row: before };
  if (outcome.kind === 'refused') return { kind: 'refused', row: before, reason: outcome.reason };
  const r = await q.query<TransactionRow>(move_sql, [id, outcome.to, event, at, before.status]);
  let after = r.rows[0]!;
  for (const effect of transitionEffects) after = (await effect(q, { before, after, event, at })) ?? after;
  return { kind: 'moved', row: after, from: before.status };
}
