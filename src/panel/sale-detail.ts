/** What a sale's page shows: the sale (the API's own view), its history, refunds and notifications. */
import type { AppContext } from '../context.ts';
import { run, sql } from '../db/sql.ts';
import { ok } from '../domain/result.ts';
import { qrPngDataUri } from '../qr/pix-qr.ts';
import { ownTransaction, withItems } from '../transactions/own-transaction.ts';
import { refundsOf } from '../transactions/refunds-repo.ts';
import { awaitingAuthentication } from './authentication.ts';

export interface HistoryRow {
  event: string;
  from_status: string;
  to_status: string;
  created_at: Date;
}

export interface SaleNotificationRow {
  id: number;
  kind: string;
  url: string;
  event_status: string;
  status: string;
  attempts: number;
  last_response_status: number | null;
  created_at: Date;
}

/** The seller's own sale (the API's check: 404 unknown, 403 another seller's) and what happened to it. */
export async function saleDetail(ctx: AppContext, sellerId: number, id: number) {
  const own = await ownTransaction(ctx, sellerId, id);
  if (!own.ok) return own;
  const row = own.value;
  const sale = await withItems(ctx, row);
  const history = await run<HistoryRow>(
    ctx.db,
    sql`SELECT event, from_status, to_status, created_at FROM transaction_events WHERE transaction_id = ${id} ORDER BY id`,
  );
  const notifications = await run<SaleNotificationRow>(
    ctx.db,
    sql`SELECT id, kind, url, event_status, status, attempts, last_response_status, created_at
        FROM notifications WHERE seller_id = ${sellerId} AND transaction_id = ${id} ORDER BY id`,
  );
  const refunds = await refundsOf(ctx.db, id);
  // The QR a payer scans, while the sale can still be paid.
  const payable = row.pix_code ?? row.boleto_pix_code;
  const qr = row.status === 'PENDENTE' && payable ? qrPngDataUri(payable) : null;
  const left = row.amount - row.refunded_amount - row.refund_pending;
  // A card sale whose shopper has not passed 3-D Secure yet (CONTRACT §11.2).
  const awaiting = (await awaitingAuthentication(ctx.db, [id])).has(id);
  return ok({ row, sale, history: history.rows, notifications: notifications.rows, refunds, qr, refundable: left, awaiting });
}
