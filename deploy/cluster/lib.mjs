// Helpers for scripts/cluster.mjs: settings, template rendering, running things as the
// `postgres` OS user, daemons with pid files, bounded waits, and the Patroni/etcd HTTP APIs.
// Plain Node ESM, no dependencies. Every child process and every wait has a timeout.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SCOPE = 'gateway'; // Patroni scope, etcd namespace /service/gateway
export const STANZA = 'gateway'; // pgBackRest stanza
export const DB_NAME = 'gateway'; // database created once for the gateway
export const BIN_DIR = '/usr/lib/postgresql/15/bin';

export const log = (...a) => process.stderr.write(`cluster: ${a.join(' ')}\n`);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Paths and ports. Postgres on base+0..2, Patroni REST on base+10..12, etcd client/peer on base+20../30.. */
export function settings(env = process.env) {
  const dir = path.resolve(env.CLUSTER_DIR || '/var/tmp/gateway-cluster');
  const base = Number(env.CLUSTER_PORT_BASE || 15432);
  if (!Number.isInteger(base) || base < 1024 || base > 65500) throw new Error(`bad CLUSTER_PORT_BASE ${base}`);
  if (/[\s'"\\]/.test(dir)) throw new Error(`CLUSTER_DIR must not contain spaces or quotes: ${dir}`);
  const nodes = [0, 1, 2].map((i) => {
    const nodeDir = path.join(dir, `node${i + 1}`);
    return {
      name: `node${i + 1}`,
      dir: nodeDir,
      data: path.join(nodeDir, 'data'),
      yml: path.join(nodeDir, 'patroni.yml'),
      backrestConf: path.join(nodeDir, 'pgbackrest.conf'),
      pgPort: base + i,
      restPort: base + 10 + i,
      etcd: {
        name: `etcd${i + 1}`,
        dir: path.join(dir, `etcd${i + 1}`),
        conf: path.join(dir, `etcd${i + 1}`, 'etcd.yml'),
        client: base + 20 + i,
        peer: base + 30 + i,
      },
    };
  });
  const timeoutS = Number(env.CLUSTER_START_TIMEOUT || 90);
  return { dir, base, nodes, repo: path.join(dir, 'backrest-repo'), run: path.join(dir, 'run'), timeoutS };
}

export function databaseUrl(s) {
  const hosts = s.nodes.map((n) => `127.0.0.1:${n.pgPort}`).join(',');
  return `DATABASE_URL=postgres://postgres@${hosts}/${DB_NAME}?target_session_attrs=read-write`;
}

// ---- running as postgres --------------------------------------------------------------

/** uid/gid options for child_process: the postgres user when we are root, else ourselves. */
export function pgUser() {
  if (process.getuid() !== 0) return {};
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('no postgres OS user (apt-get install postgresql-15 creates it)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Run a command synchronously with a timeout; returns {status, stdout, stderr}; throws if check and it failed. */
export function run(cmd, args, { timeoutS = 60, asPg = false, env = {}, check = true, input } = {}) {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    timeout: timeoutS * 1000,
    killSignal: 'SIGKILL',
    env: { ...process.env, ...env },
    input,
    ...(asPg ? pgUser() : {}),
  });
  const out = { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  if (check && (r.error || r.status !== 0)) {
    const why = r.error ? r.error.message : `exit ${r.status ?? r.signal}`;
    throw new Error(`${cmd} ${args.join(' ')}: ${why}\n${out.stderr.trim()}${out.stdout.trim()}`);
  }
  return out;
}

/** psql against one node (TCP, trust); returns trimmed unaligned output. */
export function psql(port, sql, { db = 'postgres', timeoutS = 30, check = true } = {}) {
  const args = ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres'];
  const r = run(`${BIN_DIR}/psql`, [...args, '-d', db, '-c', sql], { timeoutS, check, env: { PGCONNECT_TIMEOUT: '3' } });
  return r.status === 0 ? r.stdout.trim() : null;
}

export function mkdirPg(dir, mode = 0o700) {
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
  if (!fs.existsSync(dir)) fs.mkdirSync(dir, { mode });
  const { uid, gid } = pgUser();
  if (uid !== undefined) fs.chownSync(dir, uid, gid);
}

/** Render deploy/cluster/<name>.tmpl with {{KEY}} -> vars[KEY] into dest (owned by postgres). */
export function render(name, dest, vars) {
  const text = fs.readFileSync(path.join(HERE, name), 'utf8').replace(/\{\{(\w+)\}\}/g, (m, k) => {
    if (!(k in vars)) throw new Error(`${name}: no value for ${m}`);
    return String(vars[k]);
  });
  fs.writeFileSync(dest, text, { mode: 0o600 });
  const { uid, gid } = pgUser();
  if (uid !== undefined) fs.chownSync(dest, uid, gid);
}

// ---- processes ---------------------------------------------------------------------------

const cmdline = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
};

/** pid from a pid file if that process is alive and its command line contains `marker`. */
export function livePid(pidFile, marker) {
  let pid;
  try {
    pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8'), 10);
  } catch {
    return null;
  }
  return pid > 0 && cmdline(pid).includes(marker) ? pid : null;
}

/** The postmaster of a data dir, if running. */
export const postmasterPid = (data) => livePid(path.join(data, 'postmaster.pid'), data);

/** Start a long-running daemon as postgres, detached, output appended to logFile, pid in pidFile. */
export function daemon(cmd, args, { logFile, pidFile, env = {}, cwd }) {
  const fd = fs.openSync(logFile, 'a', 0o600);
  const { uid, gid } = pgUser();
  if (uid !== undefined) fs.fchownSync(fd, uid, gid);
  const child = spawn(cmd, args, {
    cwd,
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, HOME: cwd, ...env },
    uid,
    gid,
  });
  fs.closeSync(fd);
  child.unref();
  fs.writeFileSync(pidFile, `${child.pid}\n`);
  return child.pid;
}

export const signal = (pid, sig) => {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
};

const gone = (pid, marker) => !cmdline(pid).includes(marker);

/** SIGCONT + `sig`, wait up to timeoutS for every pid to exit, then SIGKILL the rest. */
export async function terminate(procs, { sig = 'SIGTERM', timeoutS = 30, what = 'processes' } = {}) {
  for (const { pid } of procs) signal(pid, 'SIGCONT') && signal(pid, sig);
  const deadline = Date.now() + timeoutS * 1000;
  while (Date.now() < deadline && !procs.every((p) => gone(p.pid, p.marker))) await sleep(200);
  const left = procs.filter((p) => !gone(p.pid, p.marker));
  if (left.length) log(`${what} still running after ${timeoutS}s, kill -9 ${left.map((p) => p.pid).join(' ')}`);
  for (const { pid } of left) signal(pid, 'SIGKILL');
}

const DAEMONS = ['patroni', 'postgres', 'etcd', 'pgbackrest', 'pg_ctl'];

/** kill -9 anything left whose command line mentions our dir and is patroni/postgres/etcd/pgbackrest. */
export function sweep(dir) {
  const mine = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    const c = cmdline(pid);
    // the program (argv[0], or argv[1] for `python3 /usr/bin/patroni`), so that e.g. a `tail -f` of a log survives
    const prog = c.split(' ', 2).map((a) => path.basename(a));
    if (Number(pid) !== process.pid && c.includes(`${dir}/`) && prog.some((p) => DAEMONS.includes(p))) mine.push(Number(pid));
  }
  if (mine.length) log(`kill -9 leftovers ${mine.join(' ')}`);
  for (const pid of mine) signal(pid, 'SIGKILL');
}

// ---- waits and HTTP ----------------------------------------------------------------------

/** Poll async fn every intervalMs until it returns a truthy value; throw after timeoutS. */
export async function waitFor(fn, timeoutS, what, intervalMs = 500) {
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutS)}s waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export async function http(url, { method = 'GET', timeoutMs = 2000 } = {}) {
  const res = await fetch(url, { method, signal: AbortSignal.timeout(timeoutMs) });
  const body = await res.text();
  return { status: res.status, json: body ? JSON.parse(body) : null };
}

/** Patroni's view of the cluster ({members:[{name, role, state, ...}]}) from the first node that answers. */
export async function clusterView(s) {
  for (const n of s.nodes) {
    try {
      const r = await http(`http://127.0.0.1:${n.restPort}/cluster`, { timeoutMs: 1500 });
      if (r.status === 200 && r.json?.members) return r.json;
    } catch {}
  }
  return null;
}

export const isUp = (m) => m && ['running', 'streaming'].includes(m.state);

/** The running leader's node, or null. */
export async function leaderNode(s) {
  const view = await clusterView(s);
  const m = view?.members.find((x) => x.role === 'leader' && isUp(x));
  return m ? s.nodes.find((n) => n.name === m.name) : null;
}

/** etcd member answers /health with health "true". */
export async function etcdHealthy(n) {
  const r = await http(`http://127.0.0.1:${n.etcd.client}/health`, { timeoutMs: 1500 });
  return r.json?.health === 'true';
}

/** Delete Patroni's state for this scope (leader, members, initialize key, config) from etcd (v2). */
export async function wipeDcs(s) {
  for (const n of s.nodes) {
    try {
      const url = `http://127.0.0.1:${n.etcd.client}/v2/keys/service/${SCOPE}?recursive=true`;
      const r = await http(url, { method: 'DELETE', timeoutMs: 5000 });
      if (r.status === 200 || r.status === 404) return;
    } catch {}
  }
  throw new Error('could not delete /service/gateway from etcd');
}
