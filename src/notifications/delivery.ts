import { run } from '../db/sql.ts';
import {
  type AttemptResult,
  type CircuitPolicy,
  default_circuit,
  default_retry_delays_ms,
  nextStep,
  scheduleSpanMs,
} from '../domain/delivery-schedule.ts';
import type { Job } from '../workers/job.ts';
import { Agents, attempt } from './delivery-attempt.ts';
import { type Claimed, claimSql } from './delivery-claim.ts';
import { type Outcome, OutcomeRecorder } from './delivery-record.ts';
import { NOTIFICATIONS_CHANNEL } from './outbox.ts';

export { signPayload } from './delivery-attempt.ts';

const delivery_timeout_ms = 10_000;
// A lease outlasts one attempt by this margin: a claim still held past it was lost with its worker.
const lease_margin_ms = 20_000;
// Attempts in flight in this process; to any one target (URL) and for any one seller, in all
// workers: a target that hangs holds at most its own share, and a seller whose many targets hang
// holds at most its share, never the slots of the others.
const in_flight_max = 1024;
const per_target_in_flight_max = 32;
const per_seller_in_flight_max = 128;
const claim_batch_max = 200;
// Each seller's oldest due notifications the claim reads: twice its share, so rows it cannot take
// now (out of order, a target at its limit) leave room for the ones it can.
const seller_window = 2 * per_seller_in_flight_max;
// Outcomes arriving within this window free their slots for one claim, not one claim each.
const reclaim_delay_ms = 2;

export interface DeliveryOptions {
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
  random?: () => number;
  perTargetMax?: number;
  perSellerMax?: number;
  circuit?: Partial<CircuitPolicy>;
}

export interface DeliveryJob extends Job {
  /** Resolves once every attempt started so far has been recorded. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** What an attempt's result makes of the notification: delivered, retried later, or failed for good. */
function outcomeOf(n: Claimed, result: AttemptResult, now: Date, options: DeliveryOptions): Omit<Outcome, 'lease' | 'done'> {
  const step = nextStep(result, n.attempts, now, options.retryDelaysMs ?? default_retry_delays_ms, options.random);
  // A manual resend is one more attempt: if it fails, the notification returns to where it was.
  const prior = n.resend_prior_status !== null && n.resend_prior_status !== 'PENDING' ? n.resend_prior_status : null;
  const status = step.kind === 'delivered' ? 'DELIVERED' : (prior ?? (step.kind === 'retry' ? 'PENDING' : 'FAILED'));
  const next = step.kind === 'retry' && status === 'PENDING' ? step.at : null;
  return { id: n.id, ok: result.ok, status, code: result.status, error: result.ok ? null : result.error, next };
}

/**
 * The delivery worker. Each attempt is independent: run() claims what is due (fairly, within the
 * limits above, past no open circuit), starts the attempts and returns; each outcome is recorded
 * when its attempt ends, batched with whatever else ended meanwhile. A receiver that hangs delays
 * nobody but itself, and a seller whose receivers hang delays no other seller.
 */
export function createDeliveryJob(options: DeliveryOptions = {}): DeliveryJob {
  const timeoutMs = options.timeoutMs ?? delivery_timeout_ms;
  const perTargetMax = options.perTargetMax ?? per_target_in_flight_max;
  const perSellerMax = options.perSellerMax ?? per_seller_in_flight_max;
  const spanMs = scheduleSpanMs(options.retryDelaysMs ?? default_retry_delays_ms);
  const agents = new Agents(in_flight_max);
  const circuit = { ...default_circuit, ...options.circuit };
  const recorder = new OutcomeRecorder(circuit, options.random ?? Math.random, reclaim_delay_ms);
  const inFlight = new Set<Promise<void>>();

  async function settled(): Promise<void> {
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  }

  return {
    name: 'notification-delivery',
    idle_interval_ms: 1_000,
    wake_channel: NOTIFICATIONS_CHANNEL,
    async run(ctx, wake = () => {}) {
      // A turn of the event loop between claims: on the embedded database a statement runs on this
      // thread, and back-to-back claims would otherwise starve the sockets of the attempts under way.
      await new Promise((resolve) => setImmediate(resolve));
      const room = Math.min(claim_batch_max, in_flight_max - inFlight.size);
      if (room <= 0) return 0;
      const now = ctx.clock.now();
      const lease = new Date(now.getTime() + timeoutMs + lease_margin_ms);
      const times = { now, lease, expiredBefore: new Date(now.getTime() - spanMs), holdMs: circuit.maxOpenMs };
      const limits = { room, perTargetMax, perSellerMax, window: Math.max(seller_window, 2 * perSellerMax) };
      const claimed = (await run<Claimed>(ctx.db, claimSql(times, limits))).rows;
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
