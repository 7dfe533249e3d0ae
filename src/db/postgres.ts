import pg from 'pg';
import { Availability } from './availability.ts';
import { commit } from './commit.ts';
import { DatabaseUnavailableError, type Db, isRetryable, type Queryable, type QueryResult, type TxOptions } from './db.ts';
import { parseDatabaseUrl } from './hosts.ts';
import { destroyClient, PgListener } from './pg-listener.ts';
import { listenerClient, movedOn, PrimaryFinder, sessionFits } from './primary.ts';

// Every wait on the database is bounded; the server enforces the statement limits itself, and the
// client-side read timeout catches a server that cannot even say so (a partitioned network).
// A fresh backend on a loaded 2-core machine took over 1 s at times, and a slow connect trips the
// availability switch (a false outage); a dead or silent server is still told within this.
const connect_timeout_ms = 2_500;
// Waiting for a pooled connection is another wait: a burst of requests queues behind the pool's
// connections for longer than a new connection takes to open (a dead server is caught by the
// connect timeout and the availability switch, not by this one).
const pool_wait_ms = 3_000;
const statement_timeout_ms = 5_000;
const read_timeout_margin_ms = 1_000;
// A process that stalls inside a transaction must not hold its row locks for long.
const idle_in_transaction_timeout_ms = 10_000;
const tx_max_attempts = 5;

// Errors that say the server could not be reached at all: trip, so others fail fast.
const unreachable_codes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ETIMEDOUT', '57P03']); // cannot_connect_now (starting or shutting down)
// too_many_connections: the server is up and our pooled connections still work; a new one waits for a slot.
const server_full = '53300';
const server_full_backoff_ms = [25, 50, 100, 200, 400];
// Errors that say this one connection is gone.
const lost_codes = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', '57P01', '57P02']); // admin_shutdown, crash_shutdown
const lost_messages = /Connection terminated|not queryable|Client was closed/;
const stale_plan = /cached plan must not change result type/;

class StalePlanError extends DatabaseUnavailableError {
  constructor(message: string, options: { cause: unknown }) {
    super(message, true, options);
  }
}

// read_only_sql_transaction: the server was a primary and is a standby now (a failover demoted it).
const read_only = '25006';

/** Maps a driver error to what callers act on; the rest pass through untouched. */
function classify(error: unknown, availability: Availability): unknown {
  if (error instanceof DatabaseUnavailableError) return error;
  const { code = '', message = '' } = (error ?? {}) as { code?: string; message?: string };
  const cause = { cause: error };
  // A migration changed a table under a statement this connection prepared before it: the statement
  // never ran; a new connection prepares it again (the caller tries once more).
  if (code === '0A000' && stale_plan.test(message)) return new StalePlanError('prepared statement outdated by a migration', cause);
  if (code === read_only) {
    // Fail fast until the probe has found the new primary; this server's connections are all stale.
    availability.trip();
    return new DatabaseUnavailableError('database turned read-only (demoted)', true, cause);
  }
  if (unreachable_codes.has(code) || code.startsWith('08') || message === 'Query read timeout') {
    availability.trip();
    return new DatabaseUnavailableError('database unreachable', true, cause);
  }
  if (lost_codes.has(code) || lost_messages.test(message)) return new DatabaseUnavailableError('database connection lost', true, cause);
  if (code === '57014') return new DatabaseUnavailableError('database statement timed out', false, cause);
  return error;
}

const isServerFull = (error: unknown) => (error as { code?: string } | null)?.code === server_full;

/** A connection could not be had: the pool stayed full (overload), or the server is out of reach. */
function connectFailure(error: unknown, availability: Availability): DatabaseUnavailableError {
  if ((error as Error)?.message === 'timeout exceeded when trying to connect' || isServerFull(error)) {
    return new DatabaseUnavailableError('database busy: no connection free in time', false, { cause: error });
  }
  availability.trip();
  return new DatabaseUnavailableError('database unreachable', false, { cause: error });
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

const generation_of = new WeakMap<pg.Client, number>();

/** A pool whose every wait is bounded, and the set of its clients checked out now. */
function boundedPool(finder: PrimaryFinder, poolSize: number): { pool: pg.Pool; checkedOut: Set<pg.PoolClient> } {
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format)),
  };
  // pg-pool bounds the queue and each connect with one setting: the pool gets the queue's, and its
  // clients their own, shorter, connect timeout. Each connects to the host in use when it is made.
  class QuickConnectClient extends pg.Client {
    constructor(config: pg.ClientConfig = {}) {
      // No JIT: every statement here is short, and a cost estimate past its threshold (statistics that
      // lag a burst of rows) would spend ~100 ms compiling a query that runs in a few.
      const options = [config.options, '-c jit=off'].filter(Boolean).join(' ');
      super({ ...config, ...finder.current, options, connectionTimeoutMillis: connect_timeout_ms });
      generation_of.set(this, finder.generation);
    }
  }
  const pool = new pg.Pool({
    Client: QuickConnectClient,
    ...finder.target.config,
    max: poolSize,
    types,
    keepAlive: true,
    connectionTimeoutMillis: pool_wait_ms,
    statement_timeout: statement_timeout_ms,
    query_timeout: statement_timeout_ms + read_timeout_margin_ms,
    idle_in_transaction_session_timeout: idle_in_transaction_timeout_ms,
  });
  // A client that loses its connection, idle or checked out between statements, must not crash the
  // process: the loss surfaces as the failure of its next statement.
  pool.on('error', () => {});
  pool.on('connect', (c) => c.on('error', () => {}));
  const checkedOut = new Set<pg.PoolClient>();
  pool.on('acquire', (c) => checkedOut.add(c));
  pool.on('release', (_err, c) => checkedOut.delete(c));
  pool.on('remove', (c) => checkedOut.delete(c as pg.PoolClient));
  return { pool, checkedOut };
}

/**
 * A pooled connection on the host in use; a server at its connection limit frees slots as other clients
 * leave: wait for one, within the pool's wait. A connection made before the host changed is dropped, and
 * a new one is checked once (libpq's `target_session_attrs`): a node found to be a standby sends the
 * finder looking for the primary.
 */
async function connectWhenFree(
  pool: pg.Pool,
  availability: Availability,
  finder: PrimaryFinder,
  checked: WeakSet<pg.Client>,
): Promise<pg.PoolClient> {
  if (!availability.available) throw new DatabaseUnavailableError('database unreachable', false);
  const deadline = Date.now() + pool_wait_ms;
  for (let attempt = 0; ; attempt++) {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      // The host in use is gone: another of the URL's may be the primary now (or at start).
      if (!isServerFull(error) && (await movedOn(finder, error))) continue;
      const pause = server_full_backoff_ms[Math.min(attempt, server_full_backoff_ms.length - 1)]!;
      if (!isServerFull(error) || Date.now() + pause > deadline) throw connectFailure(error, availability);
      await new Promise((resolve) => setTimeout(resolve, pause));
      continue;
    }
    if (generation_of.get(client) !== finder.generation) {
      client.release(true); // made for the host used before a failover
      continue;
    }
    if (checked.has(client)) return client;
    let fits: boolean;
    try {
      fits = await sessionFits(client, finder.target);
    } catch (error) {
      client.release(true);
      throw classify(error, availability);
    }
    if (fits) {
      checked.add(client);
      return client;
    }
    client.release(true);
    if (Date.now() > deadline) throw new DatabaseUnavailableError('database: no primary found in time', false);
    await finder.find().catch((error) => {
      availability.trip();
      throw error;
    });
  }
}

type Runner = <T>(client: pg.PoolClient, sql: string, params?: unknown[], readTimeoutMs?: number) => Promise<QueryResult<T>>;

/** fn in one transaction on one client, retried on serialization failures and deadlocks. */
async function inTransaction<T>(
  connect: () => Promise<pg.PoolClient>,
  run: Runner,
  fn: (q: Queryable) => Promise<T>,
  options: TxOptions,
): Promise<T> {
  const readTimeoutMs = options.timeoutMs ? options.timeoutMs + read_timeout_margin_ms : undefined;
  for (let attempt = 1; ; attempt++) {
    const client = await connect();
    const q: Queryable = { query: (sql, params) => run(client, sql, params, readTimeoutMs) };
    let broken: Error | undefined;
    try {
      await q.query('BEGIN');
      if (options.timeoutMs) await q.query(`SET LOCAL statement_timeout = ${Math.trunc(options.timeoutMs)}`);
      const result = await fn(q);
      await commit(client, q);
      return result;
    } catch (error) {
      // A lost connection is not rolled back by us (it cannot be): the server does it.
      if (error instanceof DatabaseUnavailableError && error.connectionLost) broken = error;
      else
        await client.query('ROLLBACK').catch((e: Error) => {
          broken = e;
        });
      const again = isRetryable(error) || (error instanceof StalePlanError && attempt === 1);
      if ((broken && !(error instanceof StalePlanError)) || !again || attempt >= tx_max_attempts) throw error;
    } finally {
      client.release(broken); // with an error, the pool discards the client
    }
  }
}

export function openPostgres(url: string, poolSize: number): Db {
  const finder = new PrimaryFinder(parseDatabaseUrl(url), connect_timeout_ms);
  const { pool, checkedOut } = boundedPool(finder, poolSize);
  const checked = new WeakSet<pg.Client>();
  const availability = new Availability(
    // Back only once a host of the right kind answers; after a failover, that is the new primary.
    () => finder.find(),
    // Statements in flight when the database vanished would each wait for their own timeout.
    () => {
      for (const c of checkedOut) destroyClient(c);
    },
  );
  const listener = new PgListener(() => listenerClient(finder), availability);

  const connect = () => connectWhenFree(pool, availability, finder, checked);
  const run: Runner = async <T>(client: pg.PoolClient, sql: string, params?: unknown[], readTimeoutMs?: number) => {
    if (!availability.available) throw new DatabaseUnavailableError('database unreachable', false);
    // Parameterized statements are prepared once per connection: the big CTE statements of the
    // ledger and sale paths are then parsed and planned once, not on every call.
    const config: pg.QueryConfig & { query_timeout?: number } =
      params && params.length > 0 ? { name: statementName(sql), text: sql, values: params } : { text: sql };
    if (readTimeoutMs) config.query_timeout = readTimeoutMs;
    try {
      const r = await client.query(config);
      return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
    } catch (error) {
      throw classify(error, availability);
    }
  };

  return {
    kind: 'postgres',
    get listening() {
      return listener.listening;
    },
    get available() {
      return availability.available;
    },
    async query(sql, params) {
      for (let attempt = 1; ; attempt++) {
        const client = await connect();
        let lost: Error | undefined;
        try {
          return await run(client, sql, params);
        } catch (error) {
          if (error instanceof DatabaseUnavailableError && error.connectionLost) lost = error;
          if (error instanceof StalePlanError && attempt === 1) continue;
          throw error;
        } finally {
          client.release(lost); // with an error, the pool discards the client
        }
      }
    },
    tx: (fn, options = {}) => inTransaction(connect, run, fn, options),
    listen: (channel, handlers) => listener.subscribe(channel, handlers),
    async close() {
      listener.close();
      availability.close();
      await pool.end();
    },
  };
}
