/**
 * An installation on the embedded database (DATA_DIR: its PGlite database and secrets.json) copied
 * into an empty PostgreSQL database, so that it goes on there as it was (`npm run copy-to-postgres`,
 * copy-cli.ts). The embedded database is only read, under DATA_DIR's lock, so no gateway writes to it
 * meanwhile. The target gets it all in one transaction: this release's migrations, every table's rows
 * (parents before children, as the foreign keys want; a posting's journal lines in one statement, as
 * the trigger that checks each posting balanced wants), every sequence past the copied ids, the row
 * counts of both sides compared and the ledger verified. Anything amiss rolls it all back: the target
 * is left as it was.
 *
 * Rows travel as JSON (row_to_json on one side, json_populate_recordset on the other), so each value
 * goes through PostgreSQL's own text form of its type: bytea, jsonb, timestamps to the microsecond.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { ConfigError } from '../config.ts';
import { lockDataDir } from '../db/data-dir-lock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { type DatabaseTarget, parseDatabaseUrl } from '../db/hosts.ts';
import { migrate } from '../db/migrate.ts';
import { openPglite } from '../db/pglite.ts';
import { sessionFits } from '../db/primary.ts';
import { verifyLedger } from '../ledger/verify.ts';
import { copySequences, copyTable, parentsFirst, parentsOf, sameCounts, type Table, tablesOf } from './copy-rows.ts';

/** Not copied, and why; nothing was written to the target. */
export class CopyRefused extends Error {}
/** The command was given something that cannot be copied from (no embedded database there). */
export class BadArgument extends Error {}
/** The target did not confirm the commit: whether it holds the copy is for the operator to look. */
export class CommitUnconfirmed extends Error {}

export interface StoredSecrets {
  adminToken?: string;
  postbackSecret?: string;
  pixReceiverKey?: string;
}

export interface CopyReport {
  /** Every copied table with its rows: the same count on both sides. */
  tables: { table: string; rows: number }[];
  sequences: number;
  sellersChecked: number;
  installationId: string;
  secretsFile: string;
  /** What DATA_DIR/secrets.json holds (empty when the embedded gateway had everything from its environment). */
  secrets: StoredSecrets;
  /** The PIX receiver key of secrets.json, now kept in the database (where PostgreSQL keeps a made one). */
  pixReceiverKeyMoved: boolean;
}

// Each side's record of the migrations it applied: compared, never copied.
const bookkeeping = { gateway: 'public.schema_migrations', sandbox: 'sandbox_psp.migrations' };
// Filled by a migration (the installation's id): the embedded installation's row replaces it.
const seeded = new Set(['public.installation']);

export async function copyToPostgres(dataDir: string, targetUrl: string): Promise<CopyReport> {
  const pgliteDir = join(dataDir, 'pglite');
  if (!existsSync(join(pgliteDir, 'PG_VERSION'))) throw new BadArgument(`--data-dir ${dataDir}: no embedded database there (no ${pgliteDir})`);
  const secretsFile = join(dataDir, 'secrets.json');
  const secrets = readSecrets(secretsFile);
  const lock = await lockDataDir(dataDir).catch((error: unknown) => {
    throw error instanceof ConfigError ? new CopyRefused(`${error.message}: stop it first`) : error;
  });
  let source: Db;
  try {
    source = await openPglite(pgliteDir, lock.release);
  } catch (error) {
    lock.release();
    throw error;
  }
  try {
    const target = await connectTarget(targetUrl);
    try {
      return { ...(await copyInto(source, target, secrets)), secretsFile, secrets };
    } finally {
      await target.end();
    }
  } finally {
    await source.close();
  }
}

/**
 * The target's server that takes writes: the URL's hosts tried in the order written, as the gateway
 * finds its primary, so the URL the installation will run with serves here too.
 */
async function connectTarget(url: string): Promise<pg.Client> {
  let target: DatabaseTarget;
  try {
    target = parseDatabaseUrl(url);
  } catch (error) {
    throw new BadArgument(`--to ${(error as Error).message}`);
  }
  const writable: DatabaseTarget = { ...target, attrs: target.attrs === 'primary' ? 'primary' : 'read-write' };
  const tried: string[] = [];
  for (const { host, port } of target.hosts) {
    const client = new pg.Client({ ...target.config, host, port, connectionTimeoutMillis: 10_000 });
    try {
      await client.connect();
      if (await sessionFits(client, writable)) return client;
      tried.push(`${host}:${port} takes no writes`);
    } catch (error) {
      tried.push(`${host}:${port}: ${(error as Error).message}`);
    }
    await client.end().catch(() => {});
  }
  throw new CopyRefused(`cannot connect to the target (${tried.join('; ')})`);
}

function readSecrets(file: string): StoredSecrets {
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as StoredSecrets;
  } catch {
    throw new BadArgument(`${file} is not valid JSON`);
  }
}

/** A connection in one transaction, as the Db that migrations and the ledger's verification take. */
function inTransaction(client: pg.Client): Db {
  const query = async <T>(text: string, params?: unknown[]) => {
    const r = await client.query(text, params);
    return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
  };
  return {
    kind: 'postgres',
    listening: false,
    available: true,
    query,
    tx: (fn) => fn({ query }),
    listen: () => Promise.reject(new Error('no LISTEN while copying')),
    close: async () => {},
  };
}

async function copyInto(source: Db, client: pg.Client, secrets: StoredSecrets): Promise<Omit<CopyReport, 'secretsFile' | 'secrets'>> {
  // REPEATABLE READ from the start, so the ledger's verification (which asks for it) runs in this very transaction.
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    await client.query('SET LOCAL statement_timeout = 0');
    const target = inTransaction(client);
    await refuseForeignTables(target);
    const sourceTables = await tablesOf(source);
    await migrate(target);
    if (sourceTables.has(bookkeeping.sandbox)) await migrateSandbox(target);
    const targetTables = await tablesOf(target);
    await sameMigrations(source, target, sourceTables.has(bookkeeping.sandbox));
    await refuseData(target, targetTables);
    const names = sameShape(sourceTables, targetTables);
    const order = parentsFirst(names, await parentsOf(target));
    const tables = await source.tx(async (q) => {
      const copied: CopyReport['tables'] = [];
      for (const name of order) copied.push({ table: name, rows: await copyTable(q, target, sourceTables.get(name)!) });
      return copied;
    });
    const sequences = await copySequences(source, target);
    const pixReceiverKeyMoved = await movePixReceiverKey(target, secrets);
    await sameCounts(target, tables);
    const ledger = await verifyLedger(target);
    if (!ledger.ok) {
      const before = await verifyLedger(source);
      throw new CopyRefused(
        `the copy's ledger does not verify (${JSON.stringify(ledger.mismatches.slice(0, 3))}); the embedded one ${before.ok ? 'does' : 'does not either'}`,
      );
    }
    const installationId = (await target.query<{ id: string }>('SELECT installation_id AS id FROM installation')).rows[0]!.id;
    await client.query('COMMIT').catch((error: Error) => {
      throw new CommitUnconfirmed(`the target did not confirm the COMMIT (${error.message}): look whether it holds the copy before trying again`);
    });
    // The planner's statistics of the tables just filled, rather than waiting for autovacuum to gather them.
    await client.query('ANALYZE').catch(() => {});
    return { tables, sequences, sellersChecked: ledger.sellersChecked, installationId, pixReceiverKeyMoved };
  } catch (error) {
    if (!(error instanceof CommitUnconfirmed)) await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** The embedded PSP's own migrations, as its start applies them; only when the embedded installation has its schema. */
async function migrateSandbox(db: Db): Promise<void> {
  const { migrate: migratePsp } = await import('../../packages/sandbox-psp/src/migrate.ts');
  await migratePsp(db);
}

/** Tables before the migrations, none of them the gateway's: some other application's database. */
async function refuseForeignTables(target: Queryable): Promise<void> {
  const tables = [...(await tablesOf(target)).keys()];
  if (tables.length > 0 && !tables.includes(bookkeeping.gateway))
    throw new CopyRefused(`the target holds tables that are not a gateway's (${tables.slice(0, 5).join(', ')}): copy into an empty database`);
}

/** Both sides migrated alike: the embedded database by this release (its gateway migrates at start), the target not by a newer one. */
async function sameMigrations(source: Queryable, target: Queryable, sandbox: boolean): Promise<void> {
  const applied = async (q: Queryable, table: string, column: string) =>
    (await q.query<{ m: string }>(`SELECT ${column}::text AS m FROM ${table} ORDER BY 1`)).rows.map((r) => r.m).join(', ');
  for (const [table, column] of [[bookkeeping.gateway, 'version'], ...(sandbox ? [[bookkeeping.sandbox, 'name']] : [])] as const) {
    const [theirs, ours] = [await applied(source, table, column), await applied(target, table, column)];
    if (theirs !== ours)
      throw new CopyRefused(
        `the embedded database's migrations (${table}: ${theirs}) are not this release's (${ours}): ` +
          "start this release's gateway on DATA_DIR once (it migrates at start), stop it, then copy; or copy into a database no newer release has migrated",
      );
  }
}

/**
 * Any row but the migrations' own: the target is some installation's already. The row a migration
 * made (a new installation id) goes, for the embedded installation's.
 */
async function refuseData(target: Queryable, tables: Map<string, Table>): Promise<void> {
  for (const name of [...tables.keys()].sort()) {
    if (Object.values(bookkeeping).includes(name) || seeded.has(name)) continue;
    const { rows } = await target.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${name}) AS any`);
    if (rows[0]!.any) throw new CopyRefused(`the target already holds an installation's data (${name} has rows): copy into an empty database`);
  }
  for (const name of seeded) await target.query(`DELETE FROM ${name}`);
}

/** The tables to copy: every one of the embedded database, each with the same columns in the target. */
function sameShape(source: Map<string, Table>, target: Map<string, Table>): string[] {
  const names = [...source.keys()].filter((name) => !Object.values(bookkeeping).includes(name)).sort();
  for (const name of names) {
    const columns = (t: Table | undefined) => (t ? [...t.columns].sort().join(', ') : 'no such table');
    if (columns(source.get(name)) !== columns(target.get(name)))
      throw new CopyRefused(`${name} differs: ${columns(source.get(name))} in the embedded database, ${columns(target.get(name))} in the target`);
  }
  return names;
}

/** The key secrets.json kept goes where PostgreSQL keeps a made one, so BR Codes go on carrying the same key. */
async function movePixReceiverKey(target: Queryable, secrets: StoredSecrets): Promise<boolean> {
  if (!secrets.pixReceiverKey) return false;
  const moved = await target.query('UPDATE installation SET pix_receiver_key = $1 WHERE pix_receiver_key IS NULL', [secrets.pixReceiverKey]);
  return moved.rowCount > 0;
}
