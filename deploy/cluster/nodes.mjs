// Starting/stopping the etcd members and Patroni nodes of the local cluster (see scripts/cluster.mjs).
import fs from 'node:fs';
import path from 'node:path';
import {
  BIN_DIR,
  clusterView,
  DB_NAME,
  daemon,
  etcdHealthy,
  http,
  isUp,
  livePid,
  log,
  mkdirPg,
  postmasterPid,
  psql,
  render,
  run,
  SCOPE,
  STANZA,
  terminate,
  waitFor,
} from './lib.mjs';

const BINARIES = ['/usr/bin/patroni', '/usr/bin/patronictl', '/usr/bin/etcd', '/usr/bin/etcdctl', '/usr/bin/pgbackrest'];
const PACKAGES = ['patroni', 'etcd-server', 'etcd-client', 'pgbackrest'];

/** apt-get install what is missing (needs root; CI runs as root). */
export function ensureInstalled() {
  const missing = BINARIES.filter((b) => !fs.existsSync(b));
  const pkgs = missing.length ? [...PACKAGES] : [];
  if (!fs.existsSync(`${BIN_DIR}/postgres`)) pkgs.push('postgresql-15');
  if (!pkgs.length) return;
  if (process.getuid() !== 0) throw new Error(`missing ${missing.join(' ')}; as root: apt-get install -y ${pkgs.join(' ')}`);
  log(`installing ${pkgs.join(' ')}`);
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  const r = run('apt-get', ['install', '-y', ...pkgs], { timeoutS: 600, env, check: false });
  if (r.status !== 0) {
    run('apt-get', ['update'], { timeoutS: 300, env });
    run('apt-get', ['install', '-y', ...pkgs], { timeoutS: 600, env });
  }
}

/** Create the folders (owned by postgres) and render every node's configuration from the templates. */
export function prepare(s) {
  for (const d of [s.dir, s.run, s.repo]) mkdirPg(d);
  const etcdHosts = s.nodes.map((n) => `127.0.0.1:${n.etcd.client}`).join(',');
  const initialCluster = s.nodes.map((n) => `${n.etcd.name}=http://127.0.0.1:${n.etcd.peer}`).join(',');
  for (const n of s.nodes) {
    for (const d of [n.dir, n.etcd.dir, path.join(n.dir, 'pgbackrest')]) mkdirPg(d);
    for (const d of ['log', 'lock', 'spool']) mkdirPg(path.join(n.dir, 'pgbackrest', d));
    const vars = {
      SCOPE,
      STANZA,
      NAME: n.name,
      NODE_DIR: n.dir,
      DATA_DIR: n.data,
      BIN_DIR,
      PG_PORT: n.pgPort,
      REST_PORT: n.restPort,
      ETCD_HOSTS: etcdHosts,
      REPO_DIR: s.repo,
      PORT_BASE: s.base,
      ETCD_NAME: n.etcd.name,
      ETCD_DATA_DIR: path.join(n.etcd.dir, 'data'),
      ETCD_CLIENT_PORT: n.etcd.client,
      ETCD_PEER_PORT: n.etcd.peer,
      ETCD_INITIAL_CLUSTER: initialCluster,
    };
    render('patroni.yml.tmpl', n.yml, vars);
    render('pgbackrest.conf.tmpl', n.backrestConf, vars);
    render('etcd.yml.tmpl', n.etcd.conf, vars);
  }
}

const etcdPidFile = (s, n) => path.join(s.run, `${n.etcd.name}.pid`);
const patroniPidFile = (s, n) => path.join(s.run, `${n.name}.patroni.pid`);
export const etcdPid = (s, n) => livePid(etcdPidFile(s, n), n.etcd.conf);
export const patroniPid = (s, n) => livePid(patroniPidFile(s, n), n.yml);

/** Start every etcd member that is not running; wait until all three report healthy. */
export async function startEtcd(s) {
  for (const n of s.nodes.filter((x) => !etcdPid(s, x))) {
    log(`starting ${n.etcd.name} (client ${n.etcd.client}, peer ${n.etcd.peer})`);
    daemon('/usr/bin/etcd', ['--config-file', n.etcd.conf], {
      logFile: path.join(n.etcd.dir, 'etcd.log'),
      pidFile: etcdPidFile(s, n),
      cwd: n.etcd.dir,
    });
  }
  await waitFor(async () => (await Promise.all(s.nodes.map(etcdHealthy))).every(Boolean), 30, 'etcd quorum');
}

/** Start Patroni (which starts postgres) on the given nodes where it is not running. */
export function startPatroni(s, nodes = s.nodes) {
  const started = [];
  for (const n of nodes.filter((x) => !patroniPid(s, x))) {
    log(`starting patroni ${n.name} (postgres ${n.pgPort}, REST ${n.restPort})`);
    daemon('/usr/bin/patroni', [n.yml], {
      logFile: path.join(n.dir, 'patroni.log'),
      pidFile: patroniPidFile(s, n),
      cwd: n.dir,
      env: { PGBACKREST_CONFIG: n.backrestConf, PATH: `${BIN_DIR}:${process.env.PATH}` },
    });
    started.push(n.name);
  }
  return started;
}

/** Stop Patroni on every node, replicas first and the leader last (no needless failover). */
export async function stopPatroni(s) {
  const view = await clusterView(s);
  const leader = view?.members.find((m) => m.role === 'leader')?.name;
  const order = [s.nodes.filter((n) => n.name !== leader), s.nodes.filter((n) => n.name === leader)];
  for (const group of order) {
    const procs = group.map((n) => ({ pid: patroniPid(s, n), marker: n.yml })).filter((p) => p.pid);
    if (procs.length) log(`stopping patroni ${group.map((n) => n.name).join(' ')}`);
    await terminate(procs, { timeoutS: 30, what: 'patroni' });
  }
  // A postgres whose patroni was killed keeps running: fast shutdown, then kill -9.
  const pms = s.nodes.map((n) => ({ pid: postmasterPid(n.data), marker: n.data })).filter((p) => p.pid);
  if (pms.length) log(`stopping orphaned postgres ${pms.map((p) => p.pid).join(' ')}`);
  await terminate(pms, { sig: 'SIGINT', timeoutS: 20, what: 'postgres' });
}

/** Stop the etcd members, followers first: a stopping Raft leader first tries to hand over leadership. */
export async function stopEtcd(s) {
  const isLeader = async (n) =>
    (await http(`http://127.0.0.1:${n.etcd.client}/v2/stats/self`, { timeoutMs: 1000 }).catch(() => null))?.json?.state === 'StateLeader';
  const leaders = await Promise.all(s.nodes.map(isLeader));
  for (const group of [s.nodes.filter((_, i) => !leaders[i]), s.nodes.filter((_, i) => leaders[i])]) {
    const procs = group.map((n) => ({ pid: etcdPid(s, n), marker: n.etcd.conf })).filter((p) => p.pid);
    if (procs.length) log(`stopping ${group.map((n) => n.etcd.name).join(' ')}`);
    await terminate(procs, { timeoutS: 15, what: 'etcd' });
  }
}

/** The node's own Patroni (not the DCS, which lists a killed node until its key expires): {state, role, …} or null. */
async function self(n) {
  const r = await http(`http://127.0.0.1:${n.restPort}/patroni`, { timeoutMs: 1500 }).catch(() => null);
  return r?.json?.state === 'running' ? r.json : null;
}

/** Wait for a running leader and a running synchronous standby (writes block without one), each confirmed by its own Patroni. */
export async function waitReady(s, timeoutS) {
  return waitFor(
    async () => {
      const v = await clusterView(s);
      const byRole = (role) => s.nodes.find((n) => v?.members.some((m) => m.name === n.name && m.role === role && isUp(m)));
      const [leader, sync] = [byRole('leader'), byRole('sync_standby')];
      if (!leader || !sync || !['master', 'primary'].includes((await self(leader))?.role)) return null;
      return (await self(sync)) ? leader : null;
    },
    timeoutS,
    'a leader and a synchronous standby',
  );
}

/** Wait (bounded, warn only) until every node's Patroni reports its postgres running. */
export async function waitAllMembers(s, timeoutS) {
  try {
    await waitFor(async () => (await Promise.all(s.nodes.map(self))).every(Boolean), Math.max(timeoutS, 1), 'all three nodes to be running');
  } catch (e) {
    log(`warning: ${e.message}; see ${s.dir}/node*/patroni.log`);
  }
}

/** pgBackRest stanza-create, once per CLUSTER_DIR, on the leader. */
export function ensureStanza(s, leader) {
  const marker = path.join(s.repo, '.stanza-created');
  if (fs.existsSync(marker)) return;
  log(`pgbackrest stanza-create on ${leader.name}`);
  run('pgbackrest', [`--config=${leader.backrestConf}`, `--stanza=${STANZA}`, 'stanza-create'], {
    asPg: true,
    timeoutS: 120,
  });
  fs.writeFileSync(marker, `${new Date().toISOString()}\n`);
}

/** CREATE DATABASE gateway on the leader if it does not exist (commits only once a sync standby has it). */
export async function ensureDatabase(leader) {
  const exists = await waitFor(
    async () => psql(leader.pgPort, `SELECT count(*) FROM pg_database WHERE datname = '${DB_NAME}'`, { check: false }),
    30,
    `${leader.name} to answer`,
  );
  if (exists === '1') return;
  log(`creating database ${DB_NAME} on ${leader.name}`);
  psql(leader.pgPort, `CREATE DATABASE ${DB_NAME}`, { timeoutS: 60 });
}
