// The three-node cluster of `npm run cluster` (Patroni, etcd, synchronous replication) for the bench:
// started in a folder of its own under /var/tmp on ports of its own, so that a developer's cluster
// (CLUSTER_PORT_BASE 15432 by default) is never touched, and stopped and removed at the end. Beside
// it, the CPU time of each node's PostgreSQL processes and of Patroni and etcd, read from /proc.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { delimiter, join } from 'node:path';

const clock_ticks_per_second = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
const script = new URL('../scripts/cluster.mjs', import.meta.url).pathname;

const onPath = (bin: string) => (process.env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, bin)));

/** Why the cluster figures cannot run here, or null when they can (BENCH_CLUSTER=0 turns them off). */
export function clusterSkipReason(): string | null {
  if (process.env.BENCH_CLUSTER === '0') return 'BENCH_CLUSTER=0';
  const missing = ['patroni', 'etcd', 'pgbackrest'].filter((b) => !onPath(b));
  if (missing.length) return `${missing.join(', ')} not on PATH (as root: apt-get install -y patroni etcd-server etcd-client pgbackrest)`;
  if (!existsSync('/usr/lib/postgresql/15/bin/postgres')) return 'no PostgreSQL 15 server binaries (/usr/lib/postgresql/15/bin)';
  if (process.getuid?.() !== 0 && userInfo().username !== 'postgres') return 'the cluster runs as root (nodes as postgres) or as the postgres user';
  return null;
}

interface Proc {
  ppid: number;
  /** user + system, and what it reaped from children that ended, in clock ticks */
  ticks: number;
  /** user + system alone */
  self: number;
}

/** Every process's parent and CPU ticks, from /proc. */
function processes(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // Fields after "(comm)": state, ppid, …; utime, stime, cutime, cstime are the 14th to 17th of the line.
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    out.set(Number(name), { ppid: f[1]!, ticks: f[11]! + f[12]! + f[13]! + f[14]!, self: f[11]! + f[12]! });
  }
  return out;
}

/** CPU of `roots` and their direct children (a postmaster and its backends, a daemon), in µs. */
function treeUs(procs: Map<number, Proc>, roots: number[]): number {
  const set = new Set(roots.filter((p) => procs.has(p)));
  let ticks = 0;
  for (const [pid, p] of procs) if (set.has(pid) || set.has(p.ppid)) ticks += p.ticks;
  return (ticks * 1_000_000) / clock_ticks_per_second;
}

const pidIn = (file: string): number | null => {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n', 1)[0]!.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
};

/** The database a PostgreSQL process works in, from its title (a client backend's, an autovacuum worker's); null for the others. */
function databaseOf(pid: number): string | null {
  let title: string;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return null;
  }
  const rest = title.replace(/^postgres: [^:]*: /, '');
  const worker = /^autovacuum worker (\S+)/.exec(rest);
  if (worker) return worker[1]!;
  const backend = /^(\S+) (\S+) (?:\S+\(\d+\)|\[local\])/.exec(rest);
  return backend && backend[1] !== 'walsender' ? backend[2]! : null;
}

/**
 * CPU of a shared PostgreSQL server as far as one database's work goes, in µs: the postmaster's own
 * time, its background processes (WAL writer, checkpointer, …), and the backends and autovacuum
 * workers of `database`; not the other databases' processes, nor what the postmaster reaped from
 * processes that ended (on a server that others use, mostly theirs). Null when unreadable.
 */
export function sharedServerCpuUs(dataDir: string, database: string): number | null {
  const postmaster = pidIn(join(dataDir, 'postmaster.pid'));
  const procs = processes();
  const own = postmaster ? procs.get(postmaster) : undefined;
  if (!postmaster || !own) return null;
  let ticks = own.self;
  for (const [pid, p] of procs) {
    if (p.ppid !== postmaster) continue;
    const db = databaseOf(pid);
    if (db === null || db === database) ticks += p.ticks;
  }
  return (ticks * 1_000_000) / clock_ticks_per_second;
}

export interface ClusterCpu {
  /** the leader's PostgreSQL processes */
  primary: number;
  /** the two standbys' (the synchronous one and the asynchronous one) */
  standbys: number;
  /** Patroni's three processes and etcd's three members */
  daemons: number;
}

export class BenchCluster {
  /** The DATABASE_URL that `npm run cluster -- start` printed: the three nodes, target_session_attrs=read-write. */
  url = '';
  private leader = 'node1';

  private constructor(
    readonly dir: string,
    readonly portBase: number,
  ) {}

  /** A fresh cluster in a new folder under /var/tmp on BENCH_CLUSTER_PORT_BASE (default 22432, below the ephemeral ports); stopped and removed if it fails to start. */
  static async start(): Promise<BenchCluster> {
    const dir = mkdtempSync('/var/tmp/gw-bench-cluster-');
    chmodSync(dir, 0o755); // the nodes run as postgres and must reach their folders
    const cluster = new BenchCluster(dir, Number(process.env.BENCH_CLUSTER_PORT_BASE ?? 22432));
    try {
      const line = (await cluster.command(['start'])).split('\n').find((l) => l.startsWith('DATABASE_URL='));
      if (!line) throw new Error('npm run cluster -- start printed no DATABASE_URL');
      cluster.url = line.slice('DATABASE_URL='.length);
      await cluster.findLeader();
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  private command(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [script, ...args],
        { env: { ...process.env, CLUSTER_DIR: this.dir, CLUSTER_PORT_BASE: String(this.portBase) }, timeout: 240_000, maxBuffer: 16 << 20 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`cluster ${args.join(' ')}: ${error.message}\n${stderr.slice(-2000)}`)) : resolve(stdout),
      );
    });
  }

  /** Patroni's members: name → role (leader, sync_standby, replica). */
  async roles(): Promise<Record<string, string>> {
    for (let i = 0; i < 3; i++) {
      try {
        const res = await fetch(`http://127.0.0.1:${this.portBase + 10 + i}/cluster`, { signal: AbortSignal.timeout(1_500) });
        if (res.ok)
          return Object.fromEntries(((await res.json()) as { members: { name: string; role: string }[] }).members.map((m) => [m.name, m.role]));
      } catch {
        // ask the next node
      }
    }
    return {};
  }

  private async findLeader(): Promise<void> {
    const leader = Object.entries(await this.roles()).find(([, role]) => role === 'leader')?.[0];
    if (leader) this.leader = leader;
  }

  /** A URL of the leader alone (pg reads one host only): for the statistics of its database. */
  async leaderUrl(): Promise<string> {
    await this.findLeader();
    const url = new URL(this.url.replace(/@[^/]*\//, `@127.0.0.1:${this.portBase + Number(this.leader.slice('node'.length)) - 1}/`));
    url.search = '';
    return url.toString();
  }

  /** CPU time so far, in µs: the leader's PostgreSQL, the standbys', and Patroni's and etcd's. */
  cpu(): ClusterCpu {
    const procs = processes();
    const postmaster = (i: number) => pidIn(join(this.dir, `node${i}`, 'data', 'postmaster.pid'));
    const nodes = [1, 2, 3].map((i) => ({ name: `node${i}`, us: treeUs(procs, [postmaster(i) ?? 0]) }));
    const daemons = [1, 2, 3].flatMap((i) => [pidIn(join(this.dir, 'run', `node${i}.patroni.pid`)), pidIn(join(this.dir, 'run', `etcd${i}.pid`))]);
    const primary = nodes.find((n) => n.name === this.leader)?.us ?? 0;
    return {
      primary,
      standbys: nodes.reduce((a, n) => a + n.us, 0) - primary,
      daemons: treeUs(
        procs,
        daemons.filter((p): p is number => p !== null),
      ),
    };
  }

  /** `npm run cluster -- stop` with the same folder and ports, then the folder removed. Never throws. */
  async stop(): Promise<void> {
    try {
      await this.command(['stop']);
    } catch (error) {
      console.log(`  (cluster stop: ${(error as Error).message.split('\n', 1)[0]})`);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
