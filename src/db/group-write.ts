/**
 * Group commit for a hot write: writes that arrive while the database is busy with earlier ones
 * leave together as one statement, so a burst of N pays for one round trip, one wake-up of a
 * backend and one commit instead of N. Nothing waits for a batch to fill: a write goes at once
 * when fewer than `inFlight` statements are out, and a batch is simply whatever queued meanwhile.
 *
 * The sale, claim, charge and balance-read groups keep one statement out, not two: measured on two
 * cores, a second lane halved each group and so doubled the statements, and each statement's
 * wake-ups of a backend and of this process cost more than the wait for the one ahead (dynamic PIX
 * sales: 1,324-1,662 µs of gateway and 869-960 µs of PostgreSQL CPU each with two, 1,025-1,183 and
 * 515-630 µs with one; balance reads: 16-25 µs of PostgreSQL CPU each with two, 6-14 with one). A
 * statement that stalls holds its queue until the statement timeout, as a stalled database would.
 *
 * A statement that the server refused (an error with a SQLSTATE: nothing of it committed) is tried
 * again one write at a time, so one write's error never becomes its neighbours'. Any other failure
 * (a lost connection: the statement may have committed; a timeout) is every write's, as it would
 * be alone. A write that waited `maxWaitMs` for its turn fails with `tooLong()`, as a request
 * that waited that long for a pooled connection would.
 */
import { DatabaseUnavailableError } from './db.ts';

export interface GroupWriteOptions<I, O> {
  /** One statement for the writes, answering one result per write, in order. */
  flush(items: I[]): Promise<O[]>;
  /** Writes with the same slot never share a statement (one row may not be touched twice by it); null: any. */
  slot(item: I): string | null;
  inFlight: number;
  maxItems: number;
  maxWaitMs: number;
  tooLong(): Error;
}

interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
  timer?: NodeJS.Timeout;
}

export function groupWriter<I, O>(options: GroupWriteOptions<I, O>): (item: I) => Promise<O> {
  const queue: Waiting<I, O>[] = [];
  let running = 0;

  const take = (): Waiting<I, O>[] => {
    const batch: Waiting<I, O>[] = [];
    const slots = new Set<string>();
    for (let i = 0; i < queue.length && batch.length < options.maxItems; ) {
      const slot = options.slot(queue[i]!.item);
      if (slot !== null && slots.has(slot)) {
        i++; // left for a later statement, in its turn
        continue;
      }
      if (slot !== null) slots.add(slot);
      const taken = queue.splice(i, 1)[0]!;
      clearTimeout(taken.timer);
      batch.push(taken);
    }
    return batch;
  };

  const pump = () => {
    while (running < options.inFlight && queue.length > 0) {
      const batch = take();
      running++;
      send(batch).finally(() => {
        running--;
        pump();
      });
    }
  };

  const send = async (batch: Waiting<I, O>[]) => {
    try {
      settle(batch, await options.flush(batch.map((w) => w.item)));
    } catch (error) {
      if (batch.length === 1 || !refusedByServer(error)) {
        for (const w of batch) w.reject(error);
        return;
      }
      for (const w of batch) {
        try {
          settle([w], await options.flush([w.item]));
        } catch (alone) {
          w.reject(alone);
        }
      }
    }
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      const waiting: Waiting<I, O> = { item, resolve, reject };
      queue.push(waiting);
      pump();
      if (queue.includes(waiting)) {
        waiting.timer = setTimeout(() => {
          const at = queue.indexOf(waiting);
          if (at < 0) return;
          queue.splice(at, 1);
          reject(options.tooLong());
        }, options.maxWaitMs);
      }
    });
}

/** A write waits for its turn as long as a request waits for a pooled connection, then is told the database is busy (503). */
export const waitingAsForAConnection = (what: string) => ({
  maxWaitMs: 3_000,
  tooLong: () => new DatabaseUnavailableError(`database busy: ${what} waited too long for their turn`, false),
});

/**
 * A group writer per database handle (one queue per pool), made on the handle's first write: each
 * database's writes group among themselves only.
 */
export function groupWriterPer<D extends object, I, O>(options: (db: D) => GroupWriteOptions<I, O>): (db: D, item: I) => Promise<O> {
  const writers = new WeakMap<D, (item: I) => Promise<O>>();
  return (db, item) => {
    let write = writers.get(db);
    if (!write) {
      write = groupWriter(options(db));
      writers.set(db, write);
    }
    return write(item);
  };
}

function settle<I, O>(batch: Waiting<I, O>[], results: O[]) {
  if (results.length !== batch.length) throw new Error(`a group write answered ${results.length} results for ${batch.length} writes`);
  for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]!);
}

/** The server answered the statement with an error: it rolled back whole, and no write of it committed. */
function refusedByServer(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08');
}
