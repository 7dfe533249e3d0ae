// npm run bench: figures, not assertions. Each scenario runs the gateway in a child process and
// drives it with autocannon from this one.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';

const duration_s = Number(process.env.BENCH_SECONDS ?? 8);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const postgres_url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Server { child: ChildProcess; gateway: string; bare: string; adminToken: string }

async function startServer(databaseUrl: string | undefined): Promise<Server> {
  const env: Record<string, string> = {
    ...process.env as Record<string, string>,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-bench-')),
    ADMIN_TOKEN: 'bench-admin-token-0123456789', POSTBACK_SECRET: 'bench-postback-secret-0123456789',
  };
  if (databaseUrl) env.DATABASE_URL = databaseUrl; else delete env.DATABASE_URL;
  const child = fork(new URL('./server.ts', import.meta.url).pathname, [], { env, execArgv: ['--import', 'tsx'] });
  const ready = await new Promise<Omit<Server, 'child'>>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Omit<Server, 'child'>));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { child, ...ready };
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.send('stop');
  await exited;
}

async function createSeller(server: Server): Promise<Record<string, string>> {
  const res = await fetch(`${server.gateway}/admin/sellers`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${server.adminToken}` },
    body: JSON.stringify({ name: 'Bench', email: 'bench@example.com' }),
  });
  const s = await res.json() as { publicKey: string; privateKey: string };
  return { 'x-api-public-key': s.publicKey, 'x-api-private-key': s.privateKey };
}

interface Figures { rps: number; p50: number; p99: number; errors: number; non2xx: number }

async function load(url: string, headers: Record<string, string> = {}): Promise<Figures> {
  const r = await autocannon({ url, connections, duration: duration_s, headers });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

const fmt = (f: Figures) => `${f.rps.toFixed(0).padStart(7)} req/s  p50 ${String(f.p50).padStart(3)} ms  p99 ${String(f.p99).padStart(3)} ms${f.errors || f.non2xx ? `  (errors ${f.errors}, non-2xx ${f.non2xx})` : ''}`;

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: postgres_url, connectionTimeoutMillis: 1000 });
  try { await client.connect(); await client.end(); return true; } catch { return false; }
}

async function balanceScenario(label: string, databaseUrl: string | undefined): Promise<void> {
  const server = await startServer(databaseUrl);
  try {
    const headers = await createSeller(server);
    await load(`${server.gateway}/api/public/balance`, headers); // warm-up, discarded
    const bare = await load(`${server.bare}/constant`);
    const balance = await load(`${server.gateway}/api/public/balance`, headers);
    console.log(`\n[${label}] GET /api/public/balance vs bare Fastify constant (${connections} connections, ${duration_s} s each)`);
    console.log(`  bare Fastify constant   ${fmt(bare)}`);
    console.log(`  GET /api/public/balance ${fmt(balance)}`);
    console.log(`  ratio balance/bare      ${(balance.rps / bare.rps).toFixed(3)}   (target ≥ 0.25)`);
  } finally {
    await stopServer(server);
  }
}

console.log(`node ${process.version}, ${(await import('node:os')).cpus().length} cores`);
await balanceScenario('PGlite, embedded', undefined);
if (await postgresReachable()) {
  const admin = new pg.Client({ connectionString: postgres_url });
  await admin.connect();
  const name = `gw_bench_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(postgres_url); url.pathname = `/${name}`;
  try {
    await balanceScenario('PostgreSQL', url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
} else {
  console.log(`\nPostgreSQL at ${postgres_url} not reachable: PostgreSQL figures skipped`);
}
