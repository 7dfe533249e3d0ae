/**
 * Name lookups of receivers (webhook and postback URLs), which any seller chooses, bounded in time
 * and in number. dns.lookup runs getaddrinfo on libuv's thread pool (4 threads unless
 * UV_THREADPOOL_SIZE says otherwise), which log writes, provider connects and password hashing
 * share, and a name whose nameserver never answers holds its thread for the resolver's own
 * timeouts, tens of seconds. So receivers' lookups take at most half the pool, counted until
 * getaddrinfo really returns, and their callers wait at most `deadlineMs`: one seller's dead
 * nameserver delays nobody else's work.
 */
import dns, { type LookupAddress, type LookupAllOptions } from 'node:dns';

type LookupAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface LookupBounds {
  /** Lookups running at once; more wait their turn. */
  slots: number;
  /** A caller's whole wait, its turn included. */
  deadlineMs: number;
}

export type BoundedLookup = (hostname: string, options?: Omit<LookupAllOptions, 'all'>) => Promise<LookupAddress[]>;

interface Waiter {
  hostname: string;
  options: LookupAllOptions;
  settle(err: NodeJS.ErrnoException | null, addresses: LookupAddress[]): void;
}

export function boundedLookup(lookup: LookupAll, bounds: LookupBounds): BoundedLookup {
  const queue: Waiter[] = [];
  let running = 0;

  const start = (w: Waiter) => {
    running++;
    lookup(w.hostname, w.options, (err, addresses) => {
      running--;
      w.settle(err, addresses);
      pump();
    });
  };
  const pump = () => {
    while (running < bounds.slots && queue.length > 0) start(queue.shift()!);
  };

  return (hostname, options = {}) =>
    new Promise<LookupAddress[]>((resolve, reject) => {
      let done = false;
      const waiter: Waiter = {
        hostname,
        options: { ...options, all: true },
        settle(err, addresses) {
          if (done) return; // answered after its caller gave up: only its slot mattered
          done = true;
          clearTimeout(timer);
          if (err) reject(err);
          else resolve(addresses);
        },
      };
      const timer = setTimeout(() => {
        const queued = queue.indexOf(waiter);
        if (queued >= 0) queue.splice(queued, 1);
        const error: NodeJS.ErrnoException = new Error(`no answer for ${hostname} within ${bounds.deadlineMs} ms`);
        error.code = 'ETIMEOUT';
        waiter.settle(error, []);
      }, bounds.deadlineMs);
      if (running < bounds.slots) start(waiter);
      else queue.push(waiter);
    });
}

const pool_threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;

/** The process's lookups of receivers: half the thread pool, 2 s each. */
export const receiverLookup: BoundedLookup = boundedLookup(
  // dns.lookup read at each call, so that a test's mock of it is the one used.
  (hostname, options, callback) => dns.lookup(hostname, options, callback),
  { slots: Math.max(1, Math.floor(pool_threads / 2)), deadlineMs: 2_000 },
);
