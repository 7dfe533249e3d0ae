import { createHmac } from 'node:crypto';
import { Agent, request } from 'undici';
import type { AppContext } from '../context.ts';
import { raw, run, type Sql, sql } from '../db/sql.ts';
import { type AttemptResult, default_retry_delays_ms, isSuccess, nextStep } from '../domain/delivery-schedule.ts';
import { standardWebhookHeaders } from '../domain/standard-webhooks.ts';
import { timeoutSignal } from '../http/timeout-signal.ts';
import type { Job } from '../workers/job.ts';
import { literalPrivateTarget, receiverSocketLookup } from './address-guard.ts';
import { NOTIFICATIONS_CHANNEL } from './outbox.ts';
import { liveSecretsSql } from './signing-secrets.ts';

const delivery_timeout_ms = 10_000;
// Once the status is in, the body is read only to reuse the connection: this long at most (and within
// the attempt's deadline), then the connection is dropped, so a receiver that drips its body frees its
// slot instead of holding it to the deadline.
const body_grace_ms = 1_000;
// A lease outlasts one attempt by this margin: a claim still held past it was lost with its worker.
const lease_margin_ms = 20_000;
// Attempts in flight in this process, and to any one target (URL): a target that hangs holds at
// most its own share, never the slots of the others.
const in_flight_max = 1024;
const per_target_in_flight_max = 32;
const claim_batch_max = 200;
// Outcomes arriving within this window free their slots for one claim, not one claim each.
const reclaim_delay_ms = 2;
const error_text_max = 500;

export interface DeliveryOptions {
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
  random?: () => number;
  perTargetMax?: number;
}

export interface DeliveryJob extends Job {
  /** Resolves once every attempt started so far has been recorded. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

interface Claimed {
  id: number;
  kind: string;
  url: string;
  event_id: string;
  payload: string;
  attempts: number;
  previous_status: string;
  status_changed_at: Date;
  event_status: string;
  resend_prior_status: string | null;
  test: boolean;
  /** The seller's signing secrets live at the claim (two during a rotation's overlap). */
  secrets: string[];
}

interface Outcome {
  id: number;
  status: string;
  code: number | null;
  error: string | null;
  next: Date | null;
  lease: Date;
  done(): void;
}

// Due, not leased, first in line for its resource and target (a manual resend skips the line), and
// within its target's share of attempts in flight (those already leased count against it). Each
// target is read through its own index range, only as far as its share: a long backlog costs
// nothing, and a saturated target is not read at all.
const claimSql = (now: Date, room: number, lease: Date, perTargetMax: number): Sql => sql`
  WITH busy AS (
    SELECT url, count(*) AS n FROM notifications WHERE locked_until > ${now} AND status = 'PENDING' GROUP BY url
  ), targets AS (
    SELECT DISTINCT n.url FROM notifications n
    WHERE n.status = 'PENDING' AND n.next_attempt_at <= ${now} AND (n.locked_until IS NULL OR n.locked_until <= ${now})
  ), picked AS (
    SELECT c.id, c.next_attempt_at FROM targets t LEFT JOIN busy b ON b.url = t.url
    CROSS JOIN LATERAL (
      SELECT n.id, n.next_attempt_at FROM notifications n
      WHERE n.url = t.url AND n.status = 'PENDING' AND n.next_attempt_at <= ${now} AND (n.locked_until IS NULL OR n.locked_until <= ${now})
        AND (n.resend_prior_status IS NOT NULL OR NOT EXISTS (
          SELECT 1 FROM notifications p
          WHERE p.order_key = n.order_key AND p.status = 'PENDING' AND p.id < n.id
            AND (p.resend_prior_status IS NULL OR p.resend_prior_status = 'PENDING')))
      ORDER BY n.next_attempt_at, n.id
      LIMIT greatest(0, ${perTargetMax} - coalesce(b.n, 0))
    ) c
    ORDER BY c.next_attempt_at, c.id LIMIT ${room}
  ), claimable AS (
    SELECT n.id FROM notifications n
    WHERE n.id IN (SELECT id FROM picked) AND n.status = 'PENDING' AND (n.locked_until IS NULL OR n.locked_until <= ${now})
    FOR UPDATE SKIP LOCKED
  )
  UPDATE notifications n SET locked_until = ${lease}, attempts = n.attempts + 1 FROM claimable WHERE n.id = claimable.id
  RETURNING n.id, n.kind, n.url, n.event_id, n.payload, n.attempts, n.previous_status, n.status_changed_at, n.event_status, n.resend_prior_status, n.test,
    ${liveSecretsSql('n.seller_id', now)} AS secrets`;

// Outcomes, only where this worker still holds the lease it claimed with. A target that answered
// has its notifications waiting for a retry released at once (CONTRACT §9 recovery); the claim
// query still keeps them in per-resource order.
const recordSql = (batch: Outcome[], now: Date): Sql => {
  const ids = batch.map((o) => o.id);
  return sql`
  WITH recorded AS (
    UPDATE notifications n SET status = x.status, last_response_status = x.code, last_error = x.error,
      next_attempt_at = coalesce(x.next_at, n.next_attempt_at), locked_until = NULL, resend_prior_status = NULL,
      delivered_at = CASE WHEN x.status = 'DELIVERED' THEN ${now} ELSE n.delivered_at END
    FROM unnest(${ids}::bigint[], ${batch.map((o) => o.status)}::text[], ${batch.map((o) => o.code)}::int[],
      ${batch.map((o) => o.error)}::text[], ${batch.map((o) => o.next)}::timestamptz[], ${batch.map((o) => o.lease)}::timestamptz[])
      AS x (id, status, code, error, next_at, lease)
    WHERE n.id = x.id AND n.locked_until = x.lease
    RETURNING n.url, x.status
  ), released AS (
    UPDATE notifications n SET next_attempt_at = ${now}
    WHERE n.url IN (SELECT url FROM recorded WHERE status = 'DELIVERED') AND n.status = 'PENDING'
      AND n.next_attempt_at > ${now} AND n.locked_until IS NULL AND n.id <> ALL (${ids}::bigint[])
    RETURNING 1
  ), woken AS (
    SELECT pg_notify(${raw(`'${NOTIFICATIONS_CHANNEL}'`)}, '') FROM (SELECT 1 FROM released LIMIT 1) AS any_row
  )
  SELECT (SELECT count(*) FROM released)::int AS released, (SELECT count(*) FROM woken)::int AS woken`;
};

export function signPayload(payload: string, secret: string): string {
  return createHmac('sha256', secret).update(payload, 'utf8').digest('hex');
}

/** Dispatchers for the attempts: one refusing private addresses at connect time, one allowing them. */
class Agents {
  private readonly agents = new Map<boolean, Agent>();

  for(allowPrivate: boolean): Agent {
    let agent = this.agents.get(allowPrivate);
    if (!agent) {
      agent = new Agent({ connections: 64, connect: { lookup: receiverSocketLookup(allowPrivate) as never } });
      this.agents.set(allowPrivate, agent);
    }
    return agent;
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close()));
  }
}

/** One POST of one notification, bounded by `timeoutMs`; never throws. */
async function attempt(ctx: AppContext, n: Claimed, agents: Agents, timeoutMs: number): Promise<AttemptResult> {
  const url = new URL(n.url);
  if (!ctx.config.webhookAllowPrivate && literalPrivateTarget(url))
    return { ok: false, status: null, error: 'target is a loopback or private address' };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'payment-gateway-notifier/1',
    'x-event-id': n.event_id,
    'x-delivery-attempt': String(n.attempts),
    'x-previous-status': n.previous_status,
    'x-status-changed-at': n.status_changed_at.toISOString(),
  };
  // A test notification (POST /api/webhooks/{id}/test) says so, on every attempt and resend.
  if (n.test) headers['x-test-event'] = 'true';
  if (n.kind === 'TRANSACTION_POSTBACK') headers['x-signature'] = signPayload(n.payload, ctx.config.postbackSecret);
  Object.assign(headers, standardWebhookHeaders(n.secrets, n.event_id, ctx.clock.now(), n.payload));
  const deadline = timeoutSignal(timeoutMs);
  try {
    // undici's request never follows redirects: a 3xx is a failed attempt, as CONTRACT §9 wants.
    const res = await request(url, {
      method: 'POST',
      headers,
      body: n.payload,
      dispatcher: agents.for(ctx.config.webhookAllowPrivate),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: deadline.signal,
    });
    // The status is the receiver's answer: a body cut short (at the grace or the deadline) still
    // resolves dump(), so a 200 is not sent again.
    const cut = setTimeout(() => res.body.destroy(), body_grace_ms);
    cut.unref();
    try {
      await res.body.dump();
    } finally {
      clearTimeout(cut);
    }
    return isSuccess(res.statusCode) ? { ok: true, status: res.statusCode } : { ok: false, status: res.statusCode, error: `HTTP ${res.statusCode}` };
  } catch (err) {
    return { ok: false, status: null, error: String((err as Error).message ?? err).slice(0, error_text_max) };
  } finally {
    deadline.clear();
  }
}

/** What an attempt's result makes of the notification: delivered, retried later, or failed for good. */
function outcomeOf(n: Claimed, result: AttemptResult, now: Date, options: DeliveryOptions): Omit<Outcome, 'lease' | 'done'> {
  const step = nextStep(result, n.attempts, now, options.retryDelaysMs ?? default_retry_delays_ms, options.random);
  // A manual resend is one more attempt: if it fails, the notification returns to where it was.
  const prior = n.resend_prior_status !== null && n.resend_prior_status !== 'PENDING' ? n.resend_prior_status : null;
  const status = step.kind === 'delivered' ? 'DELIVERED' : (prior ?? (step.kind === 'retry' ? 'PENDING' : 'FAILED'));
  const next = step.kind === 'retry' && status === 'PENDING' ? step.at : null;
  return { id: n.id, status, code: result.status, error: result.ok ? null : result.error, next };
}

/**
 * Records outcomes as their attempts end. One flush at a time takes every outcome queued so far:
 * one statement per batch under load, at once when quiet. `flushing` is cleared in the same turn
 * as the emptiness check, so no outcome is left behind.
 */
class OutcomeRecorder {
  private readonly queue: Outcome[] = [];
  private flushing: Promise<void> | null = null;
  private reclaim: NodeJS.Timeout | null = null;

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
      try {
        await run(ctx.db, recordSql(batch, ctx.clock.now()));
      } catch {
        // Unrecorded (the database is away): the rows stay leased and are attempted again when the lease ends.
      }
      for (const o of batch) o.done();
      // Capacity freed, a target's limit loosened, or its waiting notifications released.
      this.reclaim ??= setTimeout(() => {
        this.reclaim = null;
        wake();
      }, reclaim_delay_ms);
    }
    this.flushing = null;
  }
}

/**
 * The delivery worker. Each attempt is independent: run() claims what is due (within the limits
 * above), starts the attempts and returns; each outcome is recorded when its attempt ends, batched
 * with whatever else ended meanwhile. A receiver that hangs delays nobody but itself.
 */
export function createDeliveryJob(options: DeliveryOptions = {}): DeliveryJob {
  const timeoutMs = options.timeoutMs ?? delivery_timeout_ms;
  const perTargetMax = options.perTargetMax ?? per_target_in_flight_max;
  const agents = new Agents();
  const recorder = new OutcomeRecorder();
  const inFlight = new Set<Promise<void>>();

  async function settled(): Promise<void> {
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  }

  return {
    name: 'notification-delivery',
    idle_interval_ms: 1_000,
    wake_channel: NOTIFICATIONS_CHANNEL,
    async run(ctx, wake = () => {}) {
      const room = Math.min(claim_batch_max, in_flight_max - inFlight.size);
      if (room <= 0) return 0;
      const now = ctx.clock.now();
      const lease = new Date(now.getTime() + timeoutMs + lease_margin_ms);
      const claimed = (await run<Claimed>(ctx.db, claimSql(now, room, lease, perTargetMax))).rows;
      for (const n of claimed) {
        const running: Promise<void> = attempt(ctx, n, agents, timeoutMs)
          .then(
            (result) => new Promise<void>((done) => recorder.record(ctx, { ...outcomeOf(n, result, ctx.clock.now(), options), lease, done }, wake)),
          )
          .finally(() => inFlight.delete(running));
        inFlight.add(running);
      }
      return claimed.length;
    },
    settled,
    async close() {
      await settled();
      recorder.close();
      await agents.close();
    },
  };
}
