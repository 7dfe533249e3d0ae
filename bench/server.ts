// The gateway (API role) and a bare Fastify route in one child process, plus the bare-SQL loops the
// benchmark compares against: same pool, same concurrency, no HTTP, no validation, no domain code.
import Fastify from 'fastify';
import { buildApp } from '../src/app.ts';
import { logStream } from '../src/http/log-stream.ts';
import { post } from '../src/ledger/postings.ts';
import { createDeliveryJob } from '../src/notifications/delivery.ts';
import { startSession } from '../src/panel/accounts.ts';
import { closeContext, createContext, loadSettings } from '../src/runtime.ts';
import { insertSeller, issueKey } from '../src/sellers/sellers-repo.ts';
import { moveTransaction } from '../src/transactions/transitions.ts';
import { WorkerRunner } from '../src/workers/runner.ts';
import { type BareName, bareScenarios } from './bare-sql.ts';

// Limits far above what autocannon can send, so figures measure the gateway, not its throttle.
// Logging as users run it (LOG_LEVEL's default, info, written as npm start writes it), to /dev/null
// so that the bench's own output stays readable; the `logLevel` command switches it for a figure.
const config = loadSettings({
  ...process.env,
  PORT: '0',
  SANDBOX_AUTOPILOT: 'false',
  RATE_LIMIT_PER_SECOND: '10000000',
  AUTH_FAILURES_PER_MINUTE: '10000000',
});
const ctx = await createContext(config);
const app = await buildApp(ctx, { logStream: logStream('/dev/null') });
const gateway = await app.listen({ port: 0, host: '127.0.0.1' });

const bare = Fastify({ logger: false });
bare.get('/constant', async () => ({ available: 0, blocked: 0, total: 0 }));
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });

let workers: WorkerRunner | null = null;

type Command =
  | { cmd: 'sellers'; n: number; fundCents: number }
  | { cmd: 'pendingSales'; sellerId: number; n: number }
  | { cmd: 'bare'; name: BareName; sellerIds: number[]; concurrency: number; seconds: number }
  | { cmd: 'payAll'; ids: number[]; concurrency: number }
  | { cmd: 'payTimed'; ids: number[]; gapMs: number }
  | { cmd: 'webhook'; sellerId: number; url: string }
  | { cmd: 'workers'; on: boolean }
  | { cmd: 'panelSession'; sellerId: number }
  | { cmd: 'cpu' }
  | { cmd: 'logLevel'; level: string }
  | { cmd: 'stop' };

const now = () => performance.timeOrigin + performance.now();

async function handle(m: Command): Promise<unknown> {
  switch (m.cmd) {
    case 'sellers': {
      const out = [];
      for (let i = 0; i < m.n; i++) {
        const s = await ctx.db.tx(async (q) => {
          const seller = await insertSeller(q, { name: `Bench ${i}`, email: `bench${i}@example.com`, document: null });
          const key = await issueKey(q, seller.id);
          if (m.fundCents > 0)
            await post(q, {
              kind: 'BENCH_FUNDING',
              sellerId: seller.id,
              lines: [
                { account: 'customer_funds', amount: -m.fundCents },
                { account: 'available', amount: m.fundCents },
              ],
            });
          return { id: seller.id, headers: { 'x-api-public-key': key.publicKey, 'x-api-private-key': key.privateKey } };
        });
        out.push(s);
      }
      return out;
    }
    case 'pendingSales':
      return bareScenarios.insertPendingSales(ctx.db, m.sellerId, m.n);
    case 'bare':
      return bareScenarios.run(ctx.db, m.name, m.sellerIds, m.concurrency, m.seconds);
    case 'payAll': {
      const queue = [...m.ids];
      await Promise.all(
        Array.from({ length: m.concurrency }, async () => {
          for (let id = queue.pop(); id !== undefined; id = queue.pop()) await moveTransaction(ctx.db, id!, 'PAYMENT_CONFIRMED', new Date());
        }),
      );
      return m.ids.length;
    }
    case 'payTimed': {
      const commits: Record<number, number> = {};
      for (const id of m.ids) {
        await moveTransaction(ctx.db, id, 'PAYMENT_CONFIRMED', new Date());
        commits[id] = now();
        await new Promise((r) => setTimeout(r, m.gapMs));
      }
      return commits;
    }
    case 'webhook':
      await ctx.db.query("INSERT INTO webhooks (seller_id, url, types) VALUES ($1, $2, ARRAY['TRANSACTION'])", [m.sellerId, m.url]);
      return true;
    case 'workers':
      if (m.on && !workers) {
        workers = new WorkerRunner(ctx, [createDeliveryJob()], app.log);
        await workers.start();
      }
      if (!m.on && workers) {
        await workers.stop();
        workers = null;
      }
      return true;
    case 'panelSession':
      // A logged-in seller's cookie, without paying a scrypt hash per benchmark run.
      return `painel_sessao=${(await startSession(ctx.db, m.sellerId, new Date())).id}`;
    case 'cpu':
      return process.cpuUsage();
    case 'logLevel':
      // Each request's logger is a child made per request: it takes the level in force then.
      app.log.level = m.level;
      return true;
    case 'stop':
      await workers?.stop();
      await app.close();
      await bare.close();
      await closeContext(ctx);
      process.exit(0);
  }
}

process.on('message', (m: Command & { seq: number }) => {
  handle(m).then(
    (result) => process.send!({ seq: m.seq, result }),
    (error) => process.send!({ seq: m.seq, error: String(error?.stack ?? error) }),
  );
});
process.send!({ ready: { gateway, bare: bareAddress, adminToken: config.adminToken } });
