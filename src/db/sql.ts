import type { Queryable, QueryResult } from './db.ts';

/**
 * A piece of SQL with its values, written as a tagged template: `sql\`... WHERE id = ${id}\``.
 * Values become numbered placeholders when the statement is assembled, so pieces compose (a
 * fragment inside a fragment keeps its own values) and adding a column never shifts a hand-counted
 * `$n`. The text depends only on the template, never on the values, so it is prepared once.
 */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}

  /** The statement text with $1… placeholders, and its parameters in order. */
  build(): { text: string; params: unknown[] } {
    const params: unknown[] = [];
    const text = this.render(params);
    return { text, params };
  }

  private render(params: unknown[]): string {
    let text = this.strings[0]!;
    this.values.forEach((value, i) => {
      text += value instanceof Sql ? value.render(params) : `$${params.push(value)}`;
      text += this.strings[i + 1]!;
    });
    return text;
  }
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values);
}

/** Trusted text (an identifier or a constant of our own), inlined as is. */
export function raw(text: string): Sql {
  return new Sql([text], []);
}

export async function run<T = Record<string, unknown>>(q: Queryable, statement: Sql): Promise<QueryResult<T>> {
  const { text, params } = statement.build();
  return q.query<T>(text, params);
}

/** The only row of a result; a missing row is a bug here, not a business outcome. */
export function one<T>(r: QueryResult<T>): T {
  const row = r.rows[0];
  if (row === undefined) throw new Error('expected one row, got none');
  return row;
}

/** The first row of a result, or null. */
export function maybeOne<T>(r: QueryResult<T>): T | null {
  return r.rows[0] ?? null;
}

/**
 * `column < beforeId`, every row without a cursor: one range a generic plan still walks in the
 * index from the cursor, where `$n IS NULL OR id < $n` would make it filter every row of the seller.
 */
export function before(column: string, beforeId: number | null): Sql {
  return sql`${raw(column)} < coalesce(${beforeId}::bigint, 9223372036854775807)`;
}
