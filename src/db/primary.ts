import pg from 'pg';
import { DatabaseUnavailableError } from './db.ts';
import type { DatabaseTarget, Host } from './hosts.ts';
import { destroyClient } from './pg-listener.ts';

const check_timeout_ms = 1_000;

/** Whether a connected session is one the target accepts (libpq's check, in one round trip). */
export async function sessionFits(client: pg.Client, target: DatabaseTarget): Promise<boolean> {
  if (target.attrs === 'any') return true;
  const r = await client.query<{ recovery: boolean; read_only: string }>({
    text: `SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only`,
    query_timeout: check_timeout_ms,
  } as pg.QueryConfig);
  const row = r.rows[0]!;
  return target.attrs === 'primary' ? !row.recovery : row.read_only === 'off';
}

/**
 * Which of the URL's hosts the gateway writes to. The pool's and the listener's connections go to
 * `current`; whoever sees that it is no longer the right one (its session turned read-only, its server
 * stopped answering) calls `find`, which tries the hosts in the order written, as libpq does, and
 * keeps the first whose session fits. A change of host bumps `generation`: connections made before
 * it are discarded rather than reused.
 */
export class PrimaryFinder {
  private chosen: Host;
  private gen = 0;
  private finding: Promise<Host> | null = null;

  constructor(
    readonly target: DatabaseTarget,
    private readonly connectTimeoutMs: number,
  ) {
    this.chosen = target.hosts[0]!;
  }

  get current(): Host {
    return this.chosen;
  }

  get generation(): number {
    return this.gen;
  }

  /** One check of the hosts at a time; callers arriving meanwhile share its answer. */
  find(): Promise<Host> {
    this.finding ??= this.search().finally(() => {
      this.finding = null;
    });
    return this.finding;
  }

  /** A connected client on `host`, not yet checked. */
  async connect(host: Host = this.chosen): Promise<pg.Client> {
    const client = new pg.Client({ ...this.target.config, ...host, connectionTimeoutMillis: this.connectTimeoutMs, keepAlive: true });
    client.on('error', () => {}); // a connection lost while idle surfaces at its next use
    try {
      await client.connect();
      return client;
    } catch (error) {
      destroyClient(client);
      throw error;
    }
  }

  /**
   * libpq tries the hosts one after another. A frozen host (a stalled VM) holds each try for the
   * whole connect timeout, so a writer asks them all at once and takes the first that fits: a healthy
   * cluster has one writable node. With `any` (one host, usually), the first that answers in order.
   */
  private async search(): Promise<Host> {
    const { hosts, attrs } = this.target;
    const fits = async (host: Host): Promise<Host> => {
      const client = await this.connect(host);
      try {
        if (!(await sessionFits(client, this.target))) throw new DatabaseUnavailableError(`${host.host}:${host.port} is not ${attrs}`, false);
        return host;
      } finally {
        destroyClient(client);
      }
    };
    let host: Host;
    try {
      if (attrs !== 'any') host = await Promise.any(hosts.map(fits));
      else host = await hosts.slice(1).reduce((tried, h) => tried.catch(() => fits(h)), fits(hosts[0]!));
    } catch (error) {
      const wanted = attrs === 'any' ? 'answered' : `had a ${attrs} session`;
      throw new DatabaseUnavailableError(`no database host ${wanted}`, false, { cause: error });
    }
    if (host !== this.chosen) {
      this.chosen = host;
      this.gen++;
    }
    return host;
  }
}

/** Whether, after `error` on the host in use, the finder settled on another host of several. */
export async function movedOn(finder: PrimaryFinder, error: unknown): Promise<boolean> {
  if (finder.target.hosts.length < 2 || (error as Error)?.message === 'timeout exceeded when trying to connect') return false;
  const before = finder.generation;
  await finder.find().catch(() => {});
  return finder.generation !== before;
}

/** The listener's connection: on the host in use, and of the session the URL asks for. */
export async function listenerClient(finder: PrimaryFinder): Promise<pg.Client> {
  const client = await finder.connect();
  let fits = false;
  try {
    fits = await sessionFits(client, finder.target);
  } finally {
    if (!fits) destroyClient(client);
  }
  if (fits) return client;
  void finder.find().catch(() => {});
  throw Object.assign(new Error('the database host in use is not the primary'), { code: 'NOT_PRIMARY' });
}
