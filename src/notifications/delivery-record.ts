/**
 * Recording what the attempts came to: each notification's outcome, its endpoint's circuit (counted,
 * opened, closed), and CONTRACT §9's recovery (a target that answered has its waiting notifications
 * released at once). Outcomes that end together are recorded in one statement.
 */
import type { AppContext } from '../context.ts';
import { isRetryable } from '../db/db.ts';
import { raw, run, type Sql, sql } from '../db/sql.ts';
import { type CircuitPolicy, jitterFactor } from '../domain/delivery-schedule.ts';
import { NOTIFICATIONS_CHANNEL } from './outbox.ts';

export interface Outcome {
  id: number;
  /** The attempt succeeded (a 2xx): what closes a circuit and releases the target's waiting notifications. */
  ok: boolean;
  status: string;
  code: number | null;
  error: string | null;
  next: Date | null;
  lease: Date;
  done(): void;
}

// A deadlock or serialization failure between two workers' records is tried again at once, this often.
const record_tries = 3;

// Outcomes, only where this worker still holds the lease it claimed with.
const recordedSql = (batch: Outcome[], now: Date): Sql => sql`
  recorded AS (
    UPDATE notifications n SET status = x.status, last_response_status = x.code, last_error = x.error,
      next_attempt_at = coalesce(x.next_at, n.next_attempt_at), locked_until = NULL, resend_prior_status = NULL,
      delivered_at = CASE WHEN x.status = 'DELIVERED' THEN ${now} ELSE n.delivered_at END
    FROM unnest(${batch.map((o) => o.id)}::bigint[], ${batch.map((o) => o.ok)}::boolean[], ${batch.map((o) => o.status)}::text[],
      ${batch.map((o) => o.code)}::int[], ${batch.map((o) => o.error)}::text[], ${batch.map((o) => o.next)}::timestamptz[],
      ${batch.map((o) => o.lease)}::timestamptz[]) AS x (id, ok, status, code, error, next_at, lease)
    WHERE n.id = x.id AND n.locked_until = x.lease
    RETURNING n.seller_id, n.url, x.ok, x.status
  )`;

// Per endpoint: a success closes its circuit (the row goes), and so does having nothing left to send
// (a postback's URL, say, once its one notification is done); failures add up, and open it at the
// threshold. A failure while it is half-open (the probe's) opens it again for twice as long; failures
// while it is open (attempts started before it opened) leave it as it is. Rows are written in key
// order, so two workers' records never wait for each other in a cycle.
const circuitsSql = (batch: Outcome[], now: Date, policy: CircuitPolicy, jitter: number): Sql => {
  const openFor = (opened: string) =>
    sql`${now}::timestamptz + least(${policy.maxOpenMs}::float8, ${policy.openMs}::float8 * power(2, ${raw(opened)} - 1)) * ${jitter}::float8 * interval '1 millisecond'`;
  const opening = sql`(c.open_until IS NOT NULL OR c.failures + excluded.failures >= ${policy.threshold}::int)`;
  return sql`
  ends AS (
    SELECT r.seller_id, r.url, bool_or(r.ok) AS ok, (count(*) FILTER (WHERE NOT r.ok))::int AS failed,
      bool_or(r.status = 'PENDING') OR EXISTS (SELECT 1 FROM notifications p WHERE p.url = r.url AND p.seller_id = r.seller_id
        AND p.status = 'PENDING' AND p.id <> ALL (${batch.map((o) => o.id)}::bigint[])) AS waiting
    FROM recorded r GROUP BY r.seller_id, r.url
  ), closed AS (
    DELETE FROM notification_circuits c USING ends e
    WHERE (e.ok OR NOT e.waiting) AND c.seller_id = e.seller_id AND c.url = e.url RETURNING 1
  ), counted AS (
    INSERT INTO notification_circuits AS c (seller_id, url, failures, opened, open_until)
    SELECT e.seller_id, e.url, e.failed, CASE WHEN e.failed >= ${policy.threshold}::int THEN 1 ELSE 0 END,
      CASE WHEN e.failed >= ${policy.threshold}::int THEN ${openFor('1')} END
    FROM ends e WHERE NOT e.ok AND e.waiting ORDER BY e.seller_id, e.url
    ON CONFLICT (seller_id, url) DO UPDATE SET failures = c.failures + excluded.failures,
      opened = CASE WHEN c.open_until > ${now} THEN c.opened WHEN ${opening} THEN c.opened + 1 ELSE c.opened END,
      open_until = CASE WHEN c.open_until > ${now} THEN c.open_until WHEN ${opening} THEN ${openFor('c.opened + 1')} END
    RETURNING 1
  )`;
};

// CONTRACT §9 recovery: a target that answered has its notifications waiting for a retry (or held by
// its circuit) due at once, back in the place their age gives them among the seller's due ones; the
// claim keeps them in per-resource order.
const releasedSql = (batch: Outcome[], now: Date): Sql => sql`
  released AS (
    UPDATE notifications n SET next_attempt_at = least(n.created_at, ${now})
    WHERE n.url IN (SELECT url FROM recorded WHERE ok) AND n.status = 'PENDING'
      AND n.next_attempt_at > least(n.created_at, ${now}) AND n.locked_until IS NULL AND n.id <> ALL (${batch.map((o) => o.id)}::bigint[])
    RETURNING 1
  ), woken AS (
    SELECT pg_notify(${raw(`'${NOTIFICATIONS_CHANNEL}'`)}, '') FROM (SELECT 1 FROM released LIMIT 1) AS any_row
  )`;

export const recordSql = (batch: Outcome[], now: Date, policy: CircuitPolicy, jitter: number): Sql => sql`
  WITH ${recordedSql(batch, now)}, ${circuitsSql(batch, now, policy, jitter)}, ${releasedSql(batch, now)}
  SELECT (SELECT count(*) FROM released)::int AS released, (SELECT count(*) FROM woken)::int AS woken`;

/**
 * Records outcomes as their attempts end. One flush at a time takes every outcome queued so far:
 * one statement per batch under load, at once when quiet. `flushing` is cleared in the same turn
 * as the emptiness check, so no outcome is left behind.
 */
export class OutcomeRecorder {
  private readonly queue: Outcome[] = [];
  private flushing: Promise<void> | null = null;
  private reclaim: NodeJS.Timeout | null = null;

  constructor(
    private readonly policy: CircuitPolicy,
    private readonly random: () => number,
    private readonly reclaimDelayMs: number,
  ) {}

  record(ctx: AppContext, outcome: Outcome, wake: () => void): void {
    this.queue.push(outcome);
    if (!this.flushing) this.flushing = this.flush(ctx, wake);
  }

  close(): void {
    if (this.reclaim) clearTimeout(this.reclaim);
  }

  private async flush(ctx: AppContext, wake: () => void): Promise<void> {
    // Lets the responses that already arrived be read first: they join this batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.queue.length);
      await this.write(ctx, batch);
      for (const o of batch) o.done();
      // Capacity freed, a target's limit loosened, or its waiting notifications released.
      this.reclaim ??= setTimeout(() => {
        this.reclaim = null;
        wake();
      }, this.reclaimDelayMs);
    }
    this.flushing = null;
  }

  private async write(ctx: AppContext, batch: Outcome[]): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await run(ctx.db, recordSql(batch, ctx.clock.now(), this.policy, jitterFactor(this.random)));
        return;
      } catch (error) {
        // Unrecorded (the database is away): the rows stay leased and are attempted again when the lease ends.
        if (!isRetryable(error) || tries >= record_tries) return;
      }
    }
  }
}
