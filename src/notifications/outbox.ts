import { randomUUID } from 'node:crypto';
import { raw, type Sql, sql } from '../db/sql.ts';
import type { OutboxTarget } from '../domain/notification-payloads.ts';

export const NOTIFICATIONS_CHANNEL = 'notifications_ready';

/** The status change the rows describe. */
export interface OutboxMove {
  sellerId: number;
  transactionId: number | null;
  cashoutId: number | null;
  status: string;
  previous: string;
  at: Date;
}

/**
 * CTEs `outbox` (one row per target) and `woken` (wakes the delivery workers at commit, once, if a
 * row was written: milliseconds, not a polling interval). With `gate`, nothing is written unless
 * that CTE yields a row. The statement must read `woken` for the wake-up to happen.
 */
export function outboxCte(move: OutboxMove, targets: OutboxTarget[], gate?: string): Sql {
  const from = gate ? raw(`${gate}, `) : raw('');
  const m = { ...move };
  return sql`
  outbox AS (
    INSERT INTO notifications (seller_id, kind, event_id, url, webhook_id, transaction_id, cashout_id, event_status,
      previous_status, status_changed_at, payload, order_key, next_attempt_at, created_at)
    SELECT ${m.sellerId}::bigint, x.kind, x.event_id, x.url, x.webhook_id, ${m.transactionId}::bigint, ${m.cashoutId}::bigint,
      ${m.status}::text, ${m.previous}::text, ${m.at}::timestamptz, x.payload,
      x.kind || ':' || coalesce('t' || ${m.transactionId}::bigint, 'c' || ${m.cashoutId}::bigint) || ':' || x.url,
      ${m.at}::timestamptz, ${m.at}::timestamptz
    FROM ${from}unnest(${targets.map((t) => t.kind)}::text[], ${targets.map(() => randomUUID())}::uuid[], ${targets.map((t) => t.url)}::text[],
      ${targets.map((t) => t.webhookId)}::bigint[], ${targets.map((t) => t.payload)}::text[]) AS x (kind, event_id, url, webhook_id, payload)
    RETURNING 1
  ), woken AS (
    SELECT pg_notify(${raw(`'${NOTIFICATIONS_CHANNEL}'`)}, '') FROM (SELECT 1 FROM outbox LIMIT 1) AS any_row
  )`;
}
