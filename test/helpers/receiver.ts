import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the receiver saw it: the raw body bytes, untouched. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Wall-clock ms when the body was complete. */
  at: number;
  /** Wall-clock ms when the response closed (sent whole, or cut by the client); null while open. */
  closedAt: number | null;
}

/**
 * How the receiver answers one request: a bare status code, or a status with headers/body and an
 * optional delay, or `'hang'` (never answers; the socket stays open until the receiver closes), or
 * `'drip'` (answers 200 at once, then sends its body a byte every 100 ms and never ends it).
 */
export type StaticReply = number | 'hang' | 'drip' | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };
/** A static reply, or one chosen from the request itself (e.g. by the body's status). */
export type Reply = StaticReply | ((request: ReceivedRequest) => StaticReply);

export interface Receiver {
  server: Server;
  port: number;
  /** Absolute URL of a path on this receiver (http://127.0.0.1:port/path). */
  url(path: string): string;
  /** Every request, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** The requests whose path (without query) is `path`. */
  requestsTo(path: string): ReceivedRequest[];
  /**
   * Scripts a path: each request takes the next reply; once the script is used up its last reply
   * repeats. A path without a script answers 200.
   */
  script(path: string, ...replies: Reply[]): void;
  /** Polls until pred holds (every 10 ms), or throws after timeoutMs. */
  waitFor(pred: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const scripts = new Map<string, { replies: Reply[]; next: number }>();
  const timers = new Set<NodeJS.Timeout>();
  const pathOf = (p: string) => p.split('?')[0]!;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path,
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
        closedAt: null,
      };
      requests.push(received);
      res.on('close', () => {
        received.closedAt = Date.now();
      });
      const s = scripts.get(pathOf(path));
      let scripted: Reply = 200;
      if (s && s.replies.length > 0) {
        scripted = s.replies[Math.min(s.next, s.replies.length - 1)]!;
        s.next++;
      }
      const reply = typeof scripted === 'function' ? scripted(received) : scripted;
      if (reply === 'hang') return;
      if (reply === 'drip') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const t = setInterval(() => {
          if (res.destroyed) {
            clearInterval(t);
            timers.delete(t);
          } else res.write('.');
        }, 100);
        timers.add(t);
        return;
      }
      const r = typeof reply === 'number' ? { status: reply } : reply;
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(r.status, { 'content-type': 'text/plain', ...r.headers });
        res.end(r.body ?? '');
      };
      if (r.delayMs && r.delayMs > 0) {
        const t = setTimeout(() => {
          timers.delete(t);
          answer();
        }, r.delayMs);
        timers.add(t);
      } else {
        answer();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    server,
    port,
    url: (path) => `http://127.0.0.1:${port}${path.startsWith('/') ? path : `/${path}`}`,
    requests,
    requestsTo: (path) => requests.filter((r) => pathOf(r.path) === path),
    script(path, ...replies) {
      scripts.set(path, { replies, next: 0 });
    },
    async waitFor(pred, timeoutMs = 5_000, what = 'condition') {
      const deadline = Date.now() + timeoutMs;
      while (!pred()) {
        if (Date.now() > deadline)
          throw new Error(`receiver: timed out after ${timeoutMs} ms waiting for ${what} (${requests.length} requests so far)`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      for (const t of timers) clearTimeout(t); // clears intervals too
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
