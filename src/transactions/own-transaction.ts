import type { AppContext } from '../context.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
import { transactionView } from './transaction-view.ts';
import { findTransaction, itemsOf, type TransactionRow } from './transactions-repo.ts';

/** The seller's own transaction: 404 unknown, 403 another seller's (spec); the API and the panel both ask here. */
export async function ownTransaction(ctx: AppContext, sellerId: number, id: number): Promise<Result<TransactionRow>> {
  const row = await findTransaction(ctx.db, id);
  if (!row) return refuse('NOT_FOUND', 'Transaction not found');
  if (row.seller_id !== sellerId) return refuse('FORBIDDEN', 'This transaction belongs to another account');
  return ok(row);
}

/** The API's view of a transaction, its items read. */
export async function withItems(ctx: AppContext, row: TransactionRow) {
  return transactionView(row, (await itemsOf(ctx.db, [row.id])).get(row.id) ?? []);
}
