import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { ApiError } from '../domain/errors.ts';
import { PAYMENT_METHODS, TRANSACTION_STATUSES, type TransactionEvent } from '../domain/transaction-states.ts';
import { parsePathId } from '../http/ids.ts';
import { PathId, StringEnum, errorResponses, sellerSecurity, type Router } from '../http/router.ts';
import { itemsOf, listTransactions, findTransaction, type TransactionRow } from './transactions-repo.ts';
import { moveTransaction } from './transitions.ts';
import { Transaction, transactionView } from './transaction-view.ts';

const list_limit_default = 20;
const list_limit_max = 100;

const ListQuery = Type.Object({
  status: Type.Optional(StringEnum(TRANSACTION_STATUSES)),
  paymentMethod: Type.Optional(StringEnum(PAYMENT_METHODS)),
  limit: Type.Optional(Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: '1–100, default 20' })),
  cursor: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'nextCursor of the previous page' })),
});

export async function withItems(ctx: AppContext, row: TransactionRow) {
  return transactionView(row, (await itemsOf(ctx.db, [row.id])).get(row.id) ?? []);
}

/** 400 bad id, 404 unknown, 403 another seller's (spec). */
async function ownTransaction(ctx: AppContext, sellerId: number, rawId: string): Promise<TransactionRow> {
  const row = await findTransaction(ctx.db, parsePathId(rawId));
  if (!row) throw new ApiError('NOT_FOUND', 'Transaction not found');
  if (row.seller_id !== sellerId) throw new ApiError('FORBIDDEN', 'This transaction belongs to another account');
  return row;
}

/** Applies an event and answers with the transaction; a refused move is 409 and changes nothing. */
export async function applyEvent(ctx: AppContext, id: number, event: TransactionEvent, sellerId?: number) {
  const result = await moveTransaction(ctx.db, id, event, ctx.clock.now(), (row) => {
    if (sellerId !== undefined && row.seller_id !== sellerId) throw new ApiError('FORBIDDEN', 'This transaction belongs to another account');
  });
  if (result.kind === 'not_found') throw new ApiError('NOT_FOUND', 'Transaction not found');
  if (result.kind === 'refused') throw new ApiError('INVALID_TRANSITION', `Cannot apply ${event} to a ${result.row.status} transaction: ${result.reason}`);
  return transactionView(result.row, result.items);
}

export async function transactionRoutes(app: Router, ctx: AppContext): Promise<void> {
  const common = { tags: ['transactions'], security: sellerSecurity };

  app.get('/api/transactions/:id', {
    schema: { ...common, summary: 'Read one transaction (money in cents)', params: PathId, response: { 200: Transaction, ...errorResponses } },
  }, async (request) => withItems(ctx, await ownTransaction(ctx, request.sellerId, request.params.id)));

  app.get('/api/transactions', {
    schema: {
      ...common, summary: 'List the seller\'s transactions, newest first', querystring: ListQuery,
      response: { 200: Type.Object({ data: Type.Array(Transaction), nextCursor: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses },
    },
  }, async (request) => {
    const limit = Number(request.query.limit ?? list_limit_default);
    const rows = await listTransactions(ctx.db, {
      sellerId: request.sellerId, status: request.query.status, paymentMethod: request.query.paymentMethod,
      beforeId: request.query.cursor ? parsePathId(request.query.cursor, 'cursor') : undefined, limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const items = await itemsOf(ctx.db, page.map((r) => r.id));
    return {
      data: page.map((r) => transactionView(r, items.get(r.id) ?? [])),
      nextCursor: rows.length > limit ? String(page[page.length - 1]!.id) : null,
    };
  });

  app.post('/api/transactions/:id/refund', {
    schema: { ...common, summary: 'Refund a paid transaction in full (PAGO → ESTORNADO)', params: PathId, response: { 200: Transaction, ...errorResponses } },
  }, async (request) => applyEvent(ctx, parsePathId(request.params.id), 'REFUNDED', request.sellerId));

  app.post('/api/transactions/:id/cancel', {
    schema: { ...common, summary: 'Cancel a pending or failed transaction (→ CANCELADO)', params: PathId, response: { 200: Transaction, ...errorResponses } },
  }, async (request) => applyEvent(ctx, parsePathId(request.params.id), 'CANCELLED', request.sellerId));
}
