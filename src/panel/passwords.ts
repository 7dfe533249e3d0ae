/**
 * Panel passwords (CONTRACT §12): scrypt, memory-hard, on a bounded pool. Unbounded, on libuv's
 * threads, a flood of logins took every core and the API slowed with it. Here at most `concurrency`
 * hashes run at once, each on a low-priority thread of its own, a few more wait in line briefly, and
 * the rest wait the same while and are told to come back (429): a login may wait, a payment should not.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

// N = 2^15, r = 8: 32 MiB and a few tens of ms per hash, the figures OWASP gives for scrypt.
const scrypt_params = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const key_length = 32;

export interface PoolOptions {
  /** Hashes running at once; default half the cores (at least one), the rest left to the API. */
  concurrency?: number;
  /** Hashes waiting in line for a turn; those beyond wait out `maxWaitMs` and are refused. */
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

// scrypt runs on a thread of its own at a low CPU priority (Linux: nice 10 for that thread alone,
// about a tenth of a busy core's share), not on libuv's shared threads: a flood of logins gets what
// the API leaves idle, and a login on a busy machine is slower, never refused for it. Plain JS,
// evaluated: no loader needed in the worker.
const worker_source = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(tid, 10);
} catch {}
parentPort.on('message', ({ id, password, salt, keyLength, params }) => {
  try {
    parentPort.postMessage({ id, key: scryptSync(password, Buffer.from(salt), keyLength, params) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
  }
});`;

/** One low-priority thread hashing one password at a time; started on first use, ended with its process. */
class ScryptThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve(key: Buffer): void; reject(error: Error): void }>();
  private seq = 0;

  scrypt(password: string, salt: Buffer): Promise<Buffer> {
    const worker = this.started();
    const id = ++this.seq;
    // Held up while it hashes; an idle thread never keeps the process up.
    if (this.pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, password: password.normalize('NFC'), salt, keyLength: key_length, params: scrypt_params });
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(worker_source, { eval: true });
    worker.on('message', (m: { id: number; key?: Uint8Array; error?: string }) => {
      const call = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (m.key) call?.resolve(Buffer.from(m.key));
      else call?.reject(new Error(m.error));
    });
    // A thread that dies fails what it held; the next hash starts a new one.
    const lost = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const call of this.pending.values()) call.reject(error);
      this.pending.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`password thread exited with ${code}`)));
    // After the listeners, which ref it again.
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

function slotOn(thread: ScryptThread): Slot {
  return {
    async hash(password) {
      const salt = randomBytes(16);
      const key = await thread.scrypt(password, salt);
      return `scrypt$${scrypt_params.N}$${scrypt_params.r}$${scrypt_params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
    },
    async matches(password, stored) {
      const [scheme, , , , salt, key] = stored.split('$');
      if (scheme !== 'scrypt' || !salt || !key) return false;
      const expected = Buffer.from(key, 'base64');
      const actual = await thread.scrypt(password, Buffer.from(salt, 'base64'));
      return actual.length === expected.length && timingSafeEqual(actual, expected);
    },
  };
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

export class PasswordHasher {
  private running = 0;
  /** Threads of slots not in use; a slot taken pops one (or starts one), and gives it back. */
  private readonly idle: Slot[] = [];
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
    const slot = this.idle.pop() ?? slotOn(new ScryptThread());
    try {
      return await work(slot);
    } finally {
      this.idle.push(slot);
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
    // Beyond the line a login still waits out the deadline before its 429, so a flood's connections
    // come back once a second, not as fast as an answer can be sent.
    if (this.waiting.length >= this.maxWaiting) return new Promise((_, reject) => setTimeout(() => reject(new HashingBusy()), this.maxWaitMs));
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
