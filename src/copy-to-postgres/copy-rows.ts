/**
 * How copy.ts carries an embedded database's rows and sequences into PostgreSQL, read from each
 * side's catalog: the tables with their stored columns and keys, an order the foreign keys accept,
 * the rows themselves, and the sequences.
 */
import type { Queryable } from '../db/db.ts';

/** The schemas copied: the gateway's, and the embedded PSP's when a rail is the sandbox's. */
export const schemas = ['public', 'sandbox_psp'];

// Rows of one value here go in one statement: the balance trigger checks each posting at the end of its statement.
const together: Record<string, string> = { 'public.journal_lines': 'posting_id' };
const batch_rows = 2_000;
const batch_chars = 4_000_000;

export interface Table {
  name: string;
  /** Every stored column but the generated ones, which the target computes itself. */
  columns: string[];
  key: string[];
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

export async function tablesOf(q: Queryable): Promise<Map<string, Table>> {
  const { rows } = await q.query<Table>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name,
       array(SELECT a.attname::text FROM pg_attribute a
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum) AS columns,
       array(SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
             WHERE i.indrelid = c.oid AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)) AS key
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY ($1::text[])`,
    [schemas],
  );
  return new Map(rows.map((t) => [t.name, t]));
}

export async function parentsOf(q: Queryable): Promise<Map<string, Set<string>>> {
  const { rows } = await q.query<{ child: string; parent: string }>(
    `SELECT format('%I.%I', cn.nspname, c.relname) AS child, format('%I.%I', pn.nspname, p.relname) AS parent
     FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
     JOIN pg_class p ON p.oid = k.confrelid JOIN pg_namespace pn ON pn.oid = p.relnamespace
     WHERE k.contype = 'f'`,
  );
  const parents = new Map<string, Set<string>>();
  for (const { child, parent } of rows) parents.set(child, (parents.get(child) ?? new Set()).add(parent));
  return parents;
}

/** An order in which each table comes after those it references; a table that references itself is copied in key order. */
export function parentsFirst(names: string[], parents: Map<string, Set<string>>): string[] {
  const order: string[] = [];
  let left = [...names];
  while (left.length > 0) {
    const ready = left.filter((t) => [...(parents.get(t) ?? [])].every((p) => p === t || order.includes(p) || !names.includes(p)));
    if (ready.length === 0) throw new Error(`the foreign keys of ${left.join(', ')} form a cycle: no order can copy them`);
    order.push(...ready);
    left = left.filter((t) => !ready.includes(t));
  }
  return order;
}

/** One table, read through a cursor and written in batches; the rows written. */
export async function copyTable(source: Queryable, target: Queryable, table: Table): Promise<number> {
  const columns = table.columns.map(ident).join(', ');
  const group = together[table.name];
  const order = [...(group ? [group] : []), ...table.key].map((c) => `r.${ident(c)}`).join(', ');
  const expected = Number((await source.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table.name}`)).rows[0]!.n);
  await source.query(
    `DECLARE copy_rows NO SCROLL CURSOR FOR SELECT row_to_json(r)::text AS row${group ? `, r.${ident(group)}::text AS grp` : ''}
     FROM (SELECT ${columns} FROM ${table.name}) r${order ? ` ORDER BY ${order}` : ''}`,
  );
  const insert = `INSERT INTO ${table.name} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${table.name}, $1::json)`;
  let batch: string[] = [];
  let chars = 0;
  let last: string | null | undefined;
  let copied = 0;
  const flush = async () => {
    if (batch.length > 0) await target.query(insert, [`[${batch.join(',')}]`]);
    copied += batch.length;
    batch = [];
    chars = 0;
  };
  for (let fetched = batch_rows; fetched === batch_rows; ) {
    const { rows } = await source.query<{ row: string; grp?: string | null }>(`FETCH ${batch_rows} FROM copy_rows`);
    for (const r of rows) {
      if ((batch.length >= batch_rows || chars >= batch_chars) && (!group || r.grp !== last)) await flush();
      batch.push(r.row);
      chars += r.row.length;
      last = r.grp;
    }
    fetched = rows.length;
  }
  await flush();
  await source.query('CLOSE copy_rows');
  if (copied !== expected) throw new Error(`${table.name}: ${expected} rows counted, ${copied} read`);
  return copied;
}

const sequences_sql = `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'S' AND n.nspname = ANY ($1::text[]) ORDER BY 1`;

// Each sequence that numbers a column, with its table and column.
const owned_sql = `SELECT format('%I.%I', sn.nspname, s.relname) AS seq, format('%I.%I', tn.nspname, t.relname) AS tbl, a.attname::text AS col
  FROM pg_depend d
  JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S' JOIN pg_namespace sn ON sn.oid = s.relnamespace
  JOIN pg_class t ON t.oid = d.refobjid JOIN pg_namespace tn ON tn.oid = t.relnamespace
  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
  WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i') AND sn.nspname = ANY ($1::text[])`;

/** Every sequence where the embedded database left it, then past the largest id its column holds, whatever it said. */
export async function copySequences(source: Queryable, target: Queryable): Promise<number> {
  const names = (await source.query<{ name: string }>(sequences_sql, [schemas])).rows.map((r) => r.name);
  const theirs = new Set((await target.query<{ name: string }>(sequences_sql, [schemas])).rows.map((r) => r.name));
  for (const name of names) {
    if (!theirs.has(name)) throw new Error(`sequence ${name} is not in the target`);
    const s = (await source.query<{ last: string; called: boolean }>(`SELECT last_value::text AS last, is_called AS called FROM ${name}`)).rows[0]!;
    await target.query('SELECT setval($1::regclass, $2::bigint, $3)', [name, s.last, s.called]);
  }
  for (const { seq, tbl, col } of (await target.query<{ seq: string; tbl: string; col: string }>(owned_sql, [schemas])).rows) {
    await target.query(
      `SELECT setval($1::regclass, m) FROM (SELECT max(${ident(col)}) AS m FROM ${tbl}) x, ${seq} s
       WHERE m > s.last_value OR (m = s.last_value AND NOT s.is_called)`,
      [seq],
    );
  }
  return names.length;
}

export async function sameCounts(target: Queryable, tables: { table: string; rows: number }[]): Promise<void> {
  for (const { table, rows } of tables) {
    const n = Number((await target.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`)).rows[0]!.n);
    if (n !== rows) throw new Error(`${table}: ${rows} rows in the embedded database, ${n} in the target`);
  }
}
