/** One attempt of one notification: the POST, its headers and signatures, bounded in time. */
import { createHmac } from 'node:crypto';
import { Agent, request } from 'undici';
import type { AppContext } from '../context.ts';
import { type AttemptResult, isSuccess } from '../domain/delivery-schedule.ts';
import { standardWebhookHeaders } from '../domain/standard-webhooks.ts';
import { timeoutSignal } from '../http/timeout-signal.ts';
import { literalPrivateTarget, receiverSocketLookup } from './address-guard.ts';
import type { Claimed } from './delivery-claim.ts';

// Once the status is in, the body is read only to reuse the connection: this long at most (and within
// the attempt's deadline), then the connection is dropped, so a receiver that drips its body frees its
// slot instead of holding it to the deadline.
const body_grace_ms = 1_000;
const error_text_max = 500;

export function signPayload(payload: string, secret: string): string {
  return createHmac('sha256', secret).update(payload, 'utf8').digest('hex');
}

/**
 * Dispatchers for the attempts: one refusing private addresses at connect time, one allowing them.
 * `connections` per origin is the worker's own limit of attempts in flight: an attempt never queues
 * inside the agent behind others to the same host (hanging ones of another seller, say), where its
 * deadline would run out before it is even sent. The claim's limits bound what goes to one target.
 */
export class Agents {
  private readonly agents = new Map<boolean, Agent>();

  constructor(private readonly connections: number) {}

  for(allowPrivate: boolean): Agent {
    let agent = this.agents.get(allowPrivate);
    if (!agent) {
      agent = new Agent({ connections: this.connections, connect: { lookup: receiverSocketLookup(allowPrivate) as never } });
      this.agents.set(allowPrivate, agent);
    }
    return agent;
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close()));
  }
}

function headersOf(ctx: AppContext, n: Claimed): Record<string, string> {
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
  return headers;
}

/** One POST of one notification, bounded by `timeoutMs`; never throws. */
export async function attempt(ctx: AppContext, n: Claimed, agents: Agents, timeoutMs: number): Promise<AttemptResult> {
  const url = new URL(n.url);
  if (!ctx.config.webhookAllowPrivate && literalPrivateTarget(url))
    return { ok: false, status: null, error: 'target is a loopback or private address' };
  const deadline = timeoutSignal(timeoutMs);
  try {
    // undici's request never follows redirects: a 3xx is a failed attempt, as CONTRACT §9 wants.
    const res = await request(url, {
      method: 'POST',
      headers: headersOf(ctx, n),
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
