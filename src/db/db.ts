import { mkdirSync } from 'node:fs';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

/** Anything that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
}

export type Listener = (payload: string) => void;

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs fn in one database transaction; commits on return, rolls back on throw. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * LISTEN on a channel; resolves to an unsubscribe function. onLost fires if the listening
   * connection dies, after which no more payloads arrive (callers must stop trusting caches).
   */
  listen(channel: string, onPayload: Listener, onLost?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const retryable_sqlstates = new Set(['40001', '40P01']); // serialization failure, deadlock
const tx_max_attempts = 5;

export function isRetryable(error: unknown): boolean {
  return retryable_sqlstates.has((error as { code?: string })?.code ?? '');
}

export async function openDb(url: string | undefined, dataDir: string, poolSize = 10): Promise<Db> {
  if (url && /^postgres(ql)?:\/\//.test(url)) return openPostgres(url, poolSize);
  if (url && url !== 'memory://') throw new Error(`unsupported DATABASE_URL scheme: ${url.split(':')[0]}`);
  return openPglite(url === 'memory://' ? 'memory://' : pgliteDir(dataDir));
}

function pgliteDir(dataDir: string): string {
  const dir = `${dataDir}/pglite`;
  mkdirSync(dir, { recursive: true });
  return dir;
}

// int8 values (ids, cents) come back as JS numbers; anything past 2^53 would be a bug we want loud.
function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`int8 out of safe range: ${value}`);
  return n;
}

const statement_names = new Map<string, string>();
function statementName(sql: string): string {
  let name = statement_names.get(sql);
  if (!name) {
    name = `s${statement_names.size + 1}`;
    statement_names.set(sql, name);
  }
  return name;
}

function openPostgres(url: string, poolSize: number): Db {
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format),
  };
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => {});
  const run = async <T>(c: pg.Pool | pg.PoolClient, sql: string, params?: unknown[]) => {
    // Parameterized statements are prepared once per connection: the big CTE statements of the
    // ledger and sale paths are then parsed and planned once, not on every call.
    const r = params && params.length > 0
      ? await c.query({ name: statementName(sql), text: sql, values: params as unknown[] })
      : await c.query(sql);
    return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
  };
  return {
    kind: 'postgres',
    query: (sql, params) => run(pool, sql, params),
    async tx(fn) {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const result = await fn({ query: (sql, params) => run(client, sql, params) });
          await client.query('COMMIT');
          return result;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          if (!isRetryable(error) || attempt >= tx_max_attempts) throw error;
        } finally {
          client.release();
        }
      }
    },
    async listen(channel, onPayload, onLost) {
      const client = new pg.Client({ connectionString: url });
      let closing = false;
      client.on('error', () => {});
      client.on('end', () => { if (!closing) onLost?.(); });
      await client.connect();
      client.on('notification', (m) => { if (m.channel === channel) onPayload(m.payload ?? ''); });
      await client.query(`LISTEN ${quoteIdent(channel)}`);
      return async () => { closing = true; await client.end().catch(() => {}); };
    },
    close: () => pool.end(),
  };
}

async function openPglite(dir: string): Promise<Db> {
  const db = new PGlite(dir);
  await db.waitReady;
  const wrap = (c: { query: PGlite['query'] }): Queryable => ({
    async query<T>(sql: string, params?: unknown[]) {
      const r = await c.query<T>(sql, params as unknown[]);
      return { rows: r.rows, rowCount: r.affectedRows || r.rows.length };
    },
  });
  const self = wrap(db);
  return {
    kind: 'pglite',
    query: self.query,
    // PGlite is one connection: its transaction() queues callers, which serializes them for us.
    tx: (fn) => db.transaction((t) => fn(wrap(t))),
    async listen(channel, onPayload) {
      const unlisten = await db.listen(channel, onPayload);
      return async () => { await unlisten().catch(() => {}); };
    },
    close: () => db.close(),
  };
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad identifier: ${name}`);
  return `"${name}"`;
}
