// npm run bench: figures, never assertions. The gateway runs in a child process (bench/server.ts);
// autocannon and the webhook receiver run here. Each API figure sits beside its yardstick.
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { buildBrCode, newTxid } from '../src/domain/pix-brcode.ts';
import { qrPngDataUri } from '../src/qr/pix-qr.ts';
import type { BareName } from './bare-sql.ts';
import { BenchCluster, type ClusterCpu, clusterSkipReason, sharedServerCpuUs } from './cluster.ts';
import { ensurePgbench, machineCpuUs, machineShare, type PgbenchScript, pgbench, postgresCpuUs } from './pgbench.ts';

const duration_s = Number(process.env.BENCH_SECONDS ?? 5);
// Each figure is measured after this long under the same load: a gateway that has run for a while, as
// users run it. Measured here: the first 5 s of PIX sales on a fresh database cost the gateway 1.8
// times the CPU per sale of the next 5 s, at every run (PostgreSQL's new tables and connections are
// slower at first, so the gateway waits, sleeps and is woken more often per sale).
const warmup_s = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const postgres_url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// BENCH_ONLY=delivery,pay runs only those figures.
const only = process.env.BENCH_ONLY?.split(',').map((x) => x.trim());
const wanted = (figure: string) => !only || only.includes(figure);
const bare_concurrency = 10; // the gateway's pool size: both sides are bounded by the same pool

interface Server {
  child: ChildProcess;
  /** PGlite in the gateway's process: no PostgreSQL to measure apart. */
  embedded: boolean;
  /** The PostgreSQL database the gateway uses, for pgbench (null on PGlite). */
  databaseUrl: string | null;
  gateway: string;
  bare: string;
  adminToken: string;
  call<T>(m: object): Promise<T>;
}
interface Seller {
  id: number;
  headers: Record<string, string>;
}

/** The node options `npm start` runs the gateway with (the young generation's size among them): measured as users run it. */
function startNodeOptions(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const options = /\bnode (.*) src\/main\.ts/.exec(pkg.scripts.start)?.[1];
  if (!options) throw new Error(`npm start's script is not "node … src/main.ts": ${pkg.scripts.start}`);
  return options.split(/\s+/);
}

async function startServer(databaseUrl: string | undefined): Promise<Server> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-bench-')),
    ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef',
    POSTBACK_SECRET: 'bench-postback-secret-0123456789abcdef',
  };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  else delete env.DATABASE_URL;
  // BENCH_PROFILE=dir: the gateway's CPU profile (.cpuprofile, for Chrome's DevTools) written there at its exit.
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = fork(new URL('./server.ts', import.meta.url).pathname, [], { env, execArgv: [...startNodeOptions(), ...profile] });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let seq = 0;
  const ready = await new Promise<{ gateway: string; bare: string; adminToken: string }>((resolve, reject) => {
    child.on('message', (m: { ready?: { gateway: string; bare: string; adminToken: string }; seq?: number; result?: unknown; error?: string }) => {
      if (m.ready) return resolve(m.ready);
      const p = pending.get(m.seq!);
      pending.delete(m.seq!);
      if (m.error) p?.reject(new Error(m.error));
      else p?.resolve(m.result);
    });
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  const call = <T>(m: object) =>
    new Promise<T>((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...m, seq: id });
    });
  return { child, embedded: !databaseUrl, databaseUrl: databaseUrl ?? null, ...ready, call };
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.send({ cmd: 'stop', seq: 0 });
  await exited;
}

interface Figures {
  rps: number;
  /** requests answered in the measured span */
  served: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  cpuUsPerRequest: number;
  /** PostgreSQL's CPU per request (every postgres process on this machine): 0 on PGlite, which is in the gateway's. */
  pgCpuUsPerRequest: number;
  /** autocannon's, in this process: it shares the two cores with the gateway, as pgbench's client does with PostgreSQL. */
  loaderUsPerRequest: number;
  /** The whole machine's busy CPU per request, and the share of its cores left idle meanwhile. */
  machineUsPerRequest: number;
  idleShare: number;
}

/** The server process's own CPU time (user + sys), in µs: steadier on a noisy machine than req/s. */
const cpuOf = async (s: Server) => {
  const u = await s.call<{ user: number; system: number }>({ cmd: 'cpu' });
  return u.user + u.system;
};

async function load(
  s: Server,
  url: string,
  opts: {
    headers?: Record<string, string>;
    method?: 'GET' | 'POST';
    body?: string;
    requests?: autocannon.Request[];
    connections?: number;
    seconds?: number;
  } = {},
): Promise<Figures> {
  const cpuBefore = await cpuOf(s);
  const pgBefore = postgresCpuUs();
  const loaderBefore = process.cpuUsage();
  const machineBefore = machineCpuUs();
  const r = await autocannon({
    url,
    connections: opts.connections ?? connections,
    duration: opts.seconds ?? duration_s,
    method: opts.method ?? 'GET',
    headers: { ...(opts.body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    body: opts.body,
    ...(opts.requests ? { requests: opts.requests } : {}),
  });
  const machineAfter = machineCpuUs();
  const loader = process.cpuUsage(loaderBefore);
  const served = Math.max(1, r.requests.total);
  const cpuUsPerRequest = ((await cpuOf(s)) - cpuBefore) / served;
  const pgCpuUsPerRequest = s.embedded ? 0 : (postgresCpuUs() - pgBefore) / served;
  return {
    rps: r.requests.average,
    served,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    cpuUsPerRequest,
    pgCpuUsPerRequest,
    loaderUsPerRequest: (loader.user + loader.system) / served,
    ...machineShare(machineBefore, machineAfter, served),
  };
}

const fmt = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(7)} req/s  p50 ${String(f.p50).padStart(3)} ms  p99 ${String(f.p99).padStart(3)} ms  cpu ${f.cpuUsPerRequest.toFixed(0).padStart(4)} µs/req` +
  `${f.pgCpuUsPerRequest ? `  pg ${f.pgCpuUsPerRequest.toFixed(0).padStart(4)} µs/req` : ''}${f.errors || f.non2xx ? `  (errors ${f.errors}, non-2xx ${f.non2xx})` : ''}`;
const share = (f: { machineUsPerRequest: number; idleShare: number }) =>
  `machine ${f.machineUsPerRequest.toFixed(0).padStart(4)} µs, idle ${(100 * f.idleShare).toFixed(0).padStart(2)} %`;
const ops = (n: number) => `${n.toFixed(0).padStart(7)} ops/s`;
const ratio = (a: number, b: number, target: string) => `${(a / b).toFixed(3)}   (target ${target})`;

const pixSale = JSON.stringify({
  amount: 15000,
  paymentMethod: 'PIX',
  customer: { name: 'Maria Silva', email: 'maria@example.com' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
});
// Without an expiry: a static BR Code, no call to the PSP.
const pixStaticSale = JSON.stringify({ ...JSON.parse(pixSale), pix: { expiresInSeconds: null } });
const cardSale = JSON.stringify({
  amount: 15000,
  paymentMethod: 'CREDIT_CARD',
  customer: { name: 'Maria Silva', email: 'maria@example.com' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
  card: { number: '4111111111111111', holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: 2030, cvv: '123' },
});

/** A fresh Idempotency-Key on every request, as the SDK sends on every POST. */
const keyed: autocannon.Request[] = [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }) }];

type Figure = { label: string; path: string; body: string | null; script: PgbenchScript; bare: BareName | null; target: string };
const figures: Figure[] = [
  { label: 'PIX sale, dynamic (default)', path: '/api/sales', body: pixSale, script: 'sale', bare: 'salePix', target: '≥ 0.3' },
  { label: 'PIX sale, static', path: '/api/sales', body: pixStaticSale, script: 'sale', bare: 'salePix', target: '≥ 0.5' },
  { label: 'card sale', path: '/api/sales', body: cardSale, script: 'sale', bare: 'saleCard', target: '≥ 0.5' },
  { label: 'balance read', path: '/api/public/balance', body: null, script: 'balance', bare: null, target: '≥ 0.5' },
];

/** One figure: the warm-up, the measured run, and beside it the bare SQL of the same writes. */
async function figure(s: Server, seller: Seller, f: Figure, isKeyed: boolean): Promise<Figures> {
  const opts = f.body
    ? { method: 'POST' as const, headers: seller.headers, body: f.body, ...(isKeyed ? { requests: keyed } : {}) }
    : { headers: seller.headers };
  await load(s, `${s.gateway}${f.path}`, { ...opts, seconds: warmup_s });
  const api = await load(s, `${s.gateway}${f.path}`, opts);
  console.log(`  ${`${f.label}${f.body && isKeyed ? ', keyed' : ''}`.padEnd(34)} ${fmt(api)}`);
  if (s.databaseUrl && ensurePgbench()) {
    const bare = pgbench(s.databaseUrl, f.script, seller.id, connections, duration_s);
    console.log(
      `    pgbench, bare SQL ${ops(bare.tps)}  pg ${bare.pgCpuUsPerOp.toFixed(0).padStart(4)} µs/op   ratio ${ratio(api.rps, bare.tps, f.target)}`,
    );
    // Where the cores went, each side's load generator included: the ratio is the machine's busy
    // share over its CPU per request, the gateway's run against pgbench's. At the target ratio and
    // pgbench's rate, the cores leave `budget` µs a request for everything, however well they are used.
    const budget = (cpus().length * 1_000_000) / (Number(f.target.replace(/[^\d.]/g, '')) * bare.tps);
    console.log(
      `    cores: gateway run ${share(api)} (autocannon ${api.loaderUsPerRequest.toFixed(0)} µs); pgbench ${share(bare)}; at the target ≤ ${budget.toFixed(0)} µs a request`,
    );
  } else if (s.databaseUrl) console.log('    (pgbench missing and not installable: no bare-SQL ratio)');
  else if (f.bare) {
    const bare = await s.call<number>({ cmd: 'bare', name: f.bare, sellerIds: [seller.id], concurrency: bare_concurrency, seconds: duration_s });
    console.log(`    bare SQL from Node ${ops(bare)}   ratio ${(api.rps / bare).toFixed(3)}`);
  }
  return api;
}

/**
 * The defaults as users run them (info logging, a key on every POST, PIX sales as dynamic charges at
 * the embedded PSP, which runs in the gateway's process and so is in its CPU figure), each beside
 * pgbench; then, labelled, warn logging without keys; then the Node yardstick.
 */
// BENCH_FIGURE=card runs only the figures whose label holds that text (a CPU profile of one path).
const chosen = figures.filter((f) => !process.env.BENCH_FIGURE || f.label.includes(process.env.BENCH_FIGURE));

async function defaultsVsBare(s: Server, seller: Seller) {
  console.log('  defaults: LOG_LEVEL=info, an Idempotency-Key on every POST, PIX dynamic through the embedded PSP');
  for (const f of chosen) await figure(s, seller, f, true);
  console.log('  LOG_LEVEL=warn, no Idempotency-Key (not the defaults)');
  await s.call({ cmd: 'logLevel', level: 'warn' });
  try {
    for (const f of chosen.filter((f) => f !== figures[0])) await figure(s, seller, f, false);
  } finally {
    await s.call({ cmd: 'logLevel', level: 'info' });
  }
  const bare = await load(s, `${s.bare}/constant`);
  const balance = await load(s, `${s.gateway}/api/public/balance`, { headers: seller.headers });
  console.log(`  Node yardstick: bare Fastify constant ${fmt(bare)}`);
  console.log(`  ratio balance (info)/bare Fastify  ${ratio(balance.rps, bare.rps, '≥ 0.25')}`);
}

// A boleto sale: registered at the boleto provider (the embedded PSP by default, in-process, so its
// work is in the gateway's CPU figure) before it is written.
const boletoSale = JSON.stringify({
  amount: 15000,
  paymentMethod: 'BOLETO',
  customer: { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725' },
  items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false }],
});

async function boletoSales(s: Server, seller: Seller) {
  const api = await load(s, `${s.gateway}/api/sales`, { method: 'POST', headers: seller.headers, body: boletoSale });
  console.log(`  POST /api/sales boleto               ${fmt(api)}`);
}

async function payVsBare(s: Server, seller: Seller) {
  // A webhook, so each payment writes its outbox row as the bare SQL does (workers are off by now).
  await s.call({ cmd: 'webhook', sellerId: seller.id, url: 'http://127.0.0.1:9/hook' });
  const ids = await s.call<number[]>({ cmd: 'pendingSales', sellerId: seller.id, n: 40_000 });
  let next = 0;
  const api = await load(s, `${s.gateway}/admin/transactions/1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json' },
    requests: [
      { setupRequest: (req) => ({ ...req, path: `/admin/transactions/${ids[next++ % ids.length]}/events`, body: '{"event":"PAYMENT_CONFIRMED"}' }) },
    ],
  });
  const bare = await s.call<number>({ cmd: 'bare', name: 'paySale', sellerIds: [seller.id], concurrency: bare_concurrency, seconds: duration_s });
  console.log(
    `  pay sale (operator event, postings, outbox) ${fmt(api)}${next > ids.length ? '  (ran out of pending sales: some were no-ops)' : ''}`,
  );
  console.log(`  bare SQL: update + journal + balance + outbox ${ops(bare)}`);
  console.log(`  ratio                                       ${ratio(api.rps, bare, '≥ 0.5')}`);
}

async function cashoutsVsBare(s: Server, hot: Seller, spread: Seller[]) {
  const body = JSON.stringify({ amount: 100, pixKey: '52998224725' });
  const apiHot = await load(s, `${s.gateway}/api/public/cashout`, { method: 'POST', headers: hot.headers, body });
  let i = 0;
  const apiSpread = await load(s, `${s.gateway}/api/public/cashout`, {
    method: 'POST',
    body,
    requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...spread[i++ % spread.length]!.headers } }) }],
  });
  const bareHot = await s.call<number>({ cmd: 'bare', name: 'cashout', sellerIds: [hot.id], concurrency: bare_concurrency, seconds: duration_s });
  const bareSpread = await s.call<number>({
    cmd: 'bare',
    name: 'cashout',
    sellerIds: spread.map((x) => x.id),
    concurrency: bare_concurrency,
    seconds: duration_s,
  });
  console.log(`  cashout, one hot seller         ${fmt(apiHot)}`);
  console.log(`  bare conditional UPDATE + journal, hot     ${ops(bareHot)}   ratio ${(apiHot.rps / bareHot).toFixed(3)}`);
  console.log(`  cashout, spread over ${spread.length} sellers  ${fmt(apiSpread)}`);
  console.log(`  bare conditional UPDATE + journal, spread  ${ops(bareSpread)}   ratio ${ratio(apiSpread.rps, bareSpread, '≥ 0.5')}`);
}

async function delivery(s: Server, seller: Seller) {
  const receipts = new Map<number, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      receipts.set(JSON.parse(Buffer.concat(chunks).toString()).id, performance.timeOrigin + performance.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  await s.call({ cmd: 'webhook', sellerId: seller.id, url });
  // Throughput: a backlog of paid sales, then the worker drains it.
  const backlog = 5000;
  const ids = await s.call<number[]>({ cmd: 'pendingSales', sellerId: seller.id, n: backlog });
  await s.call({ cmd: 'payAll', ids, concurrency: bare_concurrency });
  const started = performance.now();
  await s.call({ cmd: 'workers', on: true });
  while (receipts.size < backlog && performance.now() - started < 120_000) await new Promise((r) => setTimeout(r, 20));
  const throughput = receipts.size / ((performance.now() - started) / 1000);
  // Latency: single commits with the worker idle in between, commit → receipt.
  const timed = await s.call<number[]>({ cmd: 'pendingSales', sellerId: seller.id, n: 200 });
  const commits = await s.call<Record<string, number>>({ cmd: 'payTimed', ids: timed, gapMs: 5 });
  await new Promise((r) => setTimeout(r, 500));
  const latencies = timed
    .map((id) => receipts.get(id)! - commits[id]!)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(1);
  await s.call({ cmd: 'workers', on: false });
  receiver.closeAllConnections();
  receiver.close();
  console.log(
    `  webhook delivery throughput    ${throughput.toFixed(0).padStart(7)} deliveries/s (${Math.min(receipts.size, backlog)} of ${backlog})   (target ≥ 2000)`,
  );
  console.log(`  commit → receipt latency       p50 ${pct(0.5)} ms  p99 ${pct(0.99)} ms  (${latencies.length} samples; target p50 ≤ 50 ms)`);
}

/** The seller panel's pages (server-rendered HTML) as a logged-in seller with 300 sales, 200 of them paid. */
async function panel(s: Server, seller: Seller) {
  const ids = await s.call<number[]>({ cmd: 'pendingSales', sellerId: seller.id, n: 300 });
  await s.call({ cmd: 'payAll', ids: ids.slice(0, 200), concurrency: bare_concurrency });
  const cookie = await s.call<string>({ cmd: 'panelSession', sellerId: seller.id });
  const pages = [
    '/painel',
    '/painel/vendas',
    `/painel/vendas/${ids[0]}`,
    '/painel/saques',
    '/painel/extrato',
    '/painel/integracoes',
    '/painel/chaves',
    '/painel/conta',
  ];
  for (const path of pages) {
    const html = await fetch(`${s.gateway}${path}`, { headers: { cookie } });
    const bytes = (await html.arrayBuffer()).byteLength;
    const f = await load(s, `${s.gateway}${path}`, { headers: { cookie } });
    console.log(`  GET ${path.padEnd(22)} ${String(bytes).padStart(6)} B  ${fmt(f)}`);
  }
}

/**
 * A login flood (CONTRACT §12): 24 connections posting logins with wrong passwords for unknown
 * e-mails (each a full scrypt, as a real check costs), while the API serves balances and PIX sales.
 * The figures that matter: balance p99 and PIX sale p50, idle and under the flood.
 */
async function loginFlood(s: Server, seller: Seller) {
  const page = await fetch(`${s.gateway}/painel/entrar`);
  await page.arrayBuffer();
  const csrf = page.headers
    .getSetCookie()
    .find((c) => c.startsWith('painel_csrf='))!
    .split(';')[0]!
    .slice('painel_csrf='.length);
  const probe = async () => {
    const balance = await load(s, `${s.gateway}/api/public/balance`, { headers: seller.headers, connections: 8 });
    const pix = await load(s, `${s.gateway}/api/sales`, { method: 'POST', headers: seller.headers, body: pixSale, connections: 8 });
    return { balance, pix };
  };
  const idle = await probe();
  let n = 0;
  const flooding = autocannon({
    url: `${s.gateway}/painel/entrar`,
    connections: 24,
    duration: 2 * duration_s + 2,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `painel_csrf=${csrf}` },
    requests: [{ setupRequest: (req) => ({ ...req, body: `csrf=${csrf}&email=flood${n++}%40example.com&senha=errada-errada-errada` }) }],
  });
  await new Promise((r) => setTimeout(r, 1000));
  const flooded = await probe();
  const flood = await flooding;
  const statuses = Object.entries(flood.statusCodeStats ?? {})
    .map(([code, v]) => `${code}: ${(v as { count: number }).count}`)
    .join(', ');
  const line = (label: string, a: Figures, b: Figures, pick: 'p50' | 'p99') =>
    `  ${label.padEnd(24)} idle ${String(a[pick]).padStart(3)} ms   flooded ${String(b[pick]).padStart(3)} ms   ×${(b[pick] / Math.max(a[pick], 1)).toFixed(2)}   (target ≤ ×2)`;
  console.log(`  login flood: 24 connections, ${flood.requests.total} logins in ${flood.duration.toFixed(0)} s (${statuses})`);
  console.log(line('balance p99 (8 conns)', idle.balance, flooded.balance, 'p99'));
  console.log(line('PIX sale p50 (8 conns)', idle.pix, flooded.pix, 'p50'));
}

async function scenario(label: string, databaseUrl: string | undefined) {
  const s = await startServer(databaseUrl);
  try {
    const [main, hot, delivery_seller, payer, panelSeller] = await s.call<Seller[]>({ cmd: 'sellers', n: 5, fundCents: 1_000_000_000 });
    const spread = await s.call<Seller[]>({ cmd: 'sellers', n: 100, fundCents: 100_000_000 });
    console.log(`\n[${label}] ${connections} connections, ${duration_s} s per figure`);
    if (wanted('sales') || wanted('balance')) await defaultsVsBare(s, main!);
    if (wanted('boleto')) await boletoSales(s, main!);
    if (wanted('delivery')) await delivery(s, delivery_seller!);
    if (wanted('pay')) await payVsBare(s, payer!);
    if (wanted('cashout')) await cashoutsVsBare(s, hot!, spread);
    if (wanted('panel')) await panel(s, panelSeller!);
    if (wanted('login')) await loginFlood(s, main!);
  } finally {
    await stopServer(s);
  }
}

/** One side of the cluster figures: a gateway, its seller, and the CPU so far of its database's processes. */
interface Side {
  server: Server;
  seller: Seller;
  cpu(): ClusterCpu;
  /** A connection to the side's database (its primary), for the count of its commits. */
  stats: pg.Client;
}

/**
 * Transactions committed in the side's database so far (pg_stat_database). Backends report theirs
 * at most once a second, so each reading lags by up to a second; before and after lag alike.
 */
const commits = async (side: Side) =>
  Number((await side.stats.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0]!.n);

/** A keyed sale figure on one side: the warm-up, then the measured run with its database's CPU per request. */
async function sideFigure(side: Side, f: Figure): Promise<{ api: Figures; db: ClusterCpu; commits: number }> {
  const url = `${side.server.gateway}${f.path}`;
  const opts = { method: 'POST' as const, headers: side.seller.headers, body: f.body!, requests: keyed };
  await load(side.server, url, { ...opts, seconds: warmup_s });
  const before = side.cpu();
  const committed = await commits(side);
  const api = await load(side.server, url, opts);
  const after = side.cpu();
  const commitsPerRequest = ((await commits(side)) - committed) / Math.max(1, api.served);
  const per = (k: keyof ClusterCpu) => (after[k] - before[k]) / Math.max(1, api.served);
  const db = { primary: per('primary'), standbys: per('standbys'), daemons: per('daemons') };
  // The `pg` figure of this section is the side's own database servers, not every postgres process on the machine.
  return { api: { ...api, pgCpuUsPerRequest: db.primary + db.standbys }, db, commits: commitsPerRequest };
}

/** The machine's busy time per request that none of the measured processes spent: other users' work, mostly. */
const elsewhere = ({ api, db }: { api: Figures; db: ClusterCpu }) => {
  const us = api.machineUsPerRequest - api.cpuUsPerRequest - api.loaderUsPerRequest - db.primary - db.standbys - db.daemons;
  return `, ${us.toFixed(0)} µs elsewhere`;
};

/**
 * The keyed sale figures on the three-node cluster (synchronous replication) beside the same figures
 * on the single server, in the same run: each figure on the single server and then on the cluster,
 * with the same connections, warm-up and duration, a fresh database on each side.
 */
async function clusterBesideSingle(singleUrl: string) {
  console.log(`\n[three-node cluster beside the single server] ${connections} connections, ${warmup_s} s warm-up and ${duration_s} s per figure`);
  const t0 = performance.now();
  const cluster = await BenchCluster.start();
  const servers: Server[] = [];
  const clients: pg.Client[] = [];
  try {
    const members = Object.entries(await cluster.roles()).map(([name, role]) => `${name} ${role}`);
    const upIn = ((performance.now() - t0) / 1000).toFixed(0);
    console.log(
      `  cluster: ${members.join(', ')} on ports ${cluster.portBase}-${cluster.portBase + 2}, up in ${upIn} s; single: ${new URL(singleUrl).host}`,
    );
    const admin = new pg.Client({ connectionString: postgres_url });
    await admin.connect();
    const dataDir = (await admin.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory;
    await admin.end();
    // On the shared single server, this run's database's part (when /proc and its data directory are
    // readable here, as root), else every postgres process on the machine.
    const singleDb = new URL(singleUrl).pathname.slice(1);
    const singleCpu = () => ({ primary: sharedServerCpuUs(dataDir, singleDb) ?? postgresCpuUs(), standbys: 0, daemons: 0 });
    const side = async (url: string, statsUrl: string, cpu: () => ClusterCpu): Promise<Side> => {
      const server = await startServer(url);
      servers.push(server);
      const stats = new pg.Client({ connectionString: statsUrl });
      clients.push(stats);
      await stats.connect();
      const [seller] = await server.call<Seller[]>({ cmd: 'sellers', n: 1, fundCents: 1_000_000_000 });
      return { server, seller: seller!, cpu, stats };
    };
    const single = await side(singleUrl, singleUrl, singleCpu);
    const clustered = await side(cluster.url, await cluster.leaderUrl(), () => cluster.cpu());
    for (const f of chosen.filter((x) => x.body)) {
      const a = await sideFigure(single, f);
      const b = await sideFigure(clustered, f);
      console.log(`  ${f.label}, keyed`);
      console.log(`    single server    ${fmt(a.api)}  (${a.commits.toFixed(2)} commits/req)`);
      console.log(
        `    cluster          ${fmt(b.api)}  (${b.commits.toFixed(2)} commits/req; primary ${b.db.primary.toFixed(0)}, standbys ${b.db.standbys.toFixed(0)}, Patroni and etcd ${b.db.daemons.toFixed(0)} µs/req)`,
      );
      console.log(
        `    cluster ÷ single ${ratio(b.api.rps, a.api.rps, '≥ 0.8')}   cores: single ${share(a.api)}${elsewhere(a)}; cluster ${share(b.api)}${elsewhere(b)}`,
      );
    }
    // The database's own limit on each side: pgbench's bare sale insert, at the same connections.
    if (ensurePgbench()) {
      try {
        const a = pgbench(singleUrl, 'sale', single.seller.id, connections, duration_s);
        const b = pgbench(await cluster.leaderUrl(), 'sale', clustered.seller.id, connections, duration_s);
        console.log(
          `  pgbench, bare SQL sale insert: single ${ops(a.tps)} (${share(a)}); cluster ${ops(b.tps)} (${share(b)}); ratio ${(b.tps / a.tps).toFixed(3)}`,
        );
      } catch (error) {
        console.log(`  (pgbench: ${(error as Error).message.split('\n', 1)[0]})`);
      }
    }
  } finally {
    for (const client of clients) await client.end().catch(() => {});
    for (const server of servers) await stopServer(server);
    await cluster.stop();
  }
}

function qrCost() {
  const input = { key: '123e4567-e12b-12d1-a456-426655440000', amountCents: 15000, merchantName: 'GATEWAY SANDBOX', merchantCity: 'SAO PAULO' };
  for (let i = 0; i < 500; i++) qrPngDataUri(buildBrCode({ ...input, txid: newTxid() }));
  // Five rounds; the median is the figure, the range shows how noisy the machine is.
  const n = 2000;
  const rounds = Array.from({ length: 5 }, () => {
    const t = performance.now();
    for (let i = 0; i < n; i++) qrPngDataUri(buildBrCode({ ...input, txid: newTxid() }));
    return (performance.now() - t) / n;
  }).sort((a, b) => a - b);
  console.log(
    `\nBR Code + QR PNG: ${rounds[2]!.toFixed(3)} ms each (median of 5 rounds of ${n}; range ${rounds[0]!.toFixed(3)}–${rounds[4]!.toFixed(3)})   (target ≤ 0.3 ms)`,
  );
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

/** A new database on the PostgreSQL at `postgres_url` for `fn`, dropped after it. */
async function onFreshDatabase(name: string, fn: (url: string) => Promise<void>): Promise<void> {
  const admin = new pg.Client({ connectionString: postgres_url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(postgres_url);
  url.pathname = `/${name}`;
  try {
    await fn(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

const scenario_figures = ['sales', 'balance', 'boleto', 'delivery', 'pay', 'cashout', 'panel', 'login'];

console.log(`node ${process.version}, ${cpus().length} cores`);
if (wanted('qr')) qrCost();
const anyScenario = scenario_figures.some(wanted);
if (anyScenario && process.env.BENCH_SKIP_PGLITE !== 'true') await scenario('PGlite, embedded', undefined);
// BENCH_ONLY=med: the MED infractions poller's rounds over BENCH_MED_INFRACTIONS, each database in a gateway process of its own.
const medPoll = async (label: string, url: string | undefined) => (await import('./med-poll.ts')).medPoll(label, url);
if (wanted('med') && process.env.BENCH_SKIP_PGLITE !== 'true') await medPoll('MED infractions poll, PGlite, embedded', undefined);
if (await postgresReachable()) {
  if (anyScenario) await onFreshDatabase(`gw_bench_${process.pid}`, (url) => scenario('PostgreSQL', url));
  if (wanted('med')) await onFreshDatabase(`gw_bench_med_${process.pid}`, (url) => medPoll('MED infractions poll, PostgreSQL', url));
  if (wanted('cluster')) {
    const skip = clusterSkipReason();
    if (skip) console.log(`\n[three-node cluster] skipped: ${skip}`);
    else await onFreshDatabase(`gw_bench_single_${process.pid}`, clusterBesideSingle);
  }
} else {
  console.log(`\nPostgreSQL at ${postgres_url} not reachable: PostgreSQL figures skipped`);
}
