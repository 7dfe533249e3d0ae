/**
 * What the embedded PSP needs of a database: a PostgreSQL that answers queries and runs
 * transactions (the gateway's pool or PGlite fits), a tagged template for parameterized SQL, and a
 * batcher so that a burst of writes shares one statement. Its own, so nothing of the gateway's
 * internals is needed to run it.
 */
export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<T>>;
}

export interface Db extends Queryable {
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
}

/** A statement with its values, composed by `sql\`…\``: a value becomes $n, a nested statement is inlined with its own values. */
export interface Statement {
  readonly parts: readonly string[];
  readonly values: readonly unknown[];
}

const isStatement = (value: unknown): value is Statement =>
  typeof value === 'object' && value !== null && Array.isArray((value as Statement).parts) && 'values' in (value as object);

export function sql(parts: TemplateStringsArray, ...values: unknown[]): Statement {
  return { parts: [...parts], values };
}

function render(statement: Statement, params: unknown[]): string {
  return statement.parts.reduce((text, part, i) => {
    if (i === 0) return part;
    const value = statement.values[i - 1];
    return text + (isStatement(value) ? render(value, params) : `$${params.push(value)}`) + part;
  }, '');
}

export async function run<T = Record<string, unknown>>(q: Queryable, statement: Statement): Promise<QueryResult<T>> {
  const params: unknown[] = [];
  const text = render(statement, params);
  return q.query<T>(text, params);
}

export function one<T>(r: QueryResult<T>): T {
  if (r.rows.length === 0) throw new Error('sandbox PSP: expected a row, got none');
  return r.rows[0]!;
}

export const maybeOne = <T>(r: QueryResult<T>): T | null => r.rows[0] ?? null;

/**
 * `write` called with the items asked for while the previous call was out (at most `max`, and no
 * two of one key: the second waits for the next call), one call at a time per database, each item
 * answered with its own result.
 */
export function batchedPer<T, R>(write: (db: Queryable, items: T[]) => Promise<R[]>, key: (item: T) => string, max = 32) {
  interface Waiting {
    item: T;
    done: (result: R) => void;
    failed: (error: unknown) => void;
  }
  const lanes = new WeakMap<Queryable, { queue: Waiting[]; busy: boolean }>();
  const pump = async (db: Queryable) => {
    const lane = lanes.get(db)!;
    if (lane.busy || lane.queue.length === 0) return;
    lane.busy = true;
    const keys = new Set<string>();
    const taken = lane.queue.filter((w) => keys.size < max && !keys.has(key(w.item)) && keys.add(key(w.item)));
    lane.queue = lane.queue.filter((w) => !taken.includes(w));
    try {
      const results = await write(
        db,
        taken.map((w) => w.item),
      );
      for (const [i, w] of taken.entries()) w.done(results[i]!);
    } catch (error) {
      for (const w of taken) w.failed(error);
    } finally {
      lane.busy = false;
      void pump(db);
    }
  };
  return (db: Queryable, item: T): Promise<R> => {
    if (!lanes.has(db)) lanes.set(db, { queue: [], busy: false });
    return new Promise<R>((done, failed) => {
      lanes.get(db)!.queue.push({ item, done, failed });
      void pump(db);
    });
  };
}
