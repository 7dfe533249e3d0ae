// The three-node cluster of `npm run cluster` as a test drives it: its command, Patroni's view of its
// members, and each node's processes (Patroni and every PostgreSQL process of its data directory) to
// kill or freeze as a machine dies or stalls. Every wait is bounded.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ClusterNode {
  name: string;
  data: string;
  yml: string;
  pgPort: number;
  restPort: number;
  patroniPidFile: string;
}

export interface Member {
  name: string;
  role: string; // leader, sync_standby, replica
  state: string; // running, streaming, stopped, …
  timeline?: number;
  lag?: number | string;
}

export const clusterTestsOn = process.env.CLUSTER_TESTS === '1';
export const cluster_skip =
  !clusterTestsOn &&
  'cluster tests are off: run `CLUSTER_TESTS=1 node scripts/test.mjs test/cluster/*.test.ts` as root (installs patroni, etcd-server, pgbackrest from Debian; CI runs them)';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Cluster {
  readonly nodes: ClusterNode[];

  constructor(
    readonly dir: string,
    readonly portBase: number,
  ) {
    this.nodes = [1, 2, 3].map((i) => ({
      name: `node${i}`,
      data: join(dir, `node${i}`, 'data'),
      yml: join(dir, `node${i}`, 'patroni.yml'),
      pgPort: portBase + i - 1,
      restPort: portBase + 10 + i - 1,
      patroniPidFile: join(dir, 'run', `node${i}.patroni.pid`),
    }));
  }

  /** `npm run cluster -- …args` for this cluster; its stdout. */
  command(args: string[], timeoutMs = 240_000): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        ['scripts/cluster.mjs', ...args],
        { env: { ...process.env, CLUSTER_DIR: this.dir, CLUSTER_PORT_BASE: String(this.portBase) }, timeout: timeoutMs, maxBuffer: 16 << 20 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`cluster ${args.join(' ')}: ${error.message}\n${stderr.slice(-4000)}`)) : resolve(stdout),
      );
    });
  }

  /** Starts what is not running; the DATABASE_URL it prints. */
  async start(): Promise<string> {
    const out = await this.command(['start']);
    const line = out.split('\n').find((l) => l.startsWith('DATABASE_URL='));
    if (!line) throw new Error(`cluster start printed no DATABASE_URL: ${out}`);
    return line.slice('DATABASE_URL='.length);
  }

  /** Patroni's members, from the first node whose REST API answers within a second (none: []). */
  async members(): Promise<Member[]> {
    for (const n of this.nodes) {
      try {
        const res = await fetch(`http://127.0.0.1:${n.restPort}/cluster`, { signal: AbortSignal.timeout(1_000) });
        if (res.ok) return ((await res.json()) as { members: Member[] }).members;
      } catch {
        // frozen or dead: ask the next
      }
    }
    return [];
  }

  async leader(): Promise<ClusterNode | undefined> {
    const m = (await this.members()).find((x) => x.role === 'leader' && x.state === 'running');
    return this.nodes.find((n) => n.name === m?.name);
  }

  /** Waits until `done(members)`: polled every 500 ms for at most `boundMs`. */
  async waitFor(what: string, boundMs: number, done: (members: Member[]) => boolean): Promise<Member[]> {
    const started = Date.now();
    for (;;) {
      const members = await this.members();
      if (done(members)) return members;
      if (Date.now() - started > boundMs) throw new Error(`${what}: not within ${boundMs} ms; members ${JSON.stringify(members)}`);
      await sleep(500);
    }
  }

  /** Patroni's process and every PostgreSQL process of the node's data directory: the machine. */
  processes(node: ClusterNode): number[] {
    const pids: number[] = [];
    const patroni = readPid(node.patroniPidFile);
    if (patroni) pids.push(patroni);
    const postmaster = readPid(join(node.data, 'postmaster.pid'));
    if (postmaster) {
      pids.push(postmaster);
      try {
        pids.push(
          ...execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' })
            .split('\n')
            .filter(Boolean)
            .map(Number),
        );
      } catch {
        // no children
      }
    }
    return pids.filter(alive);
  }

  signal(pids: number[], signal: NodeJS.Signals): void {
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // gone already
      }
    }
  }

  /** `patronictl switchover` from the leader to `candidate`, without a prompt. */
  switchover(leader: ClusterNode, candidate: ClusterNode): string {
    return execFileSync('patronictl', ['-c', leader.yml, 'switchover', '--leader', leader.name, '--candidate', candidate.name, '--force'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
  }

  /** What a failing test prints: Patroni's own table. */
  list(): string {
    try {
      return execFileSync('patronictl', ['-c', this.nodes[0]!.yml, 'list'], { encoding: 'utf8', timeout: 15_000 });
    } catch (error) {
      return `patronictl list failed: ${(error as Error).message}`;
    }
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]!.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
