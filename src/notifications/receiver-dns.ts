/**
 * Name lookups of receivers (webhook and postback URLs), which any seller chooses, bounded in time
 * and in number. dns.lookup runs getaddrinfo on libuv's thread pool (4 threads unless
 * UV_THREADPOOL_SIZE says otherwise), which log writes, provider connects and password hashing
 * share, and a name whose nameserver never answers holds its thread for the resolver's own
 * timeouts, tens of seconds. So receivers' lookups take at most half the pool, counted until
 * getaddrinfo really returns; the callers of one name share its lookup (one dead name holds one
 * slot at most); and a caller waits at most `deadlineMs`. A seller's dead name server never holds
 * the pool's other work; many dead names at once can delay other receivers' lookups, whose
 * attempts then fail within the deadline and are retried.
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
  key: string;
  hostname: string;
  options: LookupAllOptions;
  settle(err: NodeJS.ErrnoException | null, addresses: LookupAddress[]): void;
}

export function boundedLookup(lookup: LookupAll, bounds: LookupBounds): BoundedLookup {
  const queue: Waiter[] = [];
  // The callers of each name being looked up: one lookup, so one dead name holds one slot at most.
  const inFlight = new Map<string, Waiter[]>();
  let running = 0;

  const finish = (key: string, err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
    const joined = inFlight.get(key) ?? [];
    running--;
    inFlight.delete(key);
    for (const w of joined) w.settle(err, addresses);
    pump();
  };
  const admitted = (w: Waiter): boolean => {
    const joined = inFlight.get(w.key);
    if (joined) joined.push(w);
    else if (running < bounds.slots) {
      running++;
      inFlight.set(w.key, [w]);
      try {
        lookup(w.hostname, w.options, (err, addresses) => finish(w.key, err, addresses));
      } catch (error) {
        finish(w.key, error as NodeJS.ErrnoException, []);
      }
    } else return false;
    return true;
  };
  const pump = () => {
    for (let i = 0; i < queue.length; ) {
      if (admitted(queue[i]!)) queue.splice(i, 1);
      else i++;
    }
  };

  return (hostname, options = {}) =>
    new Promise<LookupAddress[]>((resolve, reject) => {
      let done = false;
      const waiter: Waiter = {
        key: `${hostname}\0${options.family ?? 0}\0${options.hints ?? 0}`,
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
      if (!admitted(waiter)) queue.push(waiter);
    });
}

const pool_threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;

/** The process's lookups of receivers: half the thread pool, 2 s each. */
export const receiverLookup: BoundedLookup = boundedLookup(
  // dns.lookup read at each call, so that a test's mock of it is the one used.
  (hostname, options, callback) => dns.lookup(hostname, options, callback),
  { slots: Math.max(1, Math.floor(pool_threads / 2)), deadlineMs: 2_000 },
);
