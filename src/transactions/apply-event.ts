import type { AppContext } from '../context.ts';
import { ApiError } from '../domain/errors.ts';
import type { TransactionEvent } from '../domain/transaction-states.ts';
import { transactionView } from './transaction-view.ts';
import { moveTransaction } from './transitions.ts';

/** Applies an event and answers with the transaction; a refused move is 409 and changes nothing. */
export async function applyEvent(ctx: AppContext, id: number, event: TransactionEvent, sellerId?: number) {
  const result = await moveTransaction(ctx.db, id, event, ctx.clock.now(), (row) => {
    if (sellerId !== undefined && row.seller_id !== sellerId) throw new ApiError('FORBIDDEN', 'This transaction belongs to another account');
  });
  if (result.kind === 'not_found') throw new ApiError('NOT_FOUND', 'Transaction not found');
  if (result.kind === 'refused')
    throw new ApiError('INVALID_TRANSITION', `Cannot apply ${event} to a ${result.row.status} transaction: ${result.reason}`);
  return transactionView(result.row, result.items);
}
