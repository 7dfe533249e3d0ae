/**
 * CONTRACT §9's retry schedule: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then every 12 h,
 * for about three days; then FAILED. Delays are in milliseconds, jittered ±10 %.
 */
const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;

export const default_retry_delays_ms: readonly number[] = [
  5 * second,
  5 * minute,
  30 * minute,
  2 * hour,
  5 * hour,
  10 * hour,
  10 * hour,
  12 * hour,
  12 * hour,
  12 * hour,
  12 * hour,
];
const jitter_ratio = 0.1;

export type AttemptResult = { ok: true; status: number } | { ok: false; status: number | null; error: string };

export type NextStep = { kind: 'delivered' } | { kind: 'retry'; at: Date } | { kind: 'failed' };

/**
 * What follows attempt number `attempts` (1-based). Any 2xx is delivered; 410 Gone stops at once;
 * anything else retries while the schedule lasts. `random` is injectable for tests.
 */
export function nextStep(
  result: AttemptResult,
  attempts: number,
  now: Date,
  delays: readonly number[] = default_retry_delays_ms,
  random = Math.random,
): NextStep {
  if (result.ok) return { kind: 'delivered' };
  if (result.status === 410) return { kind: 'failed' };
  const delay = delays[attempts - 1];
  if (delay === undefined) return { kind: 'failed' };
  const jitter = delay * jitter_ratio * (2 * random() - 1);
  return { kind: 'retry', at: new Date(now.getTime() + Math.round(delay + jitter)) };
}

export const isSuccess = (status: number) => status >= 200 && status < 300;

/** How long the schedule keeps a notification alive at most: every delay at its longest jitter. */
export function scheduleSpanMs(delays: readonly number[] = default_retry_delays_ms): number {
  return Math.round(delays.reduce((sum, d) => sum + d, 0) * (1 + jitter_ratio));
}

/**
 * The circuit of one endpoint (a seller's target URL), as Svix and Stripe keep one: after
 * `threshold` attempts in a row fail (an error, a timeout, any status but 2xx), it opens and the
 * endpoint's notifications wait without being attempted; when it has been open `openMs`, one
 * notification goes as a probe (half-open); a probe that fails opens it again for twice as long, up
 * to `maxOpenMs`; any success closes it (and releases the endpoint's waiting notifications).
 */
export interface CircuitPolicy {
  threshold: number;
  openMs: number;
  maxOpenMs: number;
}

export const default_circuit: CircuitPolicy = { threshold: 5, openMs: 30 * second, maxOpenMs: hour };

/** How long the circuit stays open its `opened`-th time in a row (1-based), before jitter. */
export function circuitOpenMs(opened: number, policy: CircuitPolicy = default_circuit): number {
  return Math.min(policy.maxOpenMs, policy.openMs * 2 ** Math.max(0, Math.min(opened - 1, 30)));
}

/** A factor of 1 ± 10 % that spreads the probes of circuits opened together. */
export const jitterFactor = (random = Math.random) => 1 + jitter_ratio * (2 * random() - 1);
