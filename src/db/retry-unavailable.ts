import { DatabaseUnavailableError } from './db.ts';

const pauses_ms = [100, 250, 500, 1_000];

/**
 * `work` tried again while the database is unavailable (a failover, a cut), for up to `withinMs`:
 * for the writes that must not be lost to a short outage because what they record already happened
 * elsewhere (a provider answered, the process is listening). Any other error, or the deadline, throws.
 */
export async function retryWhileUnavailable<T>(work: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const pause = pauses_ms[Math.min(attempt, pauses_ms.length - 1)]!;
      if (!(error instanceof DatabaseUnavailableError) || Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
