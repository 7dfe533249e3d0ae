/**
 * What a fact concerns, found the one way for every rail and locked for the applying transaction,
 * so the plan is made from the row as it stays until the commit.
 */
import type { Queryable } from '../../db/db.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import type { Naming, RefundSnapshot, SaleSnapshot } from '../../domain/fact-plans.ts';
import type { ProviderName, SaleRef } from '../../domain/provider-facts.ts';
import type { PaymentMethod, TransactionEvent, TransactionStatus } from '../../domain/transaction-states.ts';

interface SaleRow {
  id: number;
  status: TransactionStatus;
  payment_method: PaymentMethod;
  last_event: TransactionEvent | null;
  amount: number;
  refund_pending: number;
  capture_asked: boolean;
  pix_end_to_end_id: string | null;
}

// A capture is asked once per sale: the followup of the first fact that owes it (the one capture trigger), or one made before followups.
const sale_columns = sql`id, status, payment_method, last_event, amount, refund_pending,
  coalesce(provider_data ? 'captureRef', false)
    OR EXISTS (SELECT 1 FROM provider_events e WHERE e.transaction_id = transactions.id AND e.followup = 'CAPTURE') AS capture_asked,
  pix_end_to_end_id`;

function snapshot(row: SaleRow): SaleSnapshot {
  return {
    id: Number(row.id),
    status: row.status,
    paymentMethod: row.payment_method,
    lastEvent: row.last_event,
    amount: Number(row.amount),
    refundPending: Number(row.refund_pending) > 0,
    captureAsked: row.capture_asked,
    paidBy: row.pix_end_to_end_id,
  };
}

export async function lockSaleById(q: Queryable, id: number): Promise<SaleSnapshot | null> {
  const row = maybeOne(await run<SaleRow>(q, sql`SELECT ${sale_columns} FROM transactions WHERE id = ${id} FOR UPDATE`));
  return row && snapshot(row);
}

/**
 * The provider's sale: by an id it gave the payment (pspReference, txid), by the Pix that paid it
 * (an endToEndId, whichever connector sold it: a boleto's Pix too), or by the location of the charge
 * a Pix paid (a boleto's, made by its issuer); else by our own reference while the provider has not named it yet (the sale still
 * known by its id), or whenever the reference alone suffices.
 */
export async function lockSale(q: Queryable, provider: ProviderName, ref: SaleRef): Promise<SaleSnapshot | null> {
  const location = ref.chargeLocation ?? null;
  if (ref.ids.length > 0 || location !== null) {
    const byId = maybeOne(
      await run<SaleRow>(
        q,
        sql`SELECT ${sale_columns} FROM transactions
            WHERE (provider = ${provider} AND external_transaction_id = ANY(${ref.ids}::text[])) OR pix_end_to_end_id = ANY(${ref.ids}::text[])
              OR boleto_pix_location = ${location}::text
            ORDER BY id LIMIT 1 FOR UPDATE`,
      ),
    );
    if (byId || ref.saleId === null) return byId && snapshot(byId);
  }
  if (ref.saleId === null) return null;
  const byReference = maybeOne(
    await run<SaleRow>(
      q,
      sql`SELECT ${sale_columns} FROM transactions
          WHERE id = ${ref.saleId} AND provider = ${provider} AND (external_transaction_id = ${String(ref.saleId)} OR ${ref.referenceSuffices}::boolean)
          FOR UPDATE`,
    ),
  );
  return byReference && snapshot(byReference);
}

/** One of our refunds of this provider's sales, with the ids of the payment it returns. */
export async function lockRefund(q: Queryable, provider: ProviderName, id: number): Promise<RefundSnapshot | null> {
  const row = maybeOne(
    await run<{
      id: number;
      status: RefundSnapshot['status'];
      transaction_id: number;
      external_transaction_id: string;
      pix_end_to_end_id: string | null;
    }>(
      q,
      sql`SELECT r.id, r.status, r.transaction_id, t.external_transaction_id, t.pix_end_to_end_id
          FROM refunds r JOIN transactions t ON t.id = r.transaction_id
          WHERE r.id = ${id} AND t.provider = ${provider} FOR UPDATE OF r`,
    ),
  );
  if (!row) return null;
  const paymentIds = [row.external_transaction_id, row.pix_end_to_end_id].filter((x): x is string => x !== null);
  return { id: Number(row.id), status: row.status, transactionId: Number(row.transaction_id), paymentIds };
}

/** The payment a fact named becomes the sale's: its id at the provider, the Pix that paid it, what it keeps of the provider's word. */
export async function nameSale(q: Queryable, saleId: number, naming: Naming): Promise<void> {
  await run(
    q,
    sql`UPDATE transactions SET external_transaction_id = coalesce(${naming.externalId ?? null}::text, external_transaction_id),
          pix_end_to_end_id = coalesce(${naming.paidBy ?? null}::text, pix_end_to_end_id),
          paid_account = coalesce(${naming.paidAccount ?? null}::text, paid_account),
          provider_data = CASE WHEN ${naming.data === undefined}::boolean THEN provider_data
            ELSE coalesce(provider_data, '{}'::jsonb) || ${JSON.stringify(naming.data ?? {})}::jsonb END
        WHERE id = ${saleId}`,
  );
}
