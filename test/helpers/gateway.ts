import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { type App, buildApp } from '../../src/app.ts';
import type { Clock } from '../../src/context.ts';
import type { MsClock } from '../../src/http/rate-limit.ts';
import { closeContext, createContext, type LoadedSettings, loadSettings, type Runtime, type Settings } from '../../src/runtime.ts';
import type { Job } from '../../src/workers/job.ts';
import { freshDatabase, type TestDatabase } from './databases.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const POSTBACK_SECRET = 'test-postback-secret-0123456789abcdef';
export const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };

export interface SellerKeys {
  id: number;
  publicKey: string;
  privateKey: string;
  headers: Record<string, string>;
}

export interface Gateway {
  app: App;
  ctx: Runtime;
  config: Settings;
  database: TestDatabase;
  createSeller(input?: { name?: string; email?: string }): Promise<SellerKeys>;
  /** Another process's view of the same database (its own pool, cache and listeners). */
  peer(): Promise<{ app: App; ctx: Runtime; close(): Promise<void> }>;
  close(): Promise<void>;
}

export interface GatewayOptions {
  clock?: Clock;
  env?: Record<string, string>;
  logStream?: DestinationStream;
  /** The rate limiters' clock (monotonic ms), to move time in rate-limit tests. */
  rateLimitClock?: MsClock;
  /** Extra routes (e.g. a route that throws) added before the app is ready. */
  extend?: (app: App) => void;
}

/** The environment of a test gateway on database `url` (also for gateways started in child processes). */
export function testEnv(url: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: url,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-test-')),
    ADMIN_TOKEN,
    POSTBACK_SECRET,
    PIX_RECEIVER_KEY: '123e4567-e12b-12d1-a456-426655440000',
    SANDBOX_AUTOPILOT: 'false',
    LOG_LEVEL: 'silent',
    // The suite sends many requests and bad credentials from one address; rate-limit tests lower these.
    RATE_LIMIT_PER_SECOND: '100000',
    AUTH_FAILURES_PER_MINUTE: '100000',
    ...env,
  };
}

function testConfig(url: string, env: Record<string, string> = {}): LoadedSettings {
  return loadSettings(testEnv(url, env));
}

/** A gateway on a database of its own (PGlite in memory, or a fresh PostgreSQL database). */
export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const database = await freshDatabase();
  const loaded = testConfig(database.url, options.env);
  const ctx = await createContext(loaded, options.clock);
  const config = ctx.config as Settings;
  const app = await buildApp(ctx, {
    ...(options.logStream ? { logStream: options.logStream } : {}),
    ...(options.rateLimitClock ? { rateLimitClock: options.rateLimitClock } : {}),
  });
  options.extend?.(app);
  await app.ready();
  const peers: (() => Promise<void>)[] = [];
  return {
    app,
    ctx,
    config,
    database,
    async createSeller(input = {}) {
      const res = await app.inject({
        method: 'POST',
        url: '/admin/sellers',
        headers: adminHeaders,
        payload: { name: input.name ?? 'Loja Teste', email: input.email ?? 'loja@example.com' },
      });
      if (res.statusCode !== 201) throw new Error(`createSeller: ${res.statusCode} ${res.body}`);
      const s = res.json();
      return {
        id: s.id,
        publicKey: s.publicKey,
        privateKey: s.privateKey,
        headers: { 'x-api-public-key': s.publicKey, 'x-api-private-key': s.privateKey },
      };
    },
    async peer() {
      const peerCtx = await createContext(loaded, options.clock);
      const peerApp = await buildApp(peerCtx);
      await peerApp.ready();
      const close = async () => {
        await peerApp.close();
        await closeContext(peerCtx);
      };
      peers.push(close);
      return { app: peerApp, ctx: peerCtx, close };
    },
    async close() {
      for (const closePeer of peers) await closePeer().catch(() => {});
      await app.close();
      await closeContext(ctx);
      await database.drop();
    },
  };
}

/** One of the jobs the gateway's rails run (`npm start` runs them all in its worker), to run by hand. */
export function railJob(gw: { ctx: Runtime }, name: string): Job {
  const job = gw.ctx.rails.jobs.find((j) => j.name === name);
  if (!job) throw new Error(`no rail job named ${name}: ${gw.ctx.rails.jobs.map((j) => j.name).join(', ')}`);
  return job;
}
