import type { Queryable } from '../db/db.ts';
import { applyCashoutEvent, type CashoutEvent, type CashoutStatus } from '../domain/cashout-states.ts';
import { cashoutMovePosting } from '../domain/cashout-postings.ts';
import { post } from '../ledger/postings.ts';
import { cashoutNotificationEffect } from '../notifications/outbox.ts';
import { cashoutMoney, findCashout, type CashoutRow } from './cashouts-repo.ts';

export type CashoutMoveResult =
  | { kind: 'moved'; row: CashoutRow; from: CashoutStatus }
  | { kind: 'noop'; row: CashoutRow }
  | { kind: 'refused'; row: CashoutRow; reason: string }
  | { kind: 'not_found' };

export interface CashoutMove { before: CashoutRow; after: CashoutRow; event: CashoutEvent; at: Date }
export type CashoutEffect = (q: Queryable, move: CashoutMove) => Promise<void>;

/** Ledger postings of a cashout move (CONTRACT §5). */
const ledgerEffect: CashoutEffect = async (q, move) => {
  const posting = cashoutMovePosting(cashoutMoney(move.after), move.after.status);
  if (posting) await post(q, posting);
};

/** Effects of a cashout status change, inside its database transaction; notifications add theirs. */
export const cashoutEffects: CashoutEffect[] = [ledgerEffect, cashoutNotificationEffect];

const move_sql = `
  WITH moved AS (
    UPDATE cashouts SET status = $2, last_event = $3, updated_at = $4,
      processed_at = CASE WHEN $2 IN ('COMPLETED', 'REJECTED', 'CANCELLED') THEN $4 ELSE processed_at END,
      external_id = coalesce($6, external_id), provider_data = coalesce($7::jsonb, provider_data)
    WHERE id = $1 RETURNING *
  ), logged AS (
    INSERT INTO cashout_events (cashout_id, event, from_status, to_status, created_at) SELECT id, $3, $5, $2, $4 FROM moved
  )
  SELECT * FROM moved`;

export interface ProviderUpdate { externalId: string; providerData: Record<string, unknown> }

/** The one place a cashout changes status: row lock, the move, its effects, one transaction. */
export async function moveCashout(q: Queryable, id: number, event: CashoutEvent, at: Date, provider?: ProviderUpdate): Promise<CashoutMoveResult> {
  const before = await findCashout(q, id, true);
  if (!before) return { kind: 'not_found' };
  const outcome = applyCashoutEvent({ status: before.status, lastEvent: before.last_event }, event);
  if (outcome.kind === 'noop') return { kind: 'noop', row: before };
  if (outcome.kind === 'refused') return { kind: 'refused', row: before, reason: outcome.reason };
  const r = await q.query<CashoutRow>(move_sql, [id, outcome.to, event, at, before.status,
    provider?.externalId ?? null, provider ? JSON.stringify(provider.providerData) : null]);
  const after = r.rows[0]!;
  for (const effect of cashoutEffects) await effect(q, { before, after, event, at });
  return { kind: 'moved', row: after, from: before.status };
}
