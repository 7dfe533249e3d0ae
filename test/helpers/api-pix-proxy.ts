/**
 * A pass-through HTTP proxy that checks every request and answer against a provider's file (the API
 * Pix file unless told otherwise): tests point a client at `url` and, at the end, assert that
 * `violations` is empty.
 */
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy checks each exchange with; each function returns violations as sentences. */
export interface ExchangeChecker {
  /** Whether an exchange is checked at all (path relative to the API root); all are when absent. */
  checks?(path: string): boolean;
  request(request: { method: string; path: string; headers: IncomingHttpHeaders; body: unknown }): string[];
  response(response: { method: string; path: string; status: number; body: unknown; contentType?: string }): string[];
}

/** The API Pix checker, loaded (with the file) only when a proxy uses it. */
async function apiPixChecker(): Promise<ExchangeChecker> {
  const { checkApiPixRequest, checkApiPixResponse } = await import('./api-pix-checks.ts');
  return {
    // The token endpoint is OAuth2's, outside the file: forwarded as it is.
    checks: (path) => !path.split('?')[0]!.endsWith('/oauth/token'),
    request: checkApiPixRequest,
    response: checkApiPixResponse,
  };
}

export interface ValidatingProxy {
  /** Base URL standing for the API root: `${url}/cob/…` reaches `${target}/cob/…`. */
  url: string;
  /** Every violation seen, each prefixed with its method and path. */
  readonly violations: string[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);
const MAX_BODY = 5 * 1024 * 1024;

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) stream.destroy(new Error(`body over ${MAX_BODY} bytes`));
      else chunks.push(c);
    });
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** The JSON a body carries, or undefined when it is empty; text that is not JSON is a violation. */
function parseJson(raw: Buffer, what: string, violations: string[]): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    violations.push(`${what} is not JSON: ${(error as Error).message}`);
    return undefined;
  }
}

function forwardHeaders(headers: IncomingHttpHeaders, host: string): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP_BY_HOP.has(k)) out[k] = v;
  return { ...out, host };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function forward(target: URL, agent: Agent, req: IncomingMessage, body: Buffer, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const path = `${target.pathname.replace(/\/$/, '')}${req.url ?? '/'}`;
    const headers = forwardHeaders(req.headers, target.host);
    // A chunked body was read whole, so its length is now known (transfer-encoding is hop-by-hop).
    if (body.length > 0 || req.headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
    const out = httpRequest({ host: target.hostname, port: target.port, method: req.method, path, headers, agent }, (res) => {
      readBody(res).then((b) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: b }), reject);
    });
    out.setTimeout(timeoutMs, () => out.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    out.on('error', reject);
    out.end(body);
  });
}

/**
 * Starts the proxy on 127.0.0.1 (ephemeral port) in front of `target`, an http base URL such as
 * `http://127.0.0.1:PORT/api/v2`, checking with `checker` (the API Pix file's by default).
 */
export async function startValidatingProxy(options: { target: string; timeoutMs?: number; checker?: ExchangeChecker }): Promise<ValidatingProxy> {
  const target = new URL(options.target);
  if (target.protocol !== 'http:') throw new Error(`the proxy forwards to http only, not ${options.target}`);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const checker = options.checker ?? (await apiPixChecker());
  const violations: string[] = [];
  const agent = new Agent({ keepAlive: true });

  const server = createServer(async (req, res) => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const label = `${method} ${path.split('?')[0]}`;
    const seen: string[] = [];
    try {
      const raw = await readBody(req);
      const checked = checker.checks?.(path) ?? true;
      if (checked) {
        const body = parseJson(raw, 'request body', seen);
        seen.push(...checker.request({ method, path, headers: req.headers, body }));
      }
      const answer = await forward(target, agent, req, raw, timeoutMs);
      if (checked) {
        const body = parseJson(answer.body, `response ${answer.status} body`, seen);
        const contentType = [answer.headers['content-type']].flat()[0];
        seen.push(...checker.response({ method, path, status: answer.status, body, contentType }).map((v) => `→ ${answer.status}: ${v}`));
      }
      const headers = Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !HOP_BY_HOP.has(k)));
      res.writeHead(answer.status, { ...headers, 'content-length': String(answer.body.length) });
      res.end(answer.body);
    } catch (error) {
      seen.push(`the target did not answer: ${(error as Error).message}`);
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`validating proxy: ${(error as Error).message}`);
    } finally {
      violations.push(...seen.map((v) => `${label}: ${v}`));
    }
  });
  server.requestTimeout = timeoutMs;
  server.headersTimeout = timeoutMs;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    violations,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([closed, late]);
      clearTimeout(timer);
    },
  };
}
