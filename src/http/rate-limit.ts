// Per-process rate limits (CONTRACT §2): token buckets kept in memory, no I/O. Several gateway
// processes each count on their own, so the effective limit is the per-process one times the count.

/** Milliseconds from a monotonic origin; injectable so tests can move time. */
export type MsClock = () => number;

export const monotonicClock: MsClock = () => performance.now();

// Enough for every seller and a wide spread of client addresses; beyond it the least recently seen
// key is forgotten, which at worst hands that key a full bucket again.
export const max_tracked_keys = 100_000;

const ms_per_s = 1000;

interface Bucket {
  tokens: number;
  atMs: number;
}

export interface BucketOptions {
  /** Tokens a fresh key has, and the most it can hold. */
  capacity: number;
  refillPerSecond: number;
  maxKeys?: number;
  clock?: MsClock;
}

/** A token bucket per key in a bounded Map (insertion order = recency, so the first key is the oldest). */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly capacity: number;
  private readonly refillPerMs: number;
  private readonly maxKeys: number;
  private readonly clock: MsClock;

  constructor(options: BucketOptions) {
    this.capacity = options.capacity;
    this.refillPerMs = options.refillPerSecond / ms_per_s;
    this.maxKeys = options.maxKeys ?? max_tracked_keys;
    this.clock = options.clock ?? monotonicClock;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Seconds until `key` has a whole token (at least 1), or 0 when it has one now. Consumes nothing. */
  waitSeconds(key: string): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    return this.secondsUntilToken(this.refilled(bucket, this.clock()));
  }

  /** Takes one token; returns 0 when granted, else the seconds to wait (at least 1). */
  take(key: string): number {
    const now = this.clock();
    const existing = this.buckets.get(key);
    const tokens = existing ? this.refilled(existing, now) : this.capacity;
    const granted = tokens >= 1;
    this.store(key, { tokens: granted ? tokens - 1 : tokens, atMs: now });
    return granted ? 0 : this.secondsUntilToken(tokens);
  }

  /** Gives back a token taken for something that turned out not to count (a login that succeeded). */
  giveBack(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.capacity, bucket.tokens + 1);
  }

  private refilled(bucket: Bucket, now: number): number {
    return Math.min(this.capacity, bucket.tokens + Math.max(0, now - bucket.atMs) * this.refillPerMs);
  }

  private secondsUntilToken(tokens: number): number {
    if (tokens >= 1) return 0;
    return Math.max(1, Math.ceil((1 - tokens) / this.refillPerMs / ms_per_s));
  }

  private store(key: string, bucket: Bucket): void {
    // Delete first so the key moves to the end: the Map's first key is always the least recent.
    if (!this.buckets.delete(key) && this.buckets.size >= this.maxKeys) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
    this.buckets.set(key, bucket);
  }
}

export interface RateLimitSettings {
  authFailuresPerMinute: number;
  rateLimitPerSecond: number;
}

/** One app's limiters: failed authentications per client address, requests per seller key. */
export interface RateLimits {
  authFailures: TokenBuckets;
  sellers: TokenBuckets;
}

const burst_factor = 2;
const s_per_minute = 60;

export function createRateLimits(settings: RateLimitSettings, clock: MsClock = monotonicClock): RateLimits {
  return {
    authFailures: new TokenBuckets({
      capacity: settings.authFailuresPerMinute,
      refillPerSecond: settings.authFailuresPerMinute / s_per_minute,
      clock,
    }),
    sellers: new TokenBuckets({
      capacity: settings.rateLimitPerSecond * burst_factor,
      refillPerSecond: settings.rateLimitPerSecond,
      clock,
    }),
  };
}
