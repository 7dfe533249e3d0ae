// BENCH_ONLY=med npm run bench: the MED 2.0 infractions poller (CONTRACT §11.5) over BENCH_MED_INFRACTIONS
// infractions (default 10,000) at the embedded PSP, whose GET /v2/gn/infracoes answers pages of 1,000.
// Figures, never assertions. Per database one child process runs the gateway's context as `npm start`
// runs it: it makes the paid sales through the HTTP API and the sandbox's pay lever (not measured, but
// timed), opens an infraction on each sale's Pix at the PSP, then measures three poll rounds: all new,
// nothing new, all decided. Statements are the gateway's own (its context's database wrapped; the
// embedded PSP keeps the database it was given, so its statements are not counted).
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildApp } from '../src/app.ts';
import type { AppContext } from '../src/context.ts';
import type { Db, Queryable } from '../src/db/db.ts';
import { logStream } from '../src/http/log-stream.ts';
import { verifyLedger } from '../src/ledger/verify.ts';
import { type PollingPort, type PollRound, pollInfractions } from '../src/providers/med/infraction-poll.ts';
import { closeContext, createContext, loadSettings, type Runtime } from '../src/runtime.ts';
import { insertSeller, issueKey } from '../src/sellers/sellers-repo.ts';
import { sharedServerCpuUs } from './cluster.ts';
import { postgresCpuUs } from './pgbench.ts';

const infractions = Number(process.env.BENCH_MED_INFRACTIONS ?? 10_000);
const setup_concurrency = 16;
const overlap_ms = 300_000; // MED_POLL_SECONDS' default, as the job overlaps its windows
const child_role = 'med-poll-child';

const count = (x: number) => Math.round(x).toLocaleString('en-US');
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const cpuUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

/** The gateway's statements: those it sends outside a transaction and inside one (BEGIN and COMMIT apart). */
interface Tally {
  statements: number;
  transactions: number;
  /** Statements by their opening words, with the time waited for their answers, for BENCH_MED_STATEMENTS=1. */
  heads: Map<string, { n: number; ms: number }>;
}

function countingDb(db: Db, tally: Tally): Db {
  const wrap = (q: Queryable): Queryable => ({
    async query<T>(text: string, params?: unknown[]) {
      tally.statements++;
      if (process.env.BENCH_MED_STATEMENTS !== '1') return q.query<T>(text, params);
      const head = text.trimStart().slice(0, 200).replace(/\s+/g, ' ').slice(0, 90);
      const seen = tally.heads.get(head) ?? { n: 0, ms: 0 };
      tally.heads.set(head, seen);
      const start = performance.now();
      try {
        return await q.query<T>(text, params);
      } finally {
        seen.n++;
        seen.ms += performance.now() - start;
      }
    },
  });
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'query') return wrap(target).query;
      if (prop === 'tx')
        return ((fn, options) =>
          target.tx((q) => {
            tally.transactions++; // each attempt: a retried transaction is sent again
            return fn(wrap(q));
          }, options)) as Db['tx'];
      return Reflect.get(target, prop, receiver);
    },
  });
}

/** The PIX port with its pages counted and the time spent waiting for them (the PSP's answer, its parsing) summed. */
function pagedPort(port: PollingPort, marks: { pages: number; listMs: number }): PollingPort {
  const counted = Object.create(port) as PollingPort;
  counted.infractions = {
    ...port.infractions,
    async *pages(window) {
      const pages = port.infractions.pages(window);
      for (;;) {
        const start = performance.now();
        const next = await pages.next();
        marks.listMs += performance.now() - start;
        if (next.done) return;
        marks.pages++;
        yield next.value;
      }
    },
  };
  return counted;
}

/** Runs fn on `setup_concurrency` lanes over the items. */
async function lanes<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: setup_concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** N PIX sales through the API, each paid through the sandbox's lever (the PSP receives the Pix and calls the gateway back). */
async function paidSales(ctx: Runtime, base: string, adminToken: string, n: number): Promise<{ ids: number[]; createMs: number; payMs: number }> {
  const seller = await ctx.db.tx(async (q) => {
    const row = await insertSeller(q, { name: 'Bench MED', email: 'bench-med@example.com', document: null });
    const key = await issueKey(q, row.id);
    return { 'x-api-public-key': key.publicKey, 'x-api-private-key': key.privateKey };
  });
  const body = JSON.stringify({
    amount: 15000,
    paymentMethod: 'PIX',
    customer: { name: 'Maria Silva', email: 'maria@example.com' },
    items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
    // Every move of the sale writes its notification to the outbox (no worker delivers it here).
    postbackUrl: 'https://seller.example/postback',
  });
  const ids: number[] = [];
  const createMs = await timed(() =>
    lanes(Array.from({ length: n }), async () => {
      const res = await fetch(`${base}/api/sales`, { method: 'POST', headers: { ...seller, 'content-type': 'application/json' }, body });
      if (res.status !== 201) throw new Error(`POST /api/sales answered ${res.status}: ${await res.text()}`);
      ids.push(((await res.json()) as { sale: { id: number } }).sale.id);
    }),
  );
  const admin = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const payMs = await timed(() =>
    lanes(ids, async (id) => {
      const res = await fetch(`${base}/sandbox/sales/${id}/pay`, { method: 'POST', headers: admin, body: '{}' });
      // A sale left unpaid (its callback given up on a loaded machine) shows in the check below; the rounds go on.
      if (res.status !== 200) console.log(`    sale ${id} paid: HTTP ${res.status}: ${await res.text()}`);
      else await res.arrayBuffer();
    }),
  );
  return { ids, createMs, payMs };
}

/** The sales as the gateway and the PSP hold them: by status, with a Pix the PSP received of the sale's end-to-end id. */
async function coherence(ctx: AppContext, ids: number[]): Promise<string> {
  const r = await ctx.db.query<{ status: string; n: number; at_psp: number }>(
    `SELECT t.status, count(*)::int AS n, count(p.end_to_end_id)::int AS at_psp FROM transactions t
       LEFT JOIN sandbox_psp.pix p ON p.end_to_end_id = t.pix_end_to_end_id AND p.valor_cents = t.amount
     WHERE t.id = ANY($1::bigint[]) GROUP BY t.status ORDER BY t.status`,
    [ids],
  );
  const outbox = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM notifications WHERE transaction_id = ANY($1::bigint[])', [ids]);
  const ledger = await verifyLedger(ctx.db);
  const statuses = r.rows.map((x) => `${x.status} ${count(x.n)} (${count(x.at_psp)} with their Pix at the PSP)`).join(', ');
  return `${statuses}; outbox ${count(outbox.rows[0]!.n)} rows; ledger verify ${ledger.ok ? 'ok' : `NOT ok: ${JSON.stringify(ledger.mismatches.slice(0, 3))}`}`;
}

/**
 * PostgreSQL's CPU so far, in µs: this database's processes and the server's own (as root, from /proc;
 * an autovacuum worker that ends meanwhile is lost), and every postgres process on the machine.
 */
async function postgresCpu(ctx: AppContext): Promise<() => [number, number]> {
  const r = await ctx.db.query<{ dir: string; db: string }>("SELECT current_setting('data_directory') AS dir, current_database() AS db");
  const { dir, db } = r.rows[0]!;
  return () => [sharedServerCpuUs(dir, db) ?? Number.NaN, postgresCpuUs()];
}

/** One poll round, measured. */
async function round(ctx: AppContext, port: PollingPort, label: string, n: number): Promise<PollRound> {
  const tally: Tally = { statements: 0, transactions: 0, heads: new Map() };
  const marks = { pages: 0, listMs: 0 };
  const embedded = ctx.db.kind === 'pglite';
  const pgCpu = embedded ? () => [0, 0] : await postgresCpu(ctx);
  // The pool's idle connections from the setup close after 10 s: gone during the round, their backends' CPU would leave the sum.
  if (!embedded) await new Promise((resolve) => setTimeout(resolve, 11_000));
  const pgStart = pgCpu();
  const cpuStart = cpuUs();
  const start = performance.now();
  const r = await pollInfractions({ ...ctx, db: countingDb(ctx.db, tally) }, pagedPort(port, marks), { overlapMs: overlap_ms });
  const ms = performance.now() - start;
  const cpu = cpuUs() - cpuStart;
  const pg = pgCpu().map((x, i) => x - pgStart[i]!);
  const each = (x: number) => (x / n).toFixed(1);
  console.log(
    `  ${label.padEnd(21)} ${seconds(ms).padStart(8)} ${count(n / (ms / 1000)).padStart(6)} infractions/s   cpu ${each(cpu)} µs/infraction (gateway process)` +
      `${embedded ? '' : `, PostgreSQL ${each(pg[0]!)} µs (every postgres process on the machine: ${each(pg[1]!)} µs)`}   load ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(
    `      statements ${count(tally.statements)} (${each(tally.statements)}/infraction) in ${count(tally.transactions)} transactions ` +
      `(${count(tally.statements + 2 * tally.transactions)} with their BEGIN and COMMIT); pages ${marks.pages} (${seconds(marks.listMs)} waiting for them); ` +
      `listed ${count(r.listed)}, applied ${count(r.applied)}${r.needsOperator ? `, needs operator ${count(r.needsOperator)}` : ''}`,
  );
  if (process.env.BENCH_MED_STATEMENTS === '1')
    for (const [head, k] of [...tally.heads].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12))
      console.log(`      ${count(k.n).padStart(7)} × ${(k.ms / k.n).toFixed(2).padStart(6)} ms  ${head}`);
  return r;
}

/** The child: the gateway's context and API on DATABASE_URL (or PGlite in DATA_DIR), the setup, the three rounds. */
async function childMain(): Promise<void> {
  const n = Number(process.env.BENCH_MED_N);
  const settings = loadSettings({
    ...process.env,
    PORT: '0',
    SANDBOX_AUTOPILOT: 'false',
    RATE_LIMIT_PER_SECOND: '10000000',
    AUTH_FAILURES_PER_MINUTE: '10000000',
  });
  const ctx = await createContext(settings);
  const app = await buildApp(ctx, { logStream: logStream('/dev/null') });
  try {
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    await ctx.providers.listeningAt(base);
    // The PSP is told where to call back (as the worker's first round tells it).
    await ctx.rails.jobs.find((j) => j.name === 'pix-reconcile')!.run(ctx);
    const psp = ctx.rails.psp!;
    const port = ctx.providers.rail('PIX') as PollingPort;
    if (!port.infractions) throw new Error('the PIX rail reads no infractions (PIX_MED_SOURCE is not efi)');
    console.log(`\n[${process.env.BENCH_MED_LABEL}] N = ${count(n)} infractions of ${port.account.id}, PSP pages of 1,000`);
    const { ids, createMs, payMs } = await paidSales(ctx, base, settings.adminToken, n);
    let checkMs = 0;
    const check = async () => {
      const start = performance.now();
      console.log(`    ${await coherence(ctx, ids)}`);
      checkMs += performance.now() - start;
    };
    console.log(
      `  setup: ${count(n)} PIX sales through POST /api/sales in ${seconds(createMs)}, paid through POST /sandbox/sales/{id}/pay in ${seconds(payMs)}`,
    );
    await check();
    const e2e = await ctx.db.query<{ e: string }>(
      'SELECT pix_end_to_end_id AS e FROM transactions WHERE id = ANY($1::bigint[]) AND pix_end_to_end_id IS NOT NULL ORDER BY id',
      [ids],
    );
    const opened: string[] = [];
    const openMs = await timed(() => lanes(e2e.rows, async ({ e }) => void opened.push((await psp.openInfraction(e)).idInfracao)));
    console.log(`    ${count(opened.length)} infractions opened at the PSP (its lever) in ${seconds(openMs)}`);
    await round(ctx, port, 'round 1: all new', opened.length);
    await check();
    await round(ctx, port, 'round 2: nothing new', opened.length);
    // Half rejected (MED → PAGO, MED_WON), half accepted with no devolução yet (the sale stays in MED).
    const resolveMs = await timed(() =>
      lanes(
        opened.map((id, i) => ({ id, accepted: i % 2 === 1 })),
        ({ id, accepted }) => (accepted ? psp.resolveInfraction(id, 'ACEITA', { withoutDevolucao: true }) : psp.resolveInfraction(id, 'REJEITADA')),
      ),
    );
    console.log(`    ${count(opened.length)} decided at the PSP in ${seconds(resolveMs)}: half REJEITADA, half ACEITA without devolução`);
    await round(ctx, port, 'round 3: all decided', opened.length);
    await check();
    console.log(
      `  (setup not measured: ${seconds(createMs + payMs + openMs + resolveMs)} making and paying, opening and deciding; checks ${seconds(checkMs)})`,
    );
  } finally {
    await app.close();
    await closeContext(ctx);
  }
}

/** The node options `npm start` runs the gateway with. */
function startNodeOptions(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const options = /\bnode (.*) src\/main\.ts/.exec(pkg.scripts.start)?.[1];
  if (!options) throw new Error(`npm start's script is not "node … src/main.ts": ${pkg.scripts.start}`);
  return options.split(/\s+/);
}

/** The figures on one database (PGlite in a fresh DATA_DIR when databaseUrl is undefined; else a fresh database). */
export async function medPoll(label: string, databaseUrl: string | undefined): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-med-'));
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef',
    POSTBACK_SECRET: 'bench-postback-secret-0123456789abcdef',
    LOG_LEVEL: 'warn',
    BENCH_MED_N: String(infractions),
    BENCH_MED_LABEL: label,
  };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  else delete env.DATABASE_URL;
  try {
    const p = fork(new URL(import.meta.url).pathname, [child_role], { env, execArgv: startNodeOptions() });
    const code = await new Promise<number | null>((resolve) => p.once('exit', resolve));
    if (code !== 0) console.log(`  (MED poll bench: the ${label} process exited with ${code})`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === child_role && import.meta.url === pathToFileURL(process.argv[1]!).href) await childMain();
