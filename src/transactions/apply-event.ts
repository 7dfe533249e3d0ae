import type { AppContext } from '../context.ts';
import { maybeOne, raw, run, sql } from '../db/sql.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
import type { TransactionEvent } from '../domain/transaction-states.ts';
import { med_columns } from './med-view.ts';
import { transactionView } from './transaction-view.ts';
import type { TransactionRow } from './transactions-repo.ts';
import { moveTransaction } from './transitions.ts';

type TransactionView = ReturnType<typeof transactionView>;

/** Applies an event and answers with the transaction; a refused move (409) changes nothing. With `sellerId`, the sale must be that seller's. */
export async function applyEvent(ctx: AppContext, id: number, event: TransactionEvent, sellerId?: number): Promise<Result<TransactionView>> {
  let foreign = false;
  const result = await moveTransaction(ctx.db, id, event, ctx.clock.now(), (row) => {
    foreign = sellerId !== undefined && row.seller_id !== sellerId;
    // Another seller's sale is not looked at further: nothing is written.
    return !foreign;
  });
  if (result.kind === 'not_found') return refuse('NOT_FOUND', 'Transaction not found');
  if (foreign) return refuse('FORBIDDEN', 'This transaction belongs to another account');
  if (result.kind === 'refused') return refuse('INVALID_TRANSITION', `Cannot apply ${event} to a ${result.row.status} transaction: ${result.reason}`);
  return ok(transactionView(await withMed(ctx, result.row), result.items));
}

/** A sale's MED as it stands after the move (the move's own row is computed, not read back). */
async function withMed(ctx: AppContext, row: TransactionRow): Promise<TransactionRow> {
  // A boleto's Pix can be contested too (its infraction is then the operator's, but the read shows it).
  if (row.payment_method !== 'PIX' && row.payment_method !== 'BOLETO') return row;
  const med = maybeOne(
    await run<Pick<TransactionRow, 'med_infraction' | 'med_history'>>(
      ctx.db,
      sql`SELECT ${raw(med_columns)} FROM transactions t WHERE t.id = ${row.id}`,
    ),
  );
  return { ...row, ...med };
}
