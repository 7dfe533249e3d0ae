import type { AppContext } from '../context.ts';
import type { Router } from '../http/router.ts';
import { cancelTransactionRoute } from './routes/cancel-transaction.ts';
import { getTransactionRoute } from './routes/get-transaction.ts';
import { listTransactionsRoute } from './routes/list-transactions.ts';

/** The seller's transactions (spec, CONTRACT §3): one file per operation, registered in the order the OpenAPI document lists them. */
export async function transactionRoutes(app: Router, ctx: AppContext): Promise<void> {
  getTransactionRoute(app, ctx);
  listTransactionsRoute(app, ctx);
  cancelTransactionRoute(app, ctx);
}
