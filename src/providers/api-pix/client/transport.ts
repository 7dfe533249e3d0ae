import { Agent, type Dispatcher, request } from 'undici';
import { timeoutSignal } from '../../../http/timeout-signal.ts';
import { ApiPixError } from './api-pix-error.ts';

/** What the connector logs through (pino and Fastify's logger fit). Never given a secret or a token. */
export interface ApiPixLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface AgentOptions {
  cert?: string;
  key?: string;
  ca?: string;
  connectMs: number;
  /** Connections per origin (the API and the token URL each have their pool). */
  connections: number;
}

// Idle pooled connections are kept this long unless the server's Keep-Alive hint says less: long
// enough that sales a few seconds apart skip the TCP + TLS (+ client certificate) handshakes, short
// enough to stay under the idle limits of usual load balancers (60 s and up).
const keep_alive_ms = 10_000;

/** One pool of keep-alive connections for the client, every connection presenting the client certificate when there is one. */
export function createAgent(o: AgentOptions): Agent {
  const tls: Record<string, string> = {};
  if (o.cert && o.key) {
    tls.cert = o.cert;
    tls.key = o.key;
  }
  if (o.ca) tls.ca = o.ca;
  return new Agent({
    connections: o.connections,
    keepAliveTimeout: keep_alive_ms,
    connect: { ...tls, timeout: o.connectMs, rejectUnauthorized: true },
  });
}

export interface Exchange {
  method: 'GET' | 'PUT' | 'PATCH' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** Template of the operation, for errors. */
  operation: string;
  /** performance.now() by which the whole exchange (headers and body) must be over. */
  deadline: number;
}

export interface Answer {
  status: number;
  /** The parsed JSON body; undefined when empty or not JSON (see `json`). */
  body: unknown;
  /** 'empty' (no bytes), 'json' (parsed), 'not-json'. */
  json: 'empty' | 'json' | 'not-json';
  retryAfterMs?: number;
}

// A page of 1,000 Pix with their devoluções is well under a megabyte; more is not an API Pix answer.
const answer_max_bytes = 4 * 1024 * 1024;

const timeout_codes = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function isTimeout(err: unknown): boolean {
  const e = err as { name?: string; code?: string; cause?: unknown } | null;
  if (!e) return false;
  if (e.name === 'TimeoutError' || (e.code !== undefined && timeout_codes.has(e.code))) return true;
  // An aborted signal surfaces as an AbortError whose cause is the TimeoutError.
  return e.name === 'AbortError' && (e.cause as { name?: string } | undefined)?.name === 'TimeoutError';
}

/** A transport failure as an ApiPixError: its message is undici's or the TLS layer's, which carry no secret. */
export function transportError(err: unknown, operation: string): ApiPixError {
  if (err instanceof ApiPixError) return err;
  if (isTimeout(err)) return new ApiPixError({ kind: 'timeout', operation, reason: 'no answer within the deadline', cause: err });
  const e = err as { code?: string; message?: string };
  const what = [e?.code, e?.message].filter(Boolean).join(' ').slice(0, 300);
  return new ApiPixError({ kind: 'network', operation, reason: `no HTTP answer: ${what || String(err)}`, cause: err });
}

function retryAfterMs(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

async function readAll(body: Dispatcher.ResponseData['body'], operation: string, status: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > answer_max_bytes) {
      body.destroy();
      throw new ApiPixError({ kind: 'invalid-answer', operation, status, reason: `answer larger than ${answer_max_bytes} bytes` });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** One request and its whole answer, bounded by the deadline; throws ApiPixError (timeout or network) when no answer came. */
export async function exchange(agent: Dispatcher, x: Exchange): Promise<Answer> {
  const remaining = Math.floor(x.deadline - performance.now());
  if (remaining <= 0) throw new ApiPixError({ kind: 'timeout', operation: x.operation, reason: 'no answer within the deadline' });
  const deadline = timeoutSignal(remaining);
  try {
    // undici's request never follows redirects: a 3xx is an answer like any other non-2xx.
    const res = await request(x.url, {
      method: x.method,
      headers: x.headers,
      body: x.body,
      dispatcher: agent,
      headersTimeout: remaining,
      bodyTimeout: remaining,
      signal: deadline.signal,
    });
    const bytes = await readAll(res.body, x.operation, res.statusCode);
    // undici hands a finished keep-alive connection back to its pool one event-loop turn later
    // (setImmediate, in case the server closes it after all). A request sent before then opens a new
    // connection: token then PUT /cob would cost two TLS handshakes. Waiting that turn here keeps
    // back-to-back calls on one connection.
    await new Promise((resolve) => setImmediate(resolve));
    const answer: Answer = { status: res.statusCode, body: undefined, json: 'empty' };
    const after = retryAfterMs(res.headers['retry-after']);
    if (after !== undefined) answer.retryAfterMs = after;
    if (bytes.length > 0) {
      try {
        answer.body = JSON.parse(bytes.toString('utf8'));
        answer.json = 'json';
      } catch {
        answer.json = 'not-json';
      }
    }
    return answer;
  } catch (err) {
    throw transportError(err, x.operation);
  } finally {
    deadline.clear();
  }
}
