import { ConfigError } from '../config-values.ts';
import { lockDataDir } from './data-dir-lock.ts';
import type { Db } from './db.ts';
import { DatabaseUrlError, parseDatabaseUrl } from './hosts.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

export interface OpenOptions {
  poolSize?: number;
}

/** PostgreSQL for a postgres:// URL; otherwise the embedded PGlite, in DATA_DIR or in memory. */
export async function openDb(url: string | undefined, dataDir: string, options: OpenOptions = {}): Promise<Db> {
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    try {
      parseDatabaseUrl(url);
    } catch (error) {
      // Read at start, before anything is opened: a configuration error, one line naming the variable.
      if (error instanceof DatabaseUrlError) throw new ConfigError(`DATABASE_URL ${error.message}`);
      throw error;
    }
    return openPostgres(url, options.poolSize ?? 10);
  }
  if (url && url !== 'memory://') throw new Error(`unsupported DATABASE_URL scheme: ${url.split(':')[0]}`);
  if (url === 'memory://') return openPglite('memory://');
  // On disk, one process at a time: a second one would silently overwrite the first one's writes.
  const lock = await lockDataDir(dataDir);
  try {
    return await openPglite(`${dataDir}/pglite`, lock.release);
  } catch (error) {
    lock.release();
    throw error;
  }
}
