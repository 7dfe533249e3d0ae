// npm run bench:reconciliation: one account's São Paulo day of BENCH_RECONCILIATION_MOVEMENTS journal
// movements (default 1,000,000) reconciled against a provider's record streamed in pages of 1,000
// (CONTRACT §15). Figures, never assertions. Per database two child processes run the gateway's
// context as `npm start` runs it: one writes the day (set-based SQL), then one reconciles it, so the
// peak RSS it reports is the reconciliation's, not the writing's.
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { AppContext } from '../src/context.ts';
import type { Db } from '../src/db/db.ts';
import { run, sql } from '../src/db/sql.ts';
import type { Account } from '../src/providers/ports.ts';
import type { ProviderMovement, RecordReader } from '../src/providers/record.ts';
import { dayWindow } from '../src/reconciliation/days.ts';
import { reconcileDay } from '../src/reconciliation/reconcile.ts';
import { closeContext, createContext, loadSettings } from '../src/runtime.ts';
import { insertSeller } from '../src/sellers/sellers-repo.ts';
import { postgresCpuUs } from './pgbench.ts';

const movements = Number(process.env.BENCH_RECONCILIATION_MOVEMENTS ?? 1_000_000);
// PGlite runs in the gateway's process and one statement at a time: BENCH_RECONCILIATION_PGLITE_MOVEMENTS may make its day smaller.
const pglite_movements = Number(process.env.BENCH_RECONCILIATION_PGLITE_MOVEMENTS ?? movements);
const postgres_url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const page_size = 1_000;
const write_chunk = 100_000; // postings written per statement (each statement's lines balance per posting)
const injected = 10; // of each difference: missing at the provider, extra at the provider, unequal amounts
const day = '2026-03-10';
const account: Account = { id: 'api-pix:bench', connector: 'api-pix' };
// The journal's movements spread over the day; the provider books each 30 s later, still the same day.
const span_ms = 86_400_000 - 120_000;
const lag_ms = 30_000;
const long_statement_ms = 600_000;

const amountOf = (i: number) => 100 + ((i * 7919) % 99_901);
const referenceOf = (i: number) => `E${String(i).padStart(31, '0')}`;
const offsetMs = (i: number, n: number) => Math.floor(((i - 1) * span_ms) / n);

/** Which movements of the day differ: missing at the provider, and booked there with one cent more. */
function differences(n: number): { missing: Set<number>; unequal: Set<number> } {
  const step = Math.floor(n / injected);
  const at = (back: number) => new Set(Array.from({ length: injected }, (_, k) => (k + 1) * step - back));
  return { missing: at(1), unequal: at(2) };
}

/** The day's journal: n FIRST_PAYMENT postings of one seller, each its account's funds lowered and the seller's available raised. */
async function writeDay(ctx: AppContext, n: number): Promise<void> {
  const seller = await ctx.db.tx((q) => insertSeller(q, { name: 'Bench reconciliation', email: 'recon@example.com', document: null }));
  const from = dayWindow(day).from;
  const funds = `customer_funds:${account.id}`;
  for (let lo = 1; lo <= n; lo += write_chunk) {
    const hi = Math.min(n, lo + write_chunk - 1);
    await ctx.db.tx(
      (q) =>
        run(
          q,
          sql`WITH g AS (
                SELECT nextval('postings_id_seq') AS posting_id, i, 100 + (i * 7919) % 99901 AS amount,
                  ${from}::timestamptz + ((i - 1) * ${span_ms}::bigint / ${n}::bigint) * interval '1 millisecond' AS at
                FROM generate_series(${lo}::bigint, ${hi}::bigint) AS i
              ), p AS (
                INSERT INTO postings (id, kind, seller_id, created_at) SELECT posting_id, 'FIRST_PAYMENT', ${seller.id}::bigint, at FROM g
              )
              INSERT INTO journal_lines (posting_id, account, seller_id, amount, reference, created_at)
              SELECT g.posting_id, x.account, x.seller_id, x.amount, x.reference, g.at
              FROM g CROSS JOIN LATERAL (VALUES (${funds}::text, NULL::bigint, -g.amount, 'E' || lpad(g.i::text, 31, '0')),
                ('available', ${seller.id}::bigint, g.amount, NULL)) AS x (account, seller_id, amount, reference)`,
        ),
      { timeoutMs: long_statement_ms },
    );
  }
  // The balances projection, once for the whole day.
  await ctx.db.tx(
    (q) =>
      run(
        q,
        sql`UPDATE balances SET available = (SELECT coalesce(sum(amount), 0) FROM journal_lines WHERE seller_id = ${seller.id}::bigint AND account = 'available')
            WHERE seller_id = ${seller.id}::bigint`,
      ),
    { timeoutMs: long_statement_ms },
  );
  // A day written over 24 hours has been analysed by autovacuum by the time it is reconciled.
  for (const table of ['postings', 'journal_lines']) await ctx.db.tx((q) => q.query(`ANALYZE ${table}`), { timeoutMs: long_statement_ms });
}

interface Marks {
  readEnd: number;
  readCpu: NodeJS.CpuUsage | null;
}

/** The provider's record of the day, made page by page as it is read (never the day in memory), with the injected differences. */
function providerRecord(n: number, marks: Marks): RecordReader {
  const { missing, unequal } = differences(n);
  const from = dayWindow(day).from.getTime();
  return async function* () {
    let page: ProviderMovement[] = [];
    for (let i = 1; i <= n + injected; i++) {
      if (missing.has(i)) continue;
      const at = i <= n ? from + offsetMs(i, n) + lag_ms : from + span_ms + (i - n) * 1000; // past n: extra, not in the journal
      const amount = amountOf(i) + (unequal.has(i) ? 1 : 0);
      page.push({ id: `rx${i}`, kind: 'PIX_RECEIVED', reference: referenceOf(i), amount, at: new Date(at) });
      if (page.length === page_size) {
        yield page;
        page = [];
      }
    }
    if (page.length > 0) yield page;
    // The last page is kept by now: what follows in reconcileDay is the matching.
    marks.readEnd = performance.now();
    marks.readCpu = process.cpuUsage();
  };
}

const gc = () => (globalThis as { gc?: () => void }).gc?.();
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const memory = () => ({ maxRss: process.resourceUsage().maxRSS * 1024, heap: process.memoryUsage().heapUsed });
const count = (x: number) => Math.round(x).toLocaleString('en-US');
const us = (cpu: NodeJS.CpuUsage) => cpu.user + cpu.system;

interface Slow {
  ms: number;
  statement: string;
}

/**
 * The context with every statement after the last page timed (the matching's), so that the slow ones
 * are shown beside the pool's statement_timeout, which bounds each of them on PostgreSQL.
 */
function timed(ctx: AppContext, marks: Marks): { ctx: AppContext; slow: Slow[] } {
  const slow: Slow[] = [];
  const db = Object.create(ctx.db) as Db;
  db.query = async <T>(text: string, params?: unknown[]) => {
    const start = performance.now();
    try {
      return await ctx.db.query<T>(text, params);
    } finally {
      const ms = performance.now() - start;
      // Named by its last line, which tells the matcher's statements apart.
      const last = text.trim().split('\n').at(-1)!.trim().replace(/\s+/g, ' ');
      if (marks.readCpu && ms >= 100) slow.push({ ms, statement: last.length > 60 ? `${last.slice(0, 60)}…` : last });
    }
  };
  return { ctx: { ...ctx, db }, slow };
}

/** Reconciles the day once and prints its figures. */
async function measure(ctx: AppContext, n: number, label: string): Promise<void> {
  const embedded = ctx.db.kind === 'pglite';
  gc();
  const before = memory();
  let peakHeap = before.heap;
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 20);
  const marks: Marks = { readEnd: 0, readCpu: null };
  const pgStart = embedded ? 0 : postgresCpuUs();
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const watched = timed(ctx, marks);
  const outcome = await reconcileDay(watched.ctx, { account, readers: [providerRecord(n, marks)], lateByMs: 0 }, day);
  const end = performance.now();
  const cpuEnd = process.cpuUsage();
  const pgEnd = embedded ? 0 : postgresCpuUs();
  clearInterval(sampler);
  const heapAtEnd = process.memoryUsage().heapUsed;
  peakHeap = Math.max(peakHeap, heapAtEnd);
  gc();
  const after = memory();
  const readCpu = marks.readCpu ?? cpuEnd;
  const readEnd = marks.readCpu ? marks.readEnd : end;
  const phase = (name: string, ms: number, cpuUs: number) =>
    console.log(
      `  ${name.padEnd(13)} ${(ms / 1000).toFixed(2).padStart(7)} s ${count(n / (ms / 1000)).padStart(10)} movements/s   cpu ${(cpuUs / n).toFixed(1).padStart(5)} µs/movement (gateway process)`,
    );
  console.log(`\n[${label}] N = ${count(n)} movements of ${account.id} on ${day}, provider pages of ${page_size}`);
  phase('read (store)', readEnd - start, us(readCpu) - us(cpuStart));
  phase('match', end - readEnd, us(cpuEnd) - us(readCpu));
  phase('total', end - start, us(cpuEnd) - us(cpuStart));
  const limit = embedded
    ? 'PGlite: no statement_timeout'
    : `statement_timeout ${(await ctx.db.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t")).rows[0]?.t}`;
  console.log(`  match statements ≥ 100 ms (${limit}):`);
  for (const x of watched.slow) console.log(`    ${(x.ms / 1000).toFixed(2).padStart(6)} s  ${x.statement}`);
  if (!embedded) console.log(`  PostgreSQL cpu ${((pgEnd - pgStart) / n).toFixed(1)} µs/movement over the whole run (every postgres process)`);
  const t = outcome.tally;
  console.log(
    `  state ${outcome.state}${outcome.error ? ` (${outcome.error})` : ''}; provider ${count(t?.providerMovements ?? 0)}, ledger ${count(t?.ledgerMovements ?? 0)}, matched ${count(t?.matched ?? 0)}`,
  );
  console.log(
    `  findings ${t?.findingCount ?? 'none (not matched)'}   injected ${3 * injected} (${injected} missing, ${injected} extra, ${injected} unequal)`,
  );
  console.log(
    `  peak RSS ${mb(before.maxRss)} before → ${mb(after.maxRss)} after; heap used ${mb(before.heap)} before → ${mb(heapAtEnd)} at the end ` +
      `(${mb(after.heap)} after GC), peak sampled ${mb(peakHeap)}`,
  );
}

/** A child process: the gateway's context on DATABASE_URL (or PGlite in DATA_DIR), writing the day or reconciling it. */
async function childMain(role: string): Promise<void> {
  const n = Number(process.env.BENCH_RECONCILIATION_N);
  const ctx = await createContext(loadSettings({ ...process.env, PORT: '0', SANDBOX_AUTOPILOT: 'false' }));
  try {
    if (role === 'write') {
      const start = performance.now();
      await writeDay(ctx, n);
      console.log(`\n  (journal of ${count(n)} movements written and analysed in ${((performance.now() - start) / 1000).toFixed(1)} s, set-based)`);
    } else await measure(ctx, n, process.env.BENCH_RECONCILIATION_LABEL ?? '');
  } finally {
    await closeContext(ctx);
  }
}

/** The node options `npm start` runs the gateway with, and --expose-gc so heap figures are read after a collection. */
function nodeOptions(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const options = /\bnode (.*) src\/main\.ts/.exec(pkg.scripts.start)?.[1];
  if (!options) throw new Error(`npm start's script is not "node … src/main.ts": ${pkg.scripts.start}`);
  return [...options.split(/\s+/), '--expose-gc'];
}

async function child(role: string, env: Record<string, string>): Promise<void> {
  const p = fork(new URL(import.meta.url).pathname, [role], { env, execArgv: nodeOptions() });
  const code = await new Promise<number | null>((resolve) => p.once('exit', resolve));
  if (code !== 0) throw new Error(`reconciliation bench: the ${role} process exited with ${code}`);
}

async function scenario(label: string, databaseUrl: string | undefined, n: number): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-recon-'));
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef',
    POSTBACK_SECRET: 'bench-postback-secret-0123456789abcdef',
    LOG_LEVEL: 'warn',
    BENCH_RECONCILIATION_N: String(n),
    BENCH_RECONCILIATION_LABEL: label,
  };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  else delete env.DATABASE_URL;
  try {
    await child('write', env);
    await child('reconcile', env);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: postgres_url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${cpus().length} cores`);
  if (process.env.BENCH_SKIP_PGLITE !== 'true') await scenario('PGlite, embedded', undefined, pglite_movements);
  if (!(await postgresReachable())) {
    console.log(`\nPostgreSQL at ${postgres_url} not reachable: PostgreSQL figures skipped`);
    return;
  }
  const admin = new pg.Client({ connectionString: postgres_url });
  await admin.connect();
  const name = `gw_bench_recon_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(postgres_url);
  url.pathname = `/${name}`;
  try {
    await scenario('PostgreSQL', url.toString(), movements);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

const role = process.argv[2];
if (role) await childMain(role);
else await main();
