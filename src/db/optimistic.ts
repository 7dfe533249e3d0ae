/** What an attempt answers when the row changed since it was read: nothing was written. */
export const CONFLICT = Symbol('row changed since read');

// Each retry means another writer changed the row in between; this many in a row is a bug.
const max_attempts = 50;

/**
 * Optimistic concurrency: read, decide in memory, write only if the row is still the version
 * read. A lost race reads again and decides afresh.
 */
export async function retryOnConflict<T>(what: string, attempt: () => Promise<T | typeof CONFLICT>): Promise<T> {
  for (let i = 1; i <= max_attempts; i++) {
    const result = await attempt();
    if (result !== CONFLICT) return result;
  }
  throw new Error(`${what}: the row kept changing under ${max_attempts} attempts`);
}
