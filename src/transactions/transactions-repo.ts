import type { Queryable } from '../db/db.ts';
import { before, maybeOne, raw, run, sql } from '../db/sql.ts';
import type { FeeSchedule } from '../domain/fees.ts';
import type { ProviderName } from '../domain/provider-facts.ts';
import type { ShippingInput } from '../domain/sale-request.ts';
import type { PaymentMethod, TransactionEvent, TransactionStatus } from '../domain/transaction-states.ts';
import { type MedColumns, med_columns } from './med-view.ts';

export interface TransactionRow {
  id: number;
  seller_id: number;
  status: TransactionStatus;
  last_event: TransactionEvent | null;
  payment_method: PaymentMethod;
  amount: number;
  system_fee: number | null;
  reserve_amount: number | null;
  net_amount: number | null;
  reserve_held: number;
  reserve_release_at: Date | null;
  refunded_amount: number;
  refund_pending: number;
  med_blocked: number;
  fee_schedule: FeeSchedule;
  customer_name: string;
  customer_email: string;
  customer_document: string | null;
  customer_phone: string | null;
  shipping: ShippingInput | null;
  postback_url: string | null;
  installments: number | null;
  card_brand: string | null;
  card_last_four: string | null;
  pix_code: string | null;
  pix_txid: string | null;
  pix_expires_at: Date | null;
  pix_charge: 'STATIC' | 'ACTIVE' | 'REMOVED' | null;
  pix_end_to_end_id: string | null;
  boleto_code: string | null;
  boleto_barcode: string | null;
  boleto_due_date: string | null;
  boleto_pdf_url: string | null;
  boleto_pix_code: string | null;
  external_transaction_id: string;
  /** The connector that made the sale. */
  provider: ProviderName;
  /** The provider account that made it; what is sent to a provider later goes to it (CONTRACT §11). Null: made before accounts. */
  account: string | null;
  /** The account a boleto's Pix was received at, when not the boleto's own (its money is there). */
  paid_account: string | null;
  provider_data: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  med_infraction?: MedColumns['med_infraction'];
  med_history?: MedColumns['med_history'];
}

export interface ItemRow {
  id: number;
  transaction_id: number;
  title: string;
  unit_price: number;
  quantity: number;
  tangible: boolean;
}

// Dates come back as text so a business date never shifts with the process time zone.
// 3-D Secure (CONTRACT §11.2): whether the shopper was authenticated; null when none was asked (or not yet known).
export const authenticated_column = `(SELECT CASE a.result WHEN 'AUTHENTICATED' THEN true WHEN 'FAILED' THEN false END
  FROM card_authentications a WHERE a.transaction_id = t.id) AS authenticated`;
const columns = sql`t.*, t.boleto_due_date::text AS boleto_due_date, ${raw(authenticated_column)}, ${raw(med_columns)}`;

export async function findTransaction(q: Queryable, id: number): Promise<TransactionRow | null> {
  const r = await run<TransactionRow>(q, sql`SELECT ${columns} FROM transactions t WHERE t.id = ${id}`);
  return maybeOne(r);
}

export async function itemsOf(q: Queryable, ids: number[]): Promise<Map<number, ItemRow[]>> {
  const byTransaction = new Map<number, ItemRow[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byTransaction;
  const r = await run<ItemRow>(q, sql`SELECT * FROM sale_items WHERE transaction_id = ANY(${ids}::bigint[]) ORDER BY id`);
  for (const item of r.rows) byTransaction.get(item.transaction_id)?.push(item);
  return byTransaction;
}

export interface ListFilter {
  sellerId: number;
  status?: TransactionStatus;
  paymentMethod?: PaymentMethod;
  /** Created at or after this instant. */
  from?: Date;
  /** Created before this instant. */
  until?: Date;
  beforeId: number | null;
  limit: number;
}

/** What a transaction shows when read (transactionView): a list reads only these, not the money rules and provider state. */
export const SHOWN_FIELDS = [
  'id',
  'status',
  'amount',
  'net_amount',
  'system_fee',
  'reserve_amount',
  'refunded_amount',
  'payment_method',
  'created_at',
  'completed_at',
  'customer_name',
  'customer_email',
  'customer_document',
  'customer_phone',
  'pix_code',
  'card_last_four',
  'card_brand',
  'boleto_code',
  'boleto_pdf_url',
  'boleto_pix_code',
  'external_transaction_id',
  'installments',
  'shipping',
] as const satisfies readonly (keyof TransactionRow)[];
export type ShownRow = Pick<TransactionRow, (typeof SHOWN_FIELDS)[number] | 'med_infraction' | 'med_history'> & { authenticated?: boolean | null };
const shown_columns = raw(`${SHOWN_FIELDS.map((f) => `t.${f}`).join(', ')}, ${authenticated_column}, ${med_columns}`);

export async function listTransactions(q: Queryable, f: ListFilter): Promise<ShownRow[]> {
  const status = f.status ?? null;
  const method = f.paymentMethod ?? null;
  const from = f.from ?? null;
  const until = f.until ?? null;
  const r = await run<ShownRow>(
    q,
    sql`SELECT ${shown_columns} FROM transactions t
        WHERE t.seller_id = ${f.sellerId} AND (${status}::text IS NULL OR t.status = ${status}) AND (${method}::text IS NULL OR t.payment_method = ${method})
          AND ${before('t.id', f.beforeId)} AND (${from}::timestamptz IS NULL OR t.created_at >= ${from})
          AND (${until}::timestamptz IS NULL OR t.created_at < ${until})
        ORDER BY t.id DESC LIMIT ${f.limit}`,
  );
  return r.rows;
}
