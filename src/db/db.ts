export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

/** Anything that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
}

/** What a subscriber to a LISTEN channel hears. */
export interface ListenHandlers {
  onPayload(payload: string): void;
  /** The listening connection died: payloads may be missed until onRestored. */
  onLost?(): void;
  /** Listening again (after a loss, or for the first time after a failed start). */
  onRestored?(): void;
}

export interface TxOptions {
  /** A statement time limit above the default, for the rare long job (migrations, ledger verification). */
  timeoutMs?: number;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs fn in one database transaction; commits on return, rolls back on throw. */
  tx<T>(fn: (q: Queryable) => Promise<T>, options?: TxOptions): Promise<T>;
  /**
   * Subscribes to a channel on the process's one listening connection, which reconnects by itself
   * and LISTENs again to every channel; resolves to an unsubscribe function.
   */
  listen(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>>;
  /** True while the listening connection is up with every channel subscribed. */
  readonly listening: boolean;
  /** False while the database is known to be unreachable: queries then fail at once. */
  readonly available: boolean;
  close(): Promise<void>;
}

/**
 * The database could not answer in time: unreachable, overloaded, or the connection was lost
 * mid-statement. Requests answer 503 with Retry-After; nothing half-written stays behind, because
 * an unfinished transaction is rolled back by the server when its connection goes.
 */
export class DatabaseUnavailableError extends Error {
  constructor(
    message: string,
    readonly connectionLost: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * A COMMIT was sent and no answer says whether it took (the connection dropped, or the server stopped
 * waiting for its synchronous standby). Answered like an outage, never as success or failure: the
 * client's retry with its Idempotency-Key finds what was kept.
 */
export class CommitOutcomeUnknownError extends DatabaseUnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, true, options);
    this.name = 'CommitOutcomeUnknownError';
  }
}

const retryable_sqlstates = new Set(['40001', '40P01']); // serialization failure, deadlock

export function isRetryable(error: unknown): boolean {
  return retryable_sqlstates.has((error as { code?: string })?.code ?? '');
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad identifier: ${name}`);
  return `"${name}"`;
}

/** Exponential backoff with jitter: 50–100 % of min(cap, base · 2^failures). */
export function backoffMs(failures: number, baseMs: number, capMs: number, random = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(failures, 20));
  return Math.round(ceiling * (0.5 + random() / 2));
}
