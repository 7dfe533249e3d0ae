// An HTTP proxy between the SDK and the gateway that a test scripts: each request takes the next
// planned fault (then requests pass), and every request is recorded with its Idempotency-Key.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  /** forwarded, the gateway's answer returned */
  | 'pass'
  /** the connection closed before anything is forwarded */
  | 'drop-before'
  /** forwarded; once the gateway's whole answer is in, the client's connection is closed instead */
  | 'drop-after'
  /** never answered, never forwarded */
  | 'hang'
  /** forwarded, the gateway's answer withheld: the client waits forever */
  | 'forward-then-hang'
  /** a 200 with headers and half a body, then nothing */
  | 'stall-body'
  /** forwarded, then this answer instead of the gateway's */
  | { forwardThen: number }
  /** this answer, not forwarded */
  | { status: number; headers?: Record<string, string>; body?: unknown };

export interface Seen {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  fault: Fault;
}

export interface FaultProxy {
  url: string;
  readonly seen: Seen[];
  /** Requests to `method path` (path without query). */
  to(method: string, path: string): Seen[];
  /** The faults the next requests take, in order; later requests pass. */
  plan(...faults: Fault[]): void;
  close(): Promise<void>;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function forward(target: URL, req: IncomingMessage, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, host: target.host };
    const out = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    out.on('timeout', () => out.destroy(new Error('upstream timeout')));
    out.on('error', reject);
    out.end(body);
  });
}

async function apply(fault: Fault, target: URL, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
  if (fault === 'hang') return;
  if (fault === 'drop-before') return void req.socket.destroy();
  if (fault === 'stall-body') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
    return void res.write('{"available":');
  }
  if (typeof fault === 'object' && 'status' in fault) {
    res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
    return void res.end(JSON.stringify(fault.body ?? { message: `injected ${fault.status}` }));
  }
  const answer = await forward(target, req, body);
  if (fault === 'forward-then-hang') return;
  if (fault === 'drop-after') return void req.socket.destroy();
  if (typeof fault === 'object') {
    res.writeHead(fault.forwardThen, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ message: `injected ${fault.forwardThen} after the gateway answered ${answer.status}` }));
  }
  const { 'transfer-encoding': _te, connection: _c, 'keep-alive': _ka, ...headers } = answer.headers;
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

export async function startFaultProxy(targetUrl: string): Promise<FaultProxy> {
  const target = new URL(targetUrl);
  const seen: Seen[] = [];
  const planned: Fault[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const fault = planned.shift() ?? 'pass';
      const key = req.headers['idempotency-key'];
      seen.push({
        method: req.method ?? '',
        path: (req.url ?? '/').split('?')[0]!,
        idempotencyKey: typeof key === 'string' ? key : undefined,
        fault,
      });
      apply(fault, target, req, Buffer.concat(chunks), res).catch(() => req.socket.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    to: (method, path) => seen.filter((s) => s.method === method && s.path === path),
    plan(...faults) {
      planned.length = 0;
      planned.push(...faults);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
