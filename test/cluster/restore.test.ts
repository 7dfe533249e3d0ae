// Backups and point-in-time recovery of the three-node cluster of `npm run cluster` (pgBackRest), and
// what the gateway makes of a database that went back in time: a PIX sale made, a full backup taken,
// the moment T noted on the cluster's own clock, then the sale paid at the PSP (PAGO, the balance
// moved); the whole cluster restored to T, where the sale is PENDENTE again and the money is gone
// from the books. The PSP keeps its own record elsewhere (the embedded PSP package run in this process
// on a database of its own, reached by the gateway's api-pix connector over HTTP), so it still has the
// Pix: the gateway started again on the restored cluster brings the payment back by itself, through
// the api-pix reconciliation job (the Pix received listed every PIX_RECONCILE_SECONDS over a window
// that starts at the restored `pix_rail_state.reconciled_until`), with the same Pix and the same
// money, and the ledger verifies. A failing run prints `patronictl list`, the tails of the cluster's
// logs and the gateway's last lines.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SandboxPsp } from '@pagar/sandbox-psp';
import pg from 'pg';
import type { Db } from '../../src/db/db.ts';
import { openDb } from '../../src/db/open.ts';
import { type ApiPixClient, createApiPixClient } from '../../src/providers/api-pix/client/api-pix-client.ts';
import { Cluster, cluster_skip } from '../helpers/cluster.ts';
import { freshDatabase, type TestDatabase } from '../helpers/databases.ts';
import { pixExample } from '../helpers/fixtures.ts';
import { makeTestCerts } from '../helpers/tls-certs.ts';

// Below Linux's ephemeral range (32768–60999), where a client socket's TIME_WAIT could hold a port.
const port_base = 20432;
const admin_token = 'restore-test-admin-token-0123456789abcdef';
const postback_secret = 'restore-test-postback-secret-0123456789ab';
const receiver_key = '123e4567-e12b-12d1-a456-426655440000';
const psp_client_id = 'restore-test-gateway';
const psp_client_secret = 'restore-test-psp-secret-0123456789';
// The shortest interval the gateway accepts (5 to 86,400 s; default 60): a payment a callback did
// not bring is found within one interval of the worker's start.
const reconcile_seconds = 5;
const amount = 15000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Proc {
  child: ChildProcess;
  lines: string[];
  exited: Promise<void>;
  /** When the process said it had started (its jobs running, for a worker). */
  readyAt?: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function launch(role: string, env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', role], {
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const p: Proc = { child, lines, exited };
  const keep = (d: Buffer) => {
    const text = d.toString();
    // main.ts prints where the operator token is once the workers have started.
    if (p.readyAt === undefined && text.includes('operator token')) p.readyAt = Date.now();
    lines.push(...text.split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 300));
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return p;
}

/** SIGTERM (the gateway finishes what is in flight and exits), SIGKILL after 30 s; bounded. */
async function stopProc(p: Proc | undefined): Promise<void> {
  if (!p?.child.pid || p.child.exitCode !== null || p.child.signalCode !== null) return;
  process.kill(p.child.pid, 'SIGTERM');
  const timer = sleep(30_000).then(() => 'late' as const);
  if ((await Promise.race([p.exited.then(() => 'done' as const), timer])) === 'late') {
    process.kill(-p.child.pid, 'SIGKILL');
    await p.exited;
  }
}

async function until(what: string, boundMs: number, check: () => Promise<boolean> | boolean): Promise<number> {
  const started = Date.now();
  for (;;) {
    const done = await Promise.resolve()
      .then(check)
      .catch(() => false);
    if (done) return Date.now() - started;
    if (Date.now() - started > boundMs) throw new Error(`${what}: not within ${boundMs} ms`);
    await sleep(250);
  }
}

describe('point-in-time recovery of the cluster, and a PIX payment the PSP still has', { skip: cluster_skip, timeout: 1_200_000 }, () => {
  const dir = mkdtempSync('/var/tmp/gw-restore-test-');
  chmodSync(dir, 0o755); // the nodes run as postgres
  const certDir = mkdtempSync(join(tmpdir(), 'gw-restore-certs-'));
  const cluster = new Cluster(dir, port_base);
  let pspDatabase: TestDatabase;
  let pspDb: Db;
  let psp: SandboxPsp;
  let pspClient: ApiPixClient;
  let env: Record<string, string>;
  let base: string;
  let api: Proc | undefined;
  let worker: Proc | undefined;
  const figures: string[] = [];

  /** A role started and ready: the API answers /health; a worker has said its jobs run. A process that exits while starting fails the test. */
  async function startRole(role: 'api' | 'worker', roleEnv: Record<string, string>): Promise<Proc> {
    const p = launch(role, roleEnv);
    const ready = async () =>
      role === 'api' ? (await fetch(`${base}/health`, { signal: AbortSignal.timeout(1_000) })).status === 200 : p.readyAt !== undefined;
    const exited = () => p.child.exitCode !== null || p.child.signalCode !== null;
    await until(`the ${role} process to start`, 120_000, async () => exited() || (await ready()));
    if (exited())
      throw new Error(`the ${role} process exited ${p.child.exitCode ?? p.child.signalCode} while starting:\n${p.lines.slice(-20).join('\n')}`);
    return p;
  }

  async function startGateway(): Promise<void> {
    api = await startRole('api', env);
    worker = await startRole('worker', { ...env, PORT: String(await freePort()) });
  }
  /** The last lines of every etcd and Patroni log of the cluster (PostgreSQL's own log is Patroni's), for a failing run. */
  const clusterLogs = () =>
    [
      'etcd1/etcd.log',
      'etcd2/etcd.log',
      'etcd3/etcd.log',
      'node1/patroni.log',
      'node2/patroni.log',
      'node3/patroni.log',
      'node1/restore-postgres.log',
    ]
      .map((file) => {
        try {
          // Patroni's heartbeat ("no action. I am …") every 2 s would hide what happened.
          const lines = readFileSync(join(dir, file), 'utf8').trim().split('\n');
          return `--- ${file} ---\n${lines
            .filter((l) => !l.includes('INFO: no action.'))
            .slice(-25)
            .join('\n')}`;
        } catch {
          return `--- ${file}: none ---`;
        }
      })
      .join('\n');
  const callbacks = (p: Proc | undefined) => (p?.lines ?? []).filter((l) => l.includes('"route":"/providers/pix/')).length;

  async function stopGateway(): Promise<void> {
    await Promise.all([stopProc(api), stopProc(worker)]);
  }

  before(async () => {
    const t0 = Date.now();
    const url = await cluster.start().catch((error) => {
      console.error(clusterLogs());
      throw error;
    });
    figures.push(`cluster started in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // The PSP outlives the restore: its state is in a database of its own (PGlite in memory, or a fresh
    // database on TEST_DATABASE_URL's server), never in the cluster.
    pspDatabase = await freshDatabase();
    pspDb = await openDb(pspDatabase.url, tmpdir());
    const { startSandboxPsp } = await import('@pagar/sandbox-psp');
    psp = await startSandboxPsp({
      db: pspDb,
      receiverKey: receiver_key,
      merchantName: 'Loja Restore',
      merchantCity: 'São Paulo',
      clientId: psp_client_id,
      clientSecret: psp_client_secret,
    });
    pspClient = createApiPixClient({ baseUrl: psp.apiUrl, tokenUrl: psp.tokenUrl, clientId: psp.clientId, clientSecret: psp.clientSecret });
    // The connector requires an mTLS client certificate; the PSP here speaks plain HTTP on loopback.
    const certs = makeTestCerts();
    writeFileSync(join(certDir, 'cert.pem'), certs.clientCert);
    writeFileSync(join(certDir, 'key.pem'), certs.clientKey);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      DATABASE_URL: url,
      ADMIN_TOKEN: admin_token,
      POSTBACK_SECRET: postback_secret,
      PORT: String(port),
      HOST: '127.0.0.1',
      PIX_PROVIDER: 'api-pix',
      PIX_API_BASE_URL: psp.apiUrl,
      PIX_API_TOKEN_URL: psp.tokenUrl,
      PIX_API_CLIENT_ID: psp.clientId,
      PIX_API_CLIENT_SECRET: psp.clientSecret,
      PIX_API_CERT_FILE: join(certDir, 'cert.pem'),
      PIX_API_KEY_FILE: join(certDir, 'key.pem'),
      PIX_RECEIVER_KEY: receiver_key,
      // The API process's own address: the PSP calls it back there, before and after the restore.
      PIX_WEBHOOK_BASE_URL: base,
      PIX_RECONCILE_SECONDS: String(reconcile_seconds),
      SANDBOX_AUTOPILOT: 'false',
      RATE_LIMIT_PER_SECOND: '100000',
      LOG_LEVEL: 'info',
    };
    await startGateway();
  });

  after(async () => {
    await stopGateway().catch(() => {});
    await pspClient?.close().catch(() => {});
    await psp?.close().catch(() => {});
    await pspDb?.close().catch(() => {});
    await pspDatabase?.drop().catch(() => {});
    await cluster.command(['stop']).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    rmSync(certDir, { recursive: true, force: true });
  });

  /** A database client on the current leader (the checks' own view, not the gateway's). */
  async function onLeader<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const leader = await cluster.leader();
    assert.ok(leader, 'a leader');
    const c = new pg.Client({ host: '127.0.0.1', port: leader.pgPort, user: 'postgres', database: 'gateway' });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  }

  async function call(method: string, path: string, headers: Record<string, string>, body?: object) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text };
  }
  const admin = { authorization: `Bearer ${admin_token}` };

  /** The sale's row as the leader has it, and the Pix received that paid it (none while it is unpaid). */
  const booked = (saleId: number) =>
    onLeader(async (c) => {
      const sale = (
        await c.query<{ status: string; pix_end_to_end_id: string | null }>('SELECT status, pix_end_to_end_id FROM transactions WHERE id = $1', [
          saleId,
        ])
      ).rows[0];
      const received = (
        await c.query<{ outcome: string }>('SELECT outcome FROM pix_received WHERE end_to_end_id = $1', [sale?.pix_end_to_end_id ?? ''])
      ).rows;
      return { sale, received };
    });

  test('restored to before the payment, the sale is PENDENTE again; the reconciliation job brings the payment back by itself', async (t) => {
    try {
      // A seller and a PIX sale, charged at the PSP (PUT /cob/{txid}) through the API.
      const created = await call('POST', '/admin/sellers', admin, { name: 'Loja Restore', email: 'restore@example.com' });
      assert.equal(created.status, 201, created.text);
      const seller = { 'x-api-public-key': created.body.publicKey, 'x-api-private-key': created.body.privateKey };
      const sale = await call('POST', '/api/sales', seller, pixExample({ amount, postbackUrl: null }));
      assert.equal(sale.status, 201, sale.text);
      const saleId = sale.body.sale.id as number;
      const txid = sale.body.sale.payment.pix.txid as string;
      assert.equal((await pspClient.getCob(txid)).status, 'ATIVA', 'the PSP has the charge');
      const read = async () => (await call('GET', `/api/transactions/${saleId}`, seller)).body;
      const balance = async () => (await call('GET', '/api/public/balance', seller)).body as { available: number; blocked: number; total: number };
      assert.deepEqual(await balance(), { available: 0, blocked: 0, total: 0 });

      // The worker registered the callback URL at the PSP: the payment comes by the callback.
      await until('the worker to register the callback URL at the PSP', 60_000, async () =>
        (await pspClient.getWebhook(receiver_key)).webhookUrl.startsWith(`${base}/providers/pix/`),
      );

      // A full backup, WAL archived: the cluster archives WAL and takes backups.
      let at = Date.now();
      const label = (await cluster.command(['backup', 'full'], 600_000)).trim();
      assert.match(label, /^\d{8}-\d{6}F$/, 'a full backup label');
      figures.push(`full backup ${label} in ${((Date.now() - at) / 1000).toFixed(1)} s`);

      // T on the cluster's own clock, with a pause on either side: every commit before the pause is
      // before T, the payment's after it.
      await sleep(1_500);
      const target = await onLeader(async (c) => (await c.query<{ t: string }>('SELECT now()::text AS t')).rows[0]!.t);
      await sleep(1_500);

      // The payer pays at the PSP; the PSP calls the gateway back, which confirms it (GET /pix/{e2eid}).
      const pix = await psp.pay(txid, amount);
      await until('the sale to be PAGO', 30_000, async () => (await read()).status === 'PAGO');
      const paid = await balance();
      assert.deepEqual(paid, { available: 14702, blocked: 0, total: 14702 }, 'R$ 150,00 less the 1.99 % PIX fee');
      const before = await booked(saleId);
      assert.equal(before.sale?.pix_end_to_end_id, pix.endToEndId);
      assert.deepEqual(
        before.received.map((r) => r.outcome),
        ['PAID'],
      );

      // The WAL holding the payment is in the archive (restore's own `pgbackrest check` does this too):
      // recovery to T needs a record past T to know it has reached it.
      const segment = await onLeader(async (c) => (await c.query<{ f: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS f')).rows[0]!.f);
      await until(`WAL segment ${segment} to be archived`, 120_000, () =>
        onLeader(async (c) => {
          const { last } = (await c.query<{ last: string | null }>('SELECT last_archived_wal AS last FROM pg_stat_archiver')).rows[0]!;
          return last !== null && last >= segment;
        }),
      );

      // The gateway stops; the whole cluster goes back to T.
      await stopGateway();
      at = Date.now();
      const out = await cluster.command(['restore', '--target', target], 900_000);
      assert.ok(out.includes(`DATABASE_URL=${env.DATABASE_URL}`), `the restored cluster answers at the same URL: ${out}`);
      const restoreSeconds = (Date.now() - at) / 1000;
      figures.push(`restore to ${target} in ${restoreSeconds.toFixed(1)} s (three nodes, the two standbys re-cloned)`);

      // The payment is gone from our books; the PSP still has it.
      const restored = await booked(saleId);
      assert.deepEqual(restored.sale, { status: 'PENDENTE', pix_end_to_end_id: null }, 'the sale as it was at T');
      const lines = await onLeader(async (c) => Number((await c.query('SELECT count(*) AS n FROM journal_lines')).rows[0].n));
      const timeline = await onLeader(
        async (c) => (await c.query<{ tl: number }>('SELECT timeline_id AS tl FROM pg_control_checkpoint()')).rows[0]!.tl,
      );
      assert.equal(lines, 0, 'no journal line at T: the payment was the only money');
      assert.ok(timeline > 1, `a new timeline after the restore (${timeline})`);
      assert.equal((await pspClient.getPix(pix.endToEndId)).endToEndId, pix.endToEndId, 'the PSP still has the Pix');

      // The gateway again, on the restored cluster: nothing is done by hand. The API first, which
      // reads the sale as the restore left it; then the worker, whose reconciliation job runs at once.
      assert.ok(callbacks(api) > 0, 'before the restore the payment came by the callback');
      at = Date.now();
      api = await startRole('api', env);
      const apiSeconds = (Date.now() - at) / 1000;
      assert.equal((await read()).status, 'PENDENTE', 'the API reads the restored sale');
      assert.deepEqual(await balance(), { available: 0, blocked: 0, total: 0 }, 'the money is not in the books');
      const workerLaunched = Date.now();
      worker = await startRole('worker', { ...env, PORT: String(await freePort()) });
      await until('the reconciliation job to bring the payment back', 120_000, async () => (await read()).status === 'PAGO');
      const backAt = Date.now();
      const backSeconds = (backAt - at) / 1000;
      figures.push(
        `payment back ${backSeconds.toFixed(1)} s after the gateway was started again (API answering after ${apiSeconds.toFixed(1)} s; ` +
          `${((backAt - workerLaunched) / 1000).toFixed(1)} s after the worker was launched, ` +
          `${((backAt - worker.readyAt!) / 1000).toFixed(1)} s after its jobs started; PIX_RECONCILE_SECONDS=${reconcile_seconds}); ` +
          `journal lines at T: ${lines}; timeline ${timeline}`,
      );
      assert.equal(callbacks(api), 0, 'after the restore no callback came: the reconciliation job found the Pix');

      // The same Pix, the same money, once; the ledger verifies; the PSP returned nothing.
      assert.deepEqual(await balance(), paid);
      const after = await booked(saleId);
      assert.equal(after.sale?.pix_end_to_end_id, pix.endToEndId, 'paid by the same Pix');
      assert.deepEqual(
        after.received.map((r) => r.outcome),
        ['PAID'],
      );
      const verify = await call('GET', '/admin/ledger/verify', admin);
      assert.equal(verify.body?.ok, true, `ledger: ${verify.text.slice(0, 500)}`);
      const atPsp = await pspClient.getPix(pix.endToEndId);
      assert.deepEqual(atPsp.devolucoes ?? [], [], 'no devolução: the gateway did not take the Pix for a stranger');
      // And a later round changes nothing.
      await sleep((reconcile_seconds + 1) * 1000);
      assert.deepEqual(await balance(), paid);
      assert.equal((await read()).status, 'PAGO');
    } catch (error) {
      console.error(`--- patronictl list ---\n${cluster.list()}`);
      console.error(clusterLogs());
      console.error(`--- API process, last lines ---\n${api?.lines.slice(-40).join('\n')}`);
      console.error(`--- worker process, last lines ---\n${worker?.lines.slice(-40).join('\n')}`);
      throw error;
    } finally {
      // Shown by the runner whether the test passes or fails (scripts/test-reporter.mjs).
      for (const figure of figures) t.diagnostic(`figure: ${figure}`);
    }
  });
});
