// pgBackRest backup and point-in-time restore of the whole local cluster (see scripts/cluster.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { BIN_DIR, leaderNode, log, mkdirPg, postmasterPid, run, SCOPE, STANZA, sleep, waitFor, wipeDcs } from './lib.mjs';
import { ensureStanza, startEtcd, startPatroni, stopPatroni } from './nodes.mjs';

const backrest = (n, args, timeoutS) => run('pgbackrest', [`--config=${n.backrestConf}`, `--stanza=${STANZA}`, ...args], { asPg: true, timeoutS });

/** `pgbackrest --type=full|diff backup` with the current leader's configuration; returns the label. */
export async function backup(s, type) {
  if (!['full', 'diff', 'incr'].includes(type)) throw new Error(`backup type must be full, diff or incr, not ${type}`);
  const leader = await waitFor(() => leaderNode(s), 10, 'a running leader (is the cluster started?)');
  ensureStanza(s, leader);
  log(`pgbackrest --type=${type} backup on ${leader.name}`);
  backrest(leader, [`--type=${type}`, 'backup'], 3600);
  const info = JSON.parse(backrest(leader, ['--output=json', 'info'], 60).stdout);
  return info[0].backup.at(-1).label;
}

/**
 * Point-in-time recovery of the whole cluster to `target` (a timestamp postgres accepts):
 * 1. push the current WAL to the archive (pgbackrest check) if a leader is up;
 * 2. stop every Patroni node (etcd keeps running);
 * 3. pgbackrest --delta --type=time --target=... --target-action=promote restore into node1;
 * 4. run that postgres by hand (not under Patroni, which would strip recovery_target_* from
 *    postgresql.auto.conf) until it has replayed to the target and promoted; stop it cleanly;
 * 5. delete the cluster's state in etcd, so Patroni starts a fresh cluster from node1's data;
 * 6. start node1 first (it becomes leader on a new timeline), empty node2/node3's data dirs;
 *    the caller then starts them and Patroni re-clones them from node1 (pg_basebackup).
 */
export async function restore(s, target, timeline) {
  if (!target) throw new Error('usage: cluster restore --target "2025-01-31 12:34:56+00" [--target-timeline N]');
  const [first, ...others] = s.nodes;
  const leader = await leaderNode(s);
  if (leader) {
    log(`archiving current WAL from ${leader.name} (pgbackrest check)`);
    const r = run('pgbackrest', [`--config=${leader.backrestConf}`, `--stanza=${STANZA}`, 'check'], {
      asPg: true,
      timeoutS: 120,
      check: false,
    });
    if (r.status !== 0) log(`warning: pgbackrest check failed, the newest WAL may be missing: ${r.stderr.trim()}`);
  }
  await stopPatroni(s);
  await startEtcd(s);

  for (const n of s.nodes) if (!postmasterPid(n.data)) fs.rmSync(path.join(n.data, 'postmaster.pid'), { force: true });
  mkdirPg(first.data);
  log(`pgbackrest restore into ${first.name} to ${target}`);
  const tl = timeline ? [`--target-timeline=${timeline}`] : []; // default: latest
  backrest(first, ['--delta', '--type=time', `--target=${target}`, ...tl, '--target-action=promote', 'restore'], 3600);

  // The restored postgresql.conf is the one Patroni wrote on the node that was backed up: point
  // the node-specific settings at node1 and drop the synchronous standby it no longer has.
  const opts = [
    `-c port=${first.pgPort}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${first.dir}`,
    `-c hba_file=${first.data}/pg_hba.conf`,
    `-c ident_file=${first.data}/pg_ident.conf`,
    '-c synchronous_standby_names=',
    '-c primary_conninfo=',
  ].join(' ');
  const pgEnv = { PGBACKREST_CONFIG: first.backrestConf };
  const pgLog = path.join(first.dir, 'restore-postgres.log');
  const pgCtl = (args, timeoutS) => run(`${BIN_DIR}/pg_ctl`, ['-D', first.data, ...args], { asPg: true, env: pgEnv, timeoutS });
  log(`replaying WAL on ${first.name} (log: ${pgLog})`);
  pgCtl(['-l', pgLog, '-o', opts, '-W', 'start'], 60);
  const promoted = () => {
    if (!postmasterPid(first.data)) {
      const hint = /before configured recovery target/.test(tail(pgLog))
        ? '\nThe archived WAL of that timeline ends before the target: pick an earlier time, or pass' +
          ' --target-timeline N (timelines: ls <repo>/archive/gateway/*/*.history).'
        : '';
      throw new Error(`recovery failed, see ${pgLog}:\n${tail(pgLog, 8)}${hint}`);
    }
    const r = run(`${BIN_DIR}/psql`, ['-XAt', '-h', first.dir, '-p', String(first.pgPort), '-U', 'postgres', '-c', 'SELECT pg_is_in_recovery()'], {
      timeoutS: 10,
      check: false,
    });
    return r.stdout.trim() === 'f';
  };
  await waitFor(async () => postmasterPid(first.data), 30, 'the restored postmaster to start');
  const deadline = Date.now() + 1800 * 1000;
  while (!promoted()) {
    if (Date.now() > deadline) throw new Error(`recovery did not finish, see ${pgLog}`);
    await sleep(500);
  }
  log(`${first.name} recovered to ${target} and promoted; stopping it`);
  pgCtl(['-m', 'fast', '-t', '120', '-w', 'stop'], 130);

  log(`deleting /service/${SCOPE} from etcd`);
  await wipeDcs(s);
  for (const n of others) fs.rmSync(n.data, { recursive: true, force: true });
  startPatroni(s, [first]);
  await waitFor(async () => (await leaderNode(s))?.name === first.name, 90, `${first.name} to lead`);
  log(`${first.name} is leader; starting the other nodes, which re-clone from it`);
}

function tail(file, lines = 20) {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
