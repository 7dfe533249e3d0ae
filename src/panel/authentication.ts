/**
 * 3-D Secure in the panel (CONTRACT §11.2, §12): a card sale whose shopper has not authenticated yet
 * reads "Aguardando autenticação" where its status shows, and a card sale's page tells whether its
 * shopper was authenticated.
 */
import type { Queryable } from '../db/db.ts';
import { run, sql } from '../db/sql.ts';
import type { TransactionEvent } from '../domain/transaction-states.ts';
import { authentication_results, awaiting_authentication, labelOf, refunded_by, sale_statuses } from './labels.ts';

/** The sales among `ids` still PENDENTE with an authentication that has no result yet. */
export async function awaitingAuthentication(q: Queryable, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const r = await run<{ id: number | string }>(
    q,
    sql`SELECT t.id FROM card_authentications a JOIN transactions t ON t.id = a.transaction_id
        WHERE a.transaction_id = ANY(${ids.map(Number)}::bigint[]) AND a.result IS NULL AND t.status = 'PENDENTE'`,
  );
  return new Set(r.rows.map((row) => Number(row.id)));
}

/** The event that made each ESTORNADO sale among `ids` so (its last event): a refund, a chargeback or a MED lost. */
export async function refundedBy(q: Queryable, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const r = await run<{ id: number | string; last_event: string | null }>(
    q,
    sql`SELECT id, last_event FROM transactions WHERE id = ANY(${ids.map(Number)}::bigint[]) AND status = 'ESTORNADO'`,
  );
  return new Map(r.rows.filter((row) => row.last_event !== null).map((row) => [Number(row.id), row.last_event as string]));
}

/**
 * A sale's status in words: "Aguardando autenticação" for a PENDENTE card sale whose shopper has not
 * authenticated; an ESTORNADO one says how (reembolso, chargeback, MED) when its last event tells.
 */
export function saleStatusLabel(status: string, awaiting: boolean, lastEvent?: string | null): string {
  if (status === 'PENDENTE' && awaiting) return awaiting_authentication;
  if (status === 'ESTORNADO' && lastEvent) return refunded_by[lastEvent as TransactionEvent] ?? labelOf(sale_statuses, status);
  return labelOf(sale_statuses, status);
}

/** Whether the shopper was authenticated, in words; null when none was asked (or the answer is not in yet). */
export function authenticationLabel(authenticated: boolean | null | undefined): string | null {
  if (authenticated === true) return authentication_results.authenticated;
  if (authenticated === false) return authentication_results.failed;
  return null;
}
