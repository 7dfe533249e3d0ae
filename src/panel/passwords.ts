/**
 * Panel passwords (CONTRACT §12): scrypt, memory-hard, on a bounded pool. scrypt runs on libuv's
 * threads; unbounded, a flood of logins takes every core and the API slows with it. Here at most
 * `concurrency` hashes run at once, a few more wait briefly, and beyond that a login is told to come
 * back (429): a login may wait, a payment should not.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';

// N = 2^15, r = 8: 32 MiB and a few tens of ms per hash, the figures OWASP gives for scrypt.
const scrypt_params = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const key_length = 32;

export interface PoolOptions {
  /** Hashes running at once; default half the cores (at least one), the rest left to the API. */
  concurrency?: number;
  /** Hashes waiting for a turn; one more is refused at once. */
  maxWaiting?: number;
  /** Longest a hash waits for its turn before it is refused. */
  maxWaitMs?: number;
}

/** No turn for this hash now: the caller answers 429 with this wait. */
export class HashingBusy extends Error {
  readonly retryAfterSeconds = 1;
  constructor() {
    super('password hashing is busy');
  }
}

/** Hashing inside a slot of the pool. */
export interface Slot {
  hash(password: string): Promise<string>;
  matches(password: string, stored: string): Promise<boolean>;
}

function scryptOf(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, key_length, scrypt_params, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

const slot: Slot = {
  async hash(password) {
    const salt = randomBytes(16);
    const key = await scryptOf(password, salt);
    return `scrypt$${scrypt_params.N}$${scrypt_params.r}$${scrypt_params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
  },
  async matches(password, stored) {
    const [scheme, , , , salt, key] = stored.split('$');
    if (scheme !== 'scrypt' || !salt || !key) return false;
    const expected = Buffer.from(key, 'base64');
    const actual = await scryptOf(password, Buffer.from(salt, 'base64'));
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  },
};

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

export class PasswordHasher {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private readonly concurrency: number;
  private readonly maxWaiting: number;
  private readonly maxWaitMs: number;
  /** The most slots seen held at once. */
  peak = 0;

  constructor(options: PoolOptions = {}) {
    this.concurrency = options.concurrency ?? Math.max(1, Math.floor(availableParallelism() / 2));
    this.maxWaiting = options.maxWaiting ?? 8 * this.concurrency;
    this.maxWaitMs = options.maxWaitMs ?? 1_000;
  }

  hash(password: string): Promise<string> {
    return this.exclusive((s) => s.hash(password));
  }

  matches(password: string, stored: string): Promise<boolean> {
    return this.exclusive((s) => s.matches(password, stored));
  }

  /**
   * Runs `work` holding one slot of the pool, its hashes made in that slot; HashingBusy when no
   * slot comes within the wait. A login takes its slot before its attempt is counted, so a login
   * turned away for load does not use up one of the account's attempts.
   */
  async exclusive<T>(work: (slot: Slot) => Promise<T>): Promise<T> {
    await this.turn();
    try {
      return await work(slot);
    } finally {
      // The slot passes straight to the next in line, so no newcomer slips in between.
      const next = this.waiting.shift();
      if (next) next.start();
      else this.running--;
    }
  }

  /** Resolves holding a slot (counted in `running`). */
  private turn(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      this.peak = Math.max(this.peak, this.running);
      return Promise.resolve();
    }
    if (this.waiting.length >= this.maxWaiting) return Promise.reject(new HashingBusy());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(new HashingBusy());
        }, this.maxWaitMs),
      };
      this.waiting.push(waiter);
    });
  }
}
