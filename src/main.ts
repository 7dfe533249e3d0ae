import { type App, buildApp } from './app.ts';
import { ConfigError, type Role } from './config.ts';
import { idempotencyExpiryJob } from './http/idempotency.ts';
import { logStream } from './http/log-stream.ts';
import { createDeliveryJob } from './notifications/delivery.ts';
import { createReconciliationJob } from './reconciliation/job.ts';
import { createRefundDispatchJob } from './refunds/dispatch-refund.ts';
import { closeContext, createContext, loadSettings, type Runtime } from './runtime.ts';
import { expiryJob, reserveReleaseJob } from './transactions/jobs.ts';
import type { Job } from './workers/job.ts';
import { WorkerRunner } from './workers/runner.ts';

const roles: Role[] = ['api', 'worker', 'all'];

async function main(): Promise<void> {
  const role = (process.argv[2] ?? 'all') as Role;
  if (!roles.includes(role)) throw new ConfigError(`role must be one of ${roles.join(', ')}, got "${role}"`);
  const config = loadSettings(process.env);
  const ctx = await createContext(config);
  const app = await buildApp(ctx, { logStream: logStream(1) });
  let server: App | null = null;
  if (role !== 'worker') {
    const address = await app.listen({ port: config.port, host: config.host });
    await ctx.providers.listeningAt(address);
    server = app;
    console.log(`gateway (${role}) listening on ${address} — API docs at ${address}/docs`);
  }
  for (const work of ctx.rails.stranded)
    app.log.error(work, 'provider account not configured: its unfinished work is sent nowhere; the operator must finish it');
  const workers = new WorkerRunner(ctx, role === 'api' ? [] : allJobs(ctx), app.log);
  await workers.start();
  console.log(
    config.secretsFile
      ? `operator token (ADMIN_TOKEN) and generated secrets are in ${config.secretsFile}`
      : 'operator token: ADMIN_TOKEN from the environment',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: no new requests, finishing in-flight work');
    // What a stop cuts short is what a crash would (every money move is committed whole or not at
    // all): a request or a job that will not end must not keep the process from stopping.
    setTimeout(() => {
      app.log.error({ signal, afterMs: config.shutdownTimeoutMs }, 'shutdown did not finish in time: exiting with work unfinished');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    await (server ?? app).close();
    await workers.stop();
    await closeContext(ctx);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** The jobs this gateway runs; each rail's come with its connectors. */
function allJobs(ctx: Runtime): Job[] {
  return [
    createDeliveryJob(),
    expiryJob,
    reserveReleaseJob,
    idempotencyExpiryJob,
    createRefundDispatchJob(),
    createReconciliationJob(),
    ...ctx.rails.jobs,
  ];
}

main().catch((error) => {
  if (error instanceof ConfigError) {
    console.error(`configuration error: ${error.message}`);
  } else {
    // The cause says which host or statement failed (a refused connection, a timeout, a standby).
    const cause = (error as { cause?: { message?: string; code?: string } })?.cause;
    const why = cause?.message ? ` (${[cause.code, cause.message].filter(Boolean).join(': ')})` : '';
    console.error(`start-up failed: ${error instanceof Error ? error.message : String(error)}${why}`);
  }
  process.exit(1);
});
