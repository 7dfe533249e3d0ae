import { createHmac } from 'node:crypto';
import { Agent, request } from 'undici';
import type { AppContext } from '../context.ts';
import { default_retry_delays_ms, isSuccess, nextStep, type AttemptResult } from '../domain/delivery-schedule.ts';
import type { Job } from '../workers/runner.ts';
import { literalPrivateTarget, publicOnlyLookup } from './address-guard.ts';
import { NOTIFICATIONS_CHANNEL } from './outbox.ts';

const delivery_timeout_ms = 10_000;
// A lease outlasts one attempt by this margin: a claim still held past it was lost with its worker.
const lease_margin_ms = 20_000;
const batch_size = 200;
const error_text_max = 500;

export interface DeliveryOptions { retryDelaysMs?: readonly number[]; timeoutMs?: number; random?: () => number }

interface Claimed {
  id: number; kind: string; url: string; event_id: string; payload: string; attempts: number;
  previous_status: string; status_changed_at: Date; event_status: string; resend_prior_status: string | null;
}

// Due, not leased, and first in line for its resource and target (a manual resend skips the line).
const claim_sql = `
  WITH due AS (
    SELECT n.id FROM notifications n
    WHERE n.status = 'PENDING' AND n.next_attempt_at <= $1 AND (n.locked_until IS NULL OR n.locked_until <= $1)
      AND (n.resend_prior_status IS NOT NULL OR NOT EXISTS (
        SELECT 1 FROM notifications p
        WHERE p.order_key = n.order_key AND p.status = 'PENDING' AND p.id < n.id
          AND (p.resend_prior_status IS NULL OR p.resend_prior_status = 'PENDING')))
    ORDER BY n.next_attempt_at, n.id LIMIT $2 FOR UPDATE SKIP LOCKED
  )
  UPDATE notifications n SET locked_until = $3, attempts = n.attempts + 1 FROM due WHERE n.id = due.id
  RETURNING n.id, n.kind, n.url, n.event_id, n.payload, n.attempts, n.previous_status, n.status_changed_at, n.event_status, n.resend_prior_status`;

const record_sql = `
  UPDATE notifications n SET status = x.status, last_response_status = x.code, last_error = x.error,
    next_attempt_at = coalesce(x.next_at, n.next_attempt_at), locked_until = NULL, resend_prior_status = NULL,
    delivered_at = CASE WHEN x.status = 'DELIVERED' THEN $6 ELSE n.delivered_at END
  FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::timestamptz[]) AS x (id, status, code, error, next_at)
  WHERE n.id = x.id AND n.locked_until = $7`; // only while this worker still holds the lease

export function signPayload(payload: string, secret: string): string {
  return createHmac('sha256', secret).update(payload, 'utf8').digest('hex');
}

/** The delivery worker: claims due notifications, posts them, records each outcome. */
export function createDeliveryJob(options: DeliveryOptions = {}): Job & { close(): Promise<void> } {
  const timeoutMs = options.timeoutMs ?? delivery_timeout_ms;
  const leaseMs = timeoutMs + lease_margin_ms;
  const agents = new Map<boolean, Agent>();
  const agentFor = (allowPrivate: boolean) => {
    let agent = agents.get(allowPrivate);
    if (!agent) {
      agent = new Agent({ connections: 64, connect: allowPrivate ? {} : { lookup: publicOnlyLookup as never } });
      agents.set(allowPrivate, agent);
    }
    return agent;
  };

  async function attempt(ctx: AppContext, n: Claimed): Promise<AttemptResult> {
    const url = new URL(n.url);
    if (!ctx.config.webhookAllowPrivate && literalPrivateTarget(url)) return { ok: false, status: null, error: 'target is a loopback or private address' };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'payment-gateway-notifier/1',
      'x-event-id': n.event_id,
      'x-delivery-attempt': String(n.attempts),
      'x-previous-status': n.previous_status,
      'x-status-changed-at': n.status_changed_at.toISOString(),
    };
    if (n.kind === 'TRANSACTION_POSTBACK') headers['x-signature'] = signPayload(n.payload, ctx.config.postbackSecret);
    try {
      // undici's request never follows redirects: a 3xx is a failed attempt, as CONTRACT §9 wants.
      const res = await request(url, {
        method: 'POST', headers, body: n.payload, dispatcher: agentFor(ctx.config.webhookAllowPrivate),
        headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body.dump();
      return isSuccess(res.statusCode) ? { ok: true, status: res.statusCode } : { ok: false, status: res.statusCode, error: `HTTP ${res.statusCode}` };
    } catch (err) {
      return { ok: false, status: null, error: String((err as Error).message ?? err).slice(0, error_text_max) };
    }
  }

  return {
    name: 'notification-delivery',
    idle_interval_ms: 1_000,
    wake_channel: NOTIFICATIONS_CHANNEL,
    async run(ctx) {
      const now = ctx.clock.now();
      const leaseUntil = new Date(now.getTime() + leaseMs);
      const claimed = (await ctx.db.query<Claimed>(claim_sql, [now, batch_size, leaseUntil])).rows;
      if (claimed.length === 0) return 0;
      const results = await Promise.all(claimed.map((n) => attempt(ctx, n)));
      const done = ctx.clock.now();
      const rows = claimed.map((n, i) => {
        const result = results[i]!;
        const step = nextStep(result, n.attempts, done, options.retryDelaysMs ?? default_retry_delays_ms, options.random);
        // A manual resend is one more attempt: if it fails, the notification returns to where it was.
        const resendOfFinished = n.resend_prior_status !== null && n.resend_prior_status !== 'PENDING';
        const status = step.kind === 'delivered' ? 'DELIVERED' : step.kind === 'retry' && !resendOfFinished ? 'PENDING' : (resendOfFinished ? n.resend_prior_status! : 'FAILED');
        return { id: n.id, status, code: result.status, error: result.ok ? null : result.error, next: step.kind === 'retry' && status === 'PENDING' ? step.at : null };
      });
      await ctx.db.query(record_sql, [rows.map((r) => r.id), rows.map((r) => r.status), rows.map((r) => r.code),
        rows.map((r) => r.error), rows.map((r) => r.next), done, leaseUntil]);
      return claimed.length;
    },
    async close() {
      await Promise.all([...agents.values()].map((a) => a.close()));
    },
  };
}
