import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy between the gateway and PostgreSQL that a test owns, so faults are made here and the
 * shared server is never touched. `down()` is a server that is away (every connection, new or open,
 * is reset at once); `partition()` is a silent network (nothing flows, nothing is closed); `up()`
 * restores traffic, and a partition's held bytes then flow on as TCP would deliver them.
 * `stallOn(match)` silences one connection for good, from the first chunk its client sends that
 * matches: a connection that died without a word while every other one goes on.
 */
export interface TcpProxy {
  port: number;
  /** `databaseUrl` with its host and port pointing at the proxy. */
  urlFor(databaseUrl: string): string;
  /** Connections accepted since start (or since resetCounts). */
  readonly accepted: number;
  /** Connections open now, and the most open at once since start (or resetCounts). */
  readonly open: number;
  readonly maxOpen: number;
  resetCounts(): void;
  down(): void;
  partition(): void;
  up(): void;
  /** The next connection whose client sends a chunk matching `match`: nothing of it flows again, either way (null: none). */
  stallOn(match: ((chunk: Buffer) => boolean) | null): void;
  /** Connections stalled by `stallOn` so far. */
  readonly stalled: number;
  /**
   * The next chunk a client sends that matches `match` reaches the server, and its client's connection
   * is cut at once: the server does what it was asked (a COMMIT commits) and nobody hears its answer.
   */
  cutAfter(match: ((chunk: Buffer) => boolean) | null): void;
  /** Connections cut by `cutAfter` so far. */
  readonly cut: number;
  close(): Promise<void>;
}

type Mode = 'up' | 'down' | 'partition';

interface Pair {
  client: Socket;
  server: Socket | null;
  toServer: Buffer[];
  toClient: Buffer[];
  stalled: boolean;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: Mode = 'up';
  let accepted = 0;
  let maxOpen = 0;
  let stalled = 0;
  let stallMatch: ((chunk: Buffer) => boolean) | null = null;
  let cutMatch: ((chunk: Buffer) => boolean) | null = null;
  let cut = 0;
  const pairs = new Set<Pair>();

  const destroy = (p: Pair) => {
    p.client.destroy();
    p.server?.destroy();
    pairs.delete(p);
  };
  const flush = (p: Pair) => {
    if (!p.server) return;
    for (const b of p.toServer.splice(0)) p.server.write(b);
    for (const b of p.toClient.splice(0)) p.client.write(b);
  };
  const openUpstream = (p: Pair) => {
    const server = connect(target.port, target.host);
    p.server = server;
    server.on('data', (d: Buffer) => {
      if (p.stalled) return;
      if (mode === 'up') p.client.write(d);
      else p.toClient.push(d);
    });
    server.on('error', () => destroy(p));
    server.on('close', () => destroy(p));
    server.on('connect', () => {
      if (mode === 'up') flush(p);
    });
  };

  const listener: Server = createServer((client) => {
    accepted++;
    const p: Pair = { client, server: null, toServer: [], toClient: [], stalled: false };
    pairs.add(p);
    maxOpen = Math.max(maxOpen, pairs.size);
    client.on('error', () => destroy(p));
    client.on('close', () => destroy(p));
    if (mode === 'down') return destroy(p);
    client.on('data', (d: Buffer) => {
      if (!p.stalled && stallMatch?.(d)) {
        stallMatch = null;
        p.stalled = true;
        stalled++;
      }
      if (p.stalled) return;
      if (mode === 'up' && p.server && !p.server.connecting) p.server.write(d);
      else p.toServer.push(d);
      if (cutMatch?.(d) && p.server) {
        cutMatch = null;
        cut++;
        const server = p.server;
        pairs.delete(p);
        p.server = null; // the server's side ends once it has read what was sent
        server.removeAllListeners('data');
        server.end();
        p.client.destroy();
      }
    });
    // A connection made during a partition reaches nothing until the network is back.
    if (mode === 'up') openUpstream(p);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;

  return {
    port,
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    get maxOpen() {
      return maxOpen;
    },
    resetCounts() {
      accepted = 0;
      maxOpen = pairs.size;
    },
    down() {
      mode = 'down';
      for (const p of [...pairs]) destroy(p);
    },
    partition() {
      mode = 'partition';
    },
    up() {
      mode = 'up';
      for (const p of pairs) {
        if (!p.server) openUpstream(p);
        else flush(p);
      }
    },
    stallOn(match) {
      stallMatch = match;
    },
    get stalled() {
      return stalled;
    },
    cutAfter(match) {
      cutMatch = match;
    },
    get cut() {
      return cut;
    },
    async close() {
      mode = 'down';
      for (const p of [...pairs]) destroy(p);
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
