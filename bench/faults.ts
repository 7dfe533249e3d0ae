// npm run bench:faults: figures of the gateway under faults, never assertions (the tests assert the
// behaviour). PostgreSQL only: the database is reached through a TCP proxy this script owns, so the
// shared server is never touched. Prints:
//   A. a database outage: connection attempts during and after it, /health answer times, recovery;
//   B. one receiver that hangs: another seller's commit → receipt latency meanwhile;
//   C. a receiver outage: how long its backlog takes to arrive once it is back.

import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import type { AppContext } from '../src/context.ts';
import { idempotencyExpiryJob } from '../src/http/idempotency.ts';
import { createDeliveryJob } from '../src/notifications/delivery.ts';
import { closeContext, createContext, loadSettings } from '../src/runtime.ts';
import { insertSeller, issueKey } from '../src/sellers/sellers-repo.ts';
import { expiryJob, reserveReleaseJob } from '../src/transactions/jobs.ts';
import { moveTransaction } from '../src/transactions/transitions.ts';
import { WorkerRunner } from '../src/workers/runner.ts';
import { startTcpProxy } from '../test/helpers/tcp-proxy.ts';
import { bareScenarios } from './bare-sql.ts';

const postgres_url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const outage_s = Number(process.env.FAULT_DB_OUTAGE_SECONDS ?? 15);
const hang_window_s = Number(process.env.FAULT_HANG_SECONDS ?? 15);
const receiver_outage_s = Number(process.env.FAULT_RECEIVER_OUTAGE_SECONDS ?? 60);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

function receiver(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => answer(req, res, body));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook` })),
  );
}

async function seller(ctx: AppContext, name: string, webhookUrl?: string) {
  const s = await ctx.db.tx(async (q) => {
    const row = await insertSeller(q, { name, email: `${name}@example.com`, document: null });
    const key = await issueKey(q, row.id);
    if (webhookUrl) await q.query("INSERT INTO webhooks (seller_id, url, types) VALUES ($1, $2, ARRAY['TRANSACTION'])", [row.id, webhookUrl]);
    return { id: row.id, headers: { 'x-api-public-key': key.publicKey, 'x-api-private-key': key.privateKey } };
  });
  return s;
}

/** Pays one pending sale of `sellerId` every `gapMs` until `stop()`; returns each sale's commit time. */
function payer(ctx: AppContext, sellerId: number, gapMs: number) {
  const commits = new Map<number, number>();
  let running = true;
  const done = (async () => {
    let pending: number[] = [];
    while (running) {
      if (pending.length === 0) pending = await bareScenarios.insertPendingSales(ctx.db, sellerId, 500);
      const id = pending.pop()!;
      await moveTransaction(ctx.db, id, 'PAYMENT_CONFIRMED', new Date());
      commits.set(id, now());
      await sleep(gapMs);
    }
  })();
  return {
    commits,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

async function databaseOutage(directUrl: string) {
  const target = new URL(directUrl);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const env = {
    DATABASE_URL: proxy.urlFor(directUrl),
    DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-faults-')),
    LOG_LEVEL: 'silent',
    ADMIN_TOKEN: 'fault-admin-token-0123456789abcdef',
    POSTBACK_SECRET: 'fault-postback-secret-0123456789abcdef',
    SANDBOX_AUTOPILOT: 'false',
    RATE_LIMIT_PER_SECOND: '1000000',
    AUTH_FAILURES_PER_MINUTE: '1000000',
  };
  const ctx = await createContext(loadSettings(env));
  const app = await buildApp(ctx);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const workers = new WorkerRunner(ctx, [createDeliveryJob(), expiryJob, reserveReleaseJob, idempotencyExpiryJob], app.log);
  await workers.start();
  const s = await seller(ctx, 'outage');
  const get = async (path: string) => {
    const t = now();
    const res = await fetch(base + path, { headers: s.headers, signal: AbortSignal.timeout(30_000) }).catch(() => null);
    await res?.arrayBuffer();
    return { status: res?.status ?? 0, ms: now() - t };
  };
  await get('/api/public/balance');

  console.log(`\nA. PostgreSQL away for ${outage_s} s (every connection reset, new ones refused), light traffic meanwhile`);
  proxy.resetCounts();
  proxy.down();
  const perSecond: number[] = [];
  const health: { status: number; ms: number }[] = [];
  const balance: { status: number; ms: number }[] = [];
  let last = 0;
  for (let second = 0; second < outage_s; second++) {
    const until = now() + 1000;
    while (now() < until) {
      health.push(await get('/health'));
      balance.push(await get('/api/public/balance'));
      await sleep(50);
    }
    perSecond.push(proxy.accepted - last);
    last = proxy.accepted;
  }
  const during = proxy.accepted;
  proxy.up();
  const back = now();
  let healthBack = NaN;
  let balanceBack = NaN;
  while (Number.isNaN(healthBack) || Number.isNaN(balanceBack)) {
    if (Number.isNaN(healthBack) && (await get('/health')).status === 200) healthBack = now() - back;
    if (Number.isNaN(balanceBack) && (await get('/api/public/balance')).status === 200) balanceBack = now() - back;
    if (now() - back > 60_000) break;
    await sleep(20);
  }
  const beforeAfter = proxy.accepted;
  await sleep(15_000);
  const statuses = (xs: { status: number }[]) => [...new Set(xs.map((x) => x.status))].join('/');
  console.log(`  connection attempts per second during the outage: ${perSecond.join(', ')} (${during} in all)`);
  console.log(`  connections opened in the 15 s after it: ${proxy.accepted - during}; most open at once: ${proxy.maxOpen} (pool 10 + 1 listener)`);
  console.log(
    `  /health during it: ${statuses(health)}, p50 ${ms(
      pct(
        health.map((h) => h.ms),
        0.5,
      ),
    )}, max ${ms(Math.max(...health.map((h) => h.ms)))} (${health.length} requests)`,
  );
  console.log(
    `  balance during it: ${statuses(balance)}, p50 ${ms(
      pct(
        balance.map((h) => h.ms),
        0.5,
      ),
    )}, max ${ms(Math.max(...balance.map((h) => h.ms)))}`,
  );
  console.log(
    `  recovered by itself: /health 200 after ${ms(healthBack)}, balance 200 after ${ms(balanceBack)} (${beforeAfter - during} connections meanwhile)`,
  );
  await workers.stop();
  await app.close();
  await closeContext(ctx);
  await proxy.close();
}

async function hangingReceiver(ctx: AppContext) {
  console.log(
    `\nB. One seller's receiver hangs (never answers) while it gets 50 notifications/s; another seller paid 20 times/s, ${hang_window_s} s`,
  );
  const hang = await receiver(() => {});
  const receipts = new Map<number, number>();
  const fast = await receiver((_req, res, body) => {
    receipts.set((JSON.parse(body) as { id: number }).id, now());
    res.end('ok');
  });
  const hung = await seller(ctx, 'hung', hang.url);
  const other = await seller(ctx, 'other', fast.url);
  const workers = new WorkerRunner(ctx, [createDeliveryJob()], { error() {}, warn() {} } as never);
  await workers.start();
  const latenciesOf = (commits: Map<number, number>) => [...commits].filter(([id]) => receipts.has(id)).map(([id, at]) => receipts.get(id)! - at);
  const alone = payer(ctx, other.id, 50);
  await sleep(5_000);
  await alone.stop();
  await sleep(500);
  const baseline = latenciesOf(alone.commits);
  console.log(`  baseline, no receiver hanging: p50 ${ms(pct(baseline, 0.5))}, p99 ${ms(pct(baseline, 0.99))} (${baseline.length} received)`);
  const noisy = payer(ctx, hung.id, 20);
  await sleep(2_000); // the hanging target holds its share of attempts by now
  const measured = payer(ctx, other.id, 50);
  await sleep(hang_window_s * 1000);
  await measured.stop();
  await noisy.stop();
  await sleep(1_000);
  const latencies = latenciesOf(measured.commits);
  console.log(
    `  while it hangs: other seller's commit → receipt: p50 ${ms(pct(latencies, 0.5))}, p99 ${ms(pct(latencies, 0.99))}, max ${ms(Math.max(...latencies))} (${latencies.length} of ${measured.commits.size} received)`,
  );
  hang.server.closeAllConnections();
  await workers.stop();
  hang.server.close();
  fast.server.close();
}

async function receiverOutage(ctx: AppContext, keepSending: boolean) {
  const label = keepSending ? 'sales keep being paid after it is back' : 'the last sale paid as it comes back';
  console.log(`\nC. A receiver answers 503 for ${receiver_outage_s} s while its seller is paid 5 times/s; then 200 (${label})`);
  let down = true;
  const receipts = new Map<number, number>();
  const rx = await receiver((_req, res, body) => {
    if (down) {
      res.statusCode = 503;
      res.end();
      return;
    }
    receipts.set((JSON.parse(body) as { id: number }).id, now());
    res.end('ok');
  });
  const s = await seller(ctx, `outage-${keepSending}`, rx.url);
  const workers = new WorkerRunner(ctx, [createDeliveryJob()], { error() {}, warn() {} } as never);
  await workers.start();
  const traffic = payer(ctx, s.id, 200);
  await sleep(receiver_outage_s * 1000);
  down = false;
  const back = now();
  const backlog = [...traffic.commits.keys()];
  if (!keepSending) await traffic.stop();
  while (backlog.some((id) => !receipts.has(id)) && now() - back < 10 * 60_000) await sleep(20);
  const caughtUp = now() - back;
  if (keepSending) await traffic.stop();
  console.log(`  all ${backlog.length} notifications of the outage received ${ms(caughtUp)} after the receiver came back`);
  await workers.stop();
  rx.server.close();
}

const admin = new pg.Client({ connectionString: postgres_url });
await admin.connect();
const name = `gw_faults_${process.pid}`;
await admin.query(`CREATE DATABASE ${name}`);
const direct = new URL(postgres_url);
direct.pathname = `/${name}`;
try {
  await databaseOutage(direct.toString());
  const ctx = await createContext(
    loadSettings({
      DATABASE_URL: direct.toString(),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-faults-')),
      LOG_LEVEL: 'silent',
      ADMIN_TOKEN: 'fault-admin-token-0123456789abcdef',
      POSTBACK_SECRET: 'fault-postback-secret-0123456789abcdef',
    }),
  );
  try {
    await hangingReceiver(ctx);
    await receiverOutage(ctx, true);
    await receiverOutage(ctx, false);
  } finally {
    await closeContext(ctx);
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
