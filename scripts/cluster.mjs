#!/usr/bin/env node
// Local three-node PostgreSQL 15 cluster under Patroni + etcd (Debian packages), for development
// and failover tests. The configuration is rendered from deploy/cluster/*.tmpl, which also serve
// as the reference for a three-machine deployment (see deploy/cluster/README.md).
//
//   npm run cluster -- start            start what is not running; print DATABASE_URL=... on stdout
//   npm run cluster -- stop             stop patroni, postgres and etcd
//   npm run cluster -- status           one line per node: name role host:port [state tl= lag=]
//                                       (role: leader, sync_standby, replica, stopped, unknown)
//   npm run cluster -- backup [full|diff]   pgBackRest backup on the leader; prints the label
//   npm run cluster -- restore --target "2025-01-31 12:34:56+00" [--target-timeline N]
//                                       point-in-time recovery of the whole cluster
//
// Environment: CLUSTER_DIR (default /var/tmp/gateway-cluster), CLUSTER_PORT_BASE (default 15432:
// postgres on base..base+2, Patroni REST base+10.., etcd client base+20.., etcd peer base+30..),
// CLUSTER_START_TIMEOUT seconds (default 90). Run as root (processes then run as `postgres`) or
// as the postgres user. Progress goes to stderr; stdout carries only the results.
import { backup, restore } from '../deploy/cluster/backup.mjs';
import { clusterView, databaseUrl, etcdHealthy, log, settings, sweep } from '../deploy/cluster/lib.mjs';
import {
  ensureDatabase,
  ensureInstalled,
  ensureStanza,
  etcdPid,
  patroniPid,
  prepare,
  startEtcd,
  startPatroni,
  stopEtcd,
  stopPatroni,
  waitAllMembers,
  waitReady,
} from '../deploy/cluster/nodes.mjs';

async function start(s) {
  const t0 = Date.now();
  const left = () => s.timeoutS - (Date.now() - t0) / 1000;
  ensureInstalled();
  prepare(s);
  await startEtcd(s);
  const started = startPatroni(s);
  if (!started.length) log('all patroni nodes already running');
  const leader = await waitReady(s, left());
  log(`leader is ${leader.name} (${Math.round((Date.now() - t0) / 1000)}s)`);
  ensureStanza(s, leader);
  await ensureDatabase(leader);
  await waitAllMembers(s, left());
  log(`cluster up in ${Math.round((Date.now() - t0) / 1000)}s`);
  process.stdout.write(`${databaseUrl(s)}\n`);
}

async function stop(s) {
  await stopPatroni(s);
  await stopEtcd(s);
  sweep(s.dir);
  log('stopped');
}

async function status(s) {
  const view = await clusterView(s);
  const etcd = await Promise.all(s.nodes.map((n) => etcdHealthy(n).catch(() => false)));
  for (const [i, n] of s.nodes.entries()) {
    // stopped: no Patroni process; unknown: Patroni runs but is not (yet) a member of the cluster's view
    const running = patroniPid(s, n);
    const m = running ? view?.members.find((x) => x.name === n.name) : null;
    const role = m ? m.role : running ? 'unknown' : 'stopped';
    const extra = m ? ` ${m.state} tl=${m.timeline ?? '?'}${m.lag !== undefined ? ` lag=${m.lag}` : ''}` : '';
    process.stdout.write(`${n.name} ${role} 127.0.0.1:${n.pgPort}${extra}\n`);
    log(`${n.etcd.name} ${etcdPid(s, n) ? (etcd[i] ? 'healthy' : 'unhealthy') : 'stopped'} 127.0.0.1:${n.etcd.client}`);
  }
}

/** `--name value` or `--name=value` */
function option(args, name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

async function main(argv) {
  const [cmd, ...rest] = argv;
  const s = settings();
  switch (cmd) {
    case 'start':
      return start(s);
    case 'stop':
      return stop(s);
    case 'status':
      return status(s);
    case 'backup': {
      const label = await backup(s, rest[0] ?? 'full');
      process.stdout.write(`${label}\n`);
      return;
    }
    case 'restore': {
      prepare(s);
      await restore(s, option(rest, '--target'), option(rest, '--target-timeline'));
      return start(s);
    }
    default:
      process.stderr.write('usage: npm run cluster -- start|stop|status|backup [full|diff]|restore --target TIME\n');
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((e) => {
  log(`error: ${e.message}`);
  process.exitCode = 1;
});
