// The gateway as an operator runs it: real processes started by `npm start` or node, stopped by signals,
// two of them on one DATA_DIR. Every wait is bounded in tries and time; every process is started in a
// process group of its own, and `after` kills what is left of each group.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createConnection, createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError } from '../../src/config.ts';
import { lockDataDir } from '../../src/db/data-dir-lock.ts';
import { freshDatabase, onPostgres, type TestDatabase } from '../helpers/databases.ts';
import { pixExample } from '../helpers/fixtures.ts';
import { testEnv } from '../helpers/gateway.ts';

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Proc {
  pid: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<Exit>;
  /** Null while it runs. */
  exit(): Exit | null;
}

const groups: number[] = [];
const databases: TestDatabase[] = [];

after(async () => {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // the group is already gone: the normal case
    }
  }
  for (const database of databases) await database.drop().catch(() => {});
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a command in a process group of its own (so its whole tree can be found and killed). */
function launch(command: string, args: string[], env: Record<string, string>): Proc {
  const child: ChildProcess = spawn(command, args, { env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  assert.ok(child.pid, `${command} did not start`);
  groups.push(child.pid);
  let out = '';
  let err = '';
  let exit: Exit | null = null;
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  // 'close', not 'exit': the output is complete by then.
  const exited = new Promise<Exit>((resolve) =>
    child.once('close', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    }),
  );
  return { pid: child.pid, stdout: () => out, stderr: () => err, exited, exit: () => exit };
}

/** The gateway without npm: this process's pid is the gateway's. */
const launchNode = (env: Record<string, string>) => launch(process.execPath, ['--import', 'tsx', 'src/main.ts'], env);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether something accepts TCP connections on the port (a frozen process still would: the kernel accepts). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function healthy(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Polls until `done` is true: at most `tries` times, `everyMs` apart; returns the ms it took. */
async function waitUntil(what: string, done: () => boolean | Promise<boolean>, tries: number, everyMs: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < tries; i++) {
    if (await done()) return Math.round(performance.now() - start);
    await sleep(everyMs);
  }
  throw new Error(`${what}: not after ${tries} tries ${everyMs} ms apart`);
}

/** Start-up compiles TypeScript and migrates a database: up to 60 s on a loaded 2-core machine. */
async function waitForHealth(proc: Proc, port: number): Promise<void> {
  await waitUntil(
    `/health on port ${port}`,
    async () => {
      const exit = proc.exit();
      if (exit) throw new Error(`exited before serving (${JSON.stringify(exit)}): ${proc.stderr()}`);
      return healthy(port);
    },
    300,
    200,
  );
}

async function exitWithin(proc: Proc, ms: number): Promise<Exit> {
  await waitUntil(`exit of pid ${proc.pid}`, () => proc.exit() !== null, Math.ceil(ms / 50), 50);
  return proc.exited;
}

/** Live processes of a process group (zombies excluded: a container's init may be slow to reap them). */
function groupPids(pgid: number): number[] {
  const table = execFileSync('ps', ['-A', '-o', 'pid=,pgid=,stat='], { encoding: 'utf8' });
  return table
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([pid, group, stat]) => pid && Number(group) === pgid && !stat?.startsWith('Z'))
    .map(([pid]) => Number(pid));
}

/** A gateway's environment: on PostgreSQL runs a fresh database; otherwise PGlite on disk in a temp DATA_DIR. */
async function gatewayEnv(port: number): Promise<Record<string, string>> {
  if (onPostgres) {
    const database = await freshDatabase();
    databases.push(database);
    return { ...testEnv(database.url), PORT: String(port) };
  }
  return { ...testEnv(''), PORT: String(port) };
}

/** Embedded database on disk in `dataDir`, whatever the run's database. */
const embeddedEnv = (dataDir: string, port: number) => ({ ...testEnv(''), DATA_DIR: dataDir, PORT: String(port) });

describe('npm start under a process manager', () => {
  for (const [signal, role] of [
    ['SIGTERM', []],
    ['SIGINT', ['--', 'api']],
  ] as const) {
    test(`${signal} to the npm process stops the gateway${role.length ? ' (role api)' : ''}: port freed, npm exits 0, no process left`, async (t) => {
      const port = await freePort();
      const npm = launch('npm', ['start', ...role], await gatewayEnv(port));
      await waitForHealth(npm, port);
      if (role.length) assert.match(npm.stdout(), /gateway \(api\) listening/, `npm start -- api runs the api role: ${npm.stdout()}`);
      // The API docs' files come through @fastify/static, whose dependencies are pinned to Node 20 builds (package.json overrides).
      const css = await fetch(`http://127.0.0.1:${port}/docs/static/swagger-ui.css`, { signal: AbortSignal.timeout(5000) });
      assert.equal(css.status, 200, '/docs serves its assets');
      assert.ok((await css.arrayBuffer()).byteLength > 0, 'a stylesheet, read to the end (an unread body would hold the connection)');
      assert.ok(groupPids(npm.pid).length >= 2, 'npm and the gateway under it');

      process.kill(npm.pid, signal);
      const freedMs = await waitUntil(`port ${port} closed after ${signal}`, async () => !(await accepts(port)), 500, 20);
      const exit = await exitWithin(npm, 10_000);
      assert.deepEqual(exit, { code: 0, signal: null }, `npm exits 0 after the gateway's graceful stop; stderr: ${npm.stderr()}`);
      await waitUntil(`every process of npm's group ${npm.pid} gone`, () => groupPids(npm.pid).length === 0, 100, 100);
      t.diagnostic(`${signal}: port ${port} refused connections ${freedMs} ms after the signal`);
    });
  }
});

// CONTRACT §1 roles, §16 "Many processes": an API process and a worker process started apart on one
// PostgreSQL behave as one process does. Nothing is configured that the installation makes for
// itself (the PIX receiver key, where callbacks go): the first process makes it, the other reads it.
describe('npm start -- api and npm start -- worker on one PostgreSQL, sandbox mode', { skip: !onPostgres && 'PGlite runs one process' }, () => {
  test('a sandbox Pix pays its sale within 2 s, a cashout completes within 5 s', async (t) => {
    const port = await freePort();
    const env: Record<string, string> = { ...(await gatewayEnv(port)), SANDBOX_AUTOPILOT: 'true', LOG_LEVEL: 'warn' };
    delete env.PIX_RECEIVER_KEY;
    const api = launch('npm', ['start', '--', 'api'], env);
    const worker = launch('npm', ['start', '--', 'worker'], env);
    await waitForHealth(api, port);
    const gw = `http://127.0.0.1:${port}`;
    const call = async (method: string, path: string, headers: Record<string, string>, body?: object) => {
      const res = await fetch(`${gw}${path}`, {
        method,
        headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(10_000),
      });
      // biome-ignore lint/suspicious/noExplicitAny: an answer, read as JSON
      return { status: res.status, json: (await res.json()) as Record<string, any> };
    };
    const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
    const seller = await call('POST', '/admin/sellers', admin, { name: 'Loja', email: 'loja@example.com' });
    assert.equal(seller.status, 201);
    const keys = { 'x-api-public-key': String(seller.json.publicKey), 'x-api-private-key': String(seller.json.privateKey) };
    const sale = await call('POST', '/api/sales', { ...keys, 'idempotency-key': 'sale-1' }, pixExample());
    assert.equal(sale.status, 201, JSON.stringify(sale.json));
    const id: number = sale.json.sale.id;
    // The worker has run its first rounds (it registers the PSP's webhook too) once it says nothing new; wait for it to be up.
    await waitUntil('the worker started', () => worker.stdout().includes('operator token'), 300, 200);

    const paidAt = performance.now();
    assert.equal((await call('POST', `/sandbox/sales/${id}/pay`, admin)).status, 200);
    const status = async () => (await call('GET', `/api/transactions/${id}`, keys)).json.status;
    const paidMs = await waitUntil('the sale PAGO', async () => (await status()) === 'PAGO', 100, 50);
    t.diagnostic(`PAGO ${paidMs} ms after the Pix (${Math.round(performance.now() - paidAt)} ms with the pay call)`);
    assert.ok(paidMs <= 2000, `the sale was PAGO ${paidMs} ms after the Pix`);

    const cashout = await call(
      'POST',
      '/api/public/cashout',
      { ...keys, 'idempotency-key': 'cashout-1' },
      { amount: 100, pixKey: 'loja@example.com', pixKeyType: 'EMAIL' },
    );
    assert.equal(cashout.status, 201, JSON.stringify(cashout.json));
    const cashoutStatus = async () => (await call('GET', `/api/public/cashout/${cashout.json.id}`, keys)).json.status;
    const completedMs = await waitUntil('the cashout COMPLETED', async () => (await cashoutStatus()) === 'COMPLETED', 200, 50);
    t.diagnostic(`cashout COMPLETED ${completedMs} ms after it was asked`);
    assert.ok(completedMs <= 5000, `the cashout was COMPLETED ${completedMs} ms after it was asked`);
    assert.equal(worker.exit(), null, `the worker runs: ${worker.stderr()}`);
    process.kill(-api.pid, 'SIGTERM');
    process.kill(-worker.pid, 'SIGTERM');
    await exitWithin(api, 15_000);
    await exitWithin(worker, 15_000);
  });
});

describe('a stop that cannot finish', () => {
  test('a request that never ends does not hold the process: it exits 1 at SHUTDOWN_TIMEOUT_MS, and says why', async () => {
    const port = await freePort();
    const env = { ...(await gatewayEnv(port)), HTTP_REQUEST_TIMEOUT_MS: '3600000', SHUTDOWN_TIMEOUT_MS: '2000', LOG_LEVEL: 'info' };
    const gateway = launchNode(env);
    await waitForHealth(gateway, port);
    // A body that stops after its first bytes: the request stays in flight for the hour the server allows it.
    const stalled = createConnection({ port, host: '127.0.0.1' });
    stalled.on('error', () => {});
    try {
      await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
      stalled.write('POST /api/sales HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a');
      await sleep(300);
      const signalledAt = performance.now();
      process.kill(gateway.pid, 'SIGTERM');
      const exit = await exitWithin(gateway, 15_000);
      const ms = performance.now() - signalledAt;
      assert.deepEqual(exit, { code: 1, signal: null }, `stdout: ${gateway.stdout()}`);
      assert.ok(ms >= 1_900, `exited after ${Math.round(ms)} ms: the stop waited for the request first`);
      assert.match(gateway.stdout(), /shutdown did not finish in time/);
    } finally {
      stalled.destroy();
    }
  });
});

describe('one gateway per DATA_DIR (embedded database on disk)', () => {
  const lockFile = (dataDir: string) => join(dataDir, 'gateway.lock');

  test('a second gateway on the same DATA_DIR is refused with one line and exit code 1 while the first runs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-lock-'));
    const [port1, port2] = [await freePort(), await freePort()];
    const first = launchNode(embeddedEnv(dataDir, port1));
    await waitForHealth(first, port1);

    const second = launchNode(embeddedEnv(dataDir, port2));
    const exit = await exitWithin(second, 60_000);
    assert.deepEqual(exit, { code: 1, signal: null }, `the second gateway must refuse to start; stdout: ${second.stdout()}`);
    assert.equal(
      second.stderr().trim(),
      `configuration error: DATA_DIR ${dataDir} is in use by another gateway process (pid ${first.pid})`,
      'one line naming DATA_DIR and the holder',
    );
    assert.equal(await accepts(port2), false, 'the refused gateway never listened');
    assert.equal(await healthy(port1), true, 'the first gateway still serves');

    process.kill(first.pid, 'SIGTERM');
    assert.deepEqual(await exitWithin(first, 20_000), { code: 0, signal: null });
  });

  test('after kill -9 of the holder, a new gateway starts without manual clean-up', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-lock-'));
    const [port1, port2] = [await freePort(), await freePort()];
    const first = launchNode(embeddedEnv(dataDir, port1));
    await waitForHealth(first, port1);
    process.kill(-first.pid, 'SIGKILL');
    assert.deepEqual(await exitWithin(first, 10_000), { code: null, signal: 'SIGKILL' });
    assert.ok(existsSync(lockFile(dataDir)), 'the crashed gateway left its lock behind (the case under test)');

    const second = launchNode(embeddedEnv(dataDir, port2));
    await waitForHealth(second, port2);
    process.kill(second.pid, 'SIGTERM');
    assert.deepEqual(await exitWithin(second, 20_000), { code: 0, signal: null });
  });

  test('after a clean stop the lock is released and a new gateway starts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-lock-'));
    const [port1, port2] = [await freePort(), await freePort()];
    const first = launchNode(embeddedEnv(dataDir, port1));
    await waitForHealth(first, port1);
    assert.ok(existsSync(lockFile(dataDir)), 'held while it runs');
    process.kill(first.pid, 'SIGTERM');
    assert.deepEqual(await exitWithin(first, 20_000), { code: 0, signal: null });
    assert.equal(existsSync(lockFile(dataDir)), false, 'released by the clean stop');

    const second = launchNode(embeddedEnv(dataDir, port2));
    await waitForHealth(second, port2);
    process.kill(second.pid, 'SIGTERM');
    assert.deepEqual(await exitWithin(second, 20_000), { code: 0, signal: null });
  });

  // The lock's liveness rules, in this process (no gateway needed).
  const isInUse = (e: unknown) => e instanceof ConfigError && /is in use by another gateway process/.test(e.message);
  const stale = (dataDir: string, holder: Record<string, unknown>) => writeFileSync(lockFile(dataDir), JSON.stringify(holder));
  /** Field 22 of /proc/<pid>/stat (Linux): when the process started. */
  const startOf = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  };

  test('the same DATA_DIR twice in one process: refused', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-lock-'));
    const lock = await lockDataDir(dataDir);
    try {
      await assert.rejects(lockDataDir(dataDir), isInUse);
    } finally {
      lock.release();
    }
    const again = await lockDataDir(dataDir);
    again.release();
  });

  test('a lock whose pid now belongs to another process (pid reuse) is taken over', {
    skip: !existsSync('/proc/self/stat') && 'needs /proc',
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-lock-'));
    // The parent is alive, but started at another time than the lock says: not the process that wrote it.
    stale(dataDir, { pid: process.ppid, host: hostname(), start: '1', token: 'x' });
    const lock = await lockDataDir(dataDir);
    lock.release();
    stale(dataDir, { pid: process.ppid, host: hostname(), start: startOf(process.ppid), token: 'x' });
    await assert.rejects(lockDataDir(dataDir), isInUse, 'the same pid and start time: that process holds it');
  });

  test('a lock of a dead pid, or garbage, is taken over', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-lock-'));
    const dead = launch(process.execPath, ['-e', '0'], {});
    await exitWithin(dead, 10_000);
    stale(dataDir, { pid: dead.pid, host: hostname(), start: null, token: 'x' });
    (await lockDataDir(dataDir)).release();
    writeFileSync(lockFile(dataDir), 'not json');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockFile(dataDir), old, old);
    (await lockDataDir(dataDir)).release();
  });

  test("another host's lock: held while its heartbeat is fresh, taken over once it is stale", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-lock-'));
    stale(dataDir, { pid: 4242, host: 'elsewhere', start: null, token: 'x' });
    await assert.rejects(lockDataDir(dataDir), (e: unknown) => isInUse(e) && /\(pid 4242 on host elsewhere\)/.test((e as Error).message));
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockFile(dataDir), old, old);
    (await lockDataDir(dataDir)).release();
  });
});
