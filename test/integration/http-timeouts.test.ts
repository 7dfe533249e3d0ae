import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, type Gateway, startGateway } from '../helpers/gateway.ts';

// Slow clients against a real listening server: Node cuts them only through the server's own
// timeouts, which app.inject never exercises.

const request_timeout_ms = 1500;
const idle_timeout_ms = 2000;
// Node sweeps for expired requests once a second; allow that and the scheduling noise of a loaded
// 2-core machine (CI runs three test files at once): a missing timeout still fails, at close_wait_limit_ms.
const cut_slack_ms = 3000;
const byte_interval_ms = 300;
// Upper bound on any wait for a close, so a missing timeout fails the test instead of hanging it.
const close_wait_limit_ms = 8000;

interface Client {
  socket: Socket;
  data: string;
  closedAtMs: number | null;
  /** Resolves with ms from connection to close, or null if still open after `limitMs`. */
  closedWithin(limitMs: number): Promise<number | null>;
}

class Clients {
  private readonly all = new Set<Client>();

  open(port: number): Promise<Client> {
    const startedMs = performance.now();
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {}); // a reset is one of the ways a cut client is told
    const closed = new Promise<number>((resolve) =>
      socket.once('close', () => {
        client.closedAtMs = performance.now();
        resolve(client.closedAtMs - startedMs);
      }),
    );
    const client: Client = {
      socket,
      data: '',
      closedAtMs: null,
      closedWithin: (limitMs) => Promise.race([closed, delay(limitMs).then(() => null)]),
    };
    socket.on('data', (chunk) => {
      client.data += chunk.toString('latin1');
    });
    this.all.add(client);
    return new Promise((resolve) => {
      socket.once('connect', () => resolve(client));
      socket.once('close', () => resolve(client));
    });
  }

  /** Sends `text` one byte every byte_interval_ms until the socket closes (or the text ends). */
  trickle(client: Client, text: string): void {
    let i = 0;
    const timer = setInterval(() => {
      if (client.socket.destroyed || i >= text.length) return clearInterval(timer);
      client.socket.write(text[i++]!);
    }, byte_interval_ms);
    client.socket.once('close', () => clearInterval(timer));
  }

  destroyAll(): void {
    for (const c of this.all) c.socket.destroy();
    this.all.clear();
  }
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// A body that would take 300 s at one byte every 300 ms.
const body_bytes = 1000;
const slowBodyHead = (path: string, headers: string) =>
  `POST ${path} HTTP/1.1\r\nHost: gateway\r\n${headers}Content-Type: application/json\r\nContent-Length: ${body_bytes}\r\n\r\n`;

function startSlowBody(clients: Clients, client: Client, authenticated: boolean): void {
  const head = authenticated ? slowBodyHead('/admin/sellers', `Authorization: Bearer ${ADMIN_TOKEN}\r\n`) : slowBodyHead('/api/sales', '');
  client.socket.write(head);
  clients.trickle(client, `{${' '.repeat(body_bytes)}`);
}

function startSlowHeaders(clients: Clients, client: Client): void {
  clients.trickle(client, `GET /health HTTP/1.1\r\nHost: gateway\r\nX-Padding: ${'a'.repeat(2000)}\r\n\r\n`);
}

/** GET /health on a connection of its own; status and ms, or an error. */
function health(port: number, timeoutMs = 3000): Promise<{ status: number; ms: number }> {
  const startedMs = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - startedMs }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

async function listen(gw: Gateway): Promise<number> {
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  return (gw.app.server.address() as { port: number }).port;
}

describe('HTTP timeouts cut slow clients', { concurrency: true }, () => {
  const clients = new Clients();
  let gw: Gateway;
  let port: number;
  before(async () => {
    gw = await startGateway({ env: { HTTP_REQUEST_TIMEOUT_MS: String(request_timeout_ms) } });
    port = await listen(gw);
  });
  after(async () => {
    clients.destroyAll();
    await gw.close();
  });

  test('the server carries the configured timeouts', () => {
    const server = gw.app.server;
    assert.equal(server.requestTimeout, request_timeout_ms);
    assert.equal(server.headersTimeout, request_timeout_ms, 'headers timeout is min(10 s, request timeout)');
    assert.equal(server.keepAliveTimeout, 10_000);
    assert.equal(server.timeout, 900_000, "the idle timeout (HTTP_IDLE_TIMEOUT_MS, its default) is the sockets' inactivity timeout");
  });

  for (const authenticated of [true, false]) {
    test(`a body sent a byte every 300 ms is cut within the request timeout (${authenticated ? 'authenticated' : 'no credentials'})`, async () => {
      const client = await clients.open(port);
      startSlowBody(clients, client, authenticated);
      const ms = await client.closedWithin(close_wait_limit_ms);
      assert.ok(ms !== null, `still open after ${close_wait_limit_ms} ms`);
      note(`slow body (${authenticated ? 'authenticated' : 'no credentials'}) cut after ${Math.round(ms)} ms`);
      assert.ok(ms >= request_timeout_ms - 100, `cut by the timeout, not before it (${ms} ms)`);
      assert.ok(ms <= request_timeout_ms + cut_slack_ms, `cut after ${Math.round(ms)} ms`);
      if (authenticated) assert.match(client.data, /^HTTP\/1\.1 408 /, 'told why');
      assert.doesNotMatch(client.data, /HTTP\/1\.1 201/, 'the half-sent body never reached the handler');
    });
  }

  test('headers sent a byte at a time are cut within the headers timeout', async () => {
    const client = await clients.open(port);
    startSlowHeaders(clients, client);
    const ms = await client.closedWithin(close_wait_limit_ms);
    assert.ok(ms !== null, `still open after ${close_wait_limit_ms} ms`);
    assert.ok(ms <= request_timeout_ms + cut_slack_ms, `cut after ${Math.round(ms)} ms`);
    assert.doesNotMatch(client.data, /HTTP\/1\.1 200/);
  });

  test('a connection that sends nothing is cut too', async () => {
    const client = await clients.open(port);
    const ms = await client.closedWithin(close_wait_limit_ms);
    assert.ok(ms !== null && ms <= request_timeout_ms + cut_slack_ms, `cut after ${ms} ms`);
  });

  test('while 20 slow clients hang on, GET /health answers at once', async () => {
    const slow = await Promise.all(Array.from({ length: 20 }, () => clients.open(port)));
    slow.forEach((c, i) => {
      if (i % 2) startSlowBody(clients, c, i % 4 === 1);
      else startSlowHeaders(clients, c);
    });
    await delay(2 * byte_interval_ms);
    const { status, ms } = await health(port);
    assert.equal(status, 200);
    assert.ok(ms < 1000, `GET /health took ${Math.round(ms)} ms`);
    assert.ok(
      slow.every((c) => c.closedAtMs === null),
      'the slow clients were still connected',
    );
    const cut = await Promise.all(slow.map((c) => c.closedWithin(close_wait_limit_ms)));
    assert.ok(
      cut.every((ms) => ms !== null),
      'and every one of them is cut',
    );
  });
});

describe('a client that stops reading', () => {
  const clients = new Clients();
  let gw: Gateway;
  let port: number;
  before(async () => {
    // The request timeouts an hour away: only the idle timeout can cut this client.
    gw = await startGateway({ env: { HTTP_REQUEST_TIMEOUT_MS: '3600000', HTTP_IDLE_TIMEOUT_MS: String(idle_timeout_ms) } });
    port = await listen(gw);
  });
  after(async () => {
    clients.destroyAll();
    await gw.close();
  });

  test('a client that stops reading its answers is cut once the connection has been idle for the idle timeout', async () => {
    // Pipelined requests whose answers (the OpenAPI document, ~200 KB each) are never read: once
    // the socket's buffers are full, Node stops reading the next requests and nothing moves. The
    // client, paused, would never see the close, so the server's side of the connection is watched.
    const accepted = new Map<number, Socket>();
    const onConnection = (socket: Socket) => accepted.set(socket.remotePort!, socket);
    gw.app.server.on('connection', onConnection);
    try {
      const client = await clients.open(port);
      const startedMs = performance.now();
      client.socket.pause();
      client.socket.write('GET /openapi.json HTTP/1.1\r\nHost: gateway\r\n\r\n'.repeat(100));
      for (let i = 0; i < 50 && !accepted.has(client.socket.localPort!); i++) await delay(20);
      const serverSide = accepted.get(client.socket.localPort!);
      assert.ok(serverSide, 'the server accepted the connection');
      const closed = new Promise<number>((resolve) => serverSide.once('close', () => resolve(performance.now() - startedMs)));
      const ms = await Promise.race([closed, delay(close_wait_limit_ms).then(() => null)]);
      assert.ok(ms !== null, `still open after ${close_wait_limit_ms} ms`);
      note(`a client that does not read cut after ${Math.round(ms)} ms`);
      assert.ok(ms >= idle_timeout_ms - 100, `cut by the idle timeout, not before it (${Math.round(ms)} ms)`);
      assert.ok(ms <= idle_timeout_ms + cut_slack_ms, `cut after ${Math.round(ms)} ms`);
    } finally {
      gw.app.server.off('connection', onConnection);
    }
  });
});

describe('a connection cap', () => {
  const clients = new Clients();
  let gw: Gateway;
  let port: number;
  const cap = 5;
  before(async () => {
    gw = await startGateway({ env: { HTTP_REQUEST_TIMEOUT_MS: String(request_timeout_ms), HTTP_MAX_CONNECTIONS: String(cap) } });
    port = await listen(gw);
  });
  after(async () => {
    clients.destroyAll();
    await gw.close();
  });

  const serverConnections = () =>
    new Promise<number>((resolve, reject) => gw.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  test('a connection beyond the cap is dropped while the cap is full; a new one is served once the slow ones are cut', async () => {
    const slow = await Promise.all(Array.from({ length: cap }, () => clients.open(port)));
    for (const c of slow) startSlowBody(clients, c, true);
    // Bounded wait until the server has accepted all five.
    for (let i = 0; i < 50 && (await serverConnections()) < cap; i++) await delay(20);
    assert.equal(await serverConnections(), cap);

    const extra = await clients.open(port);
    extra.socket.write('GET /health HTTP/1.1\r\nHost: gateway\r\n\r\n');
    const ms = await extra.closedWithin(1000);
    assert.ok(ms !== null, 'the sixth connection was closed');
    assert.equal(extra.data, '', 'and got no answer');
    assert.ok(
      slow.every((c) => c.closedAtMs === null),
      'while the five were still open',
    );

    const cut = await Promise.all(slow.map((c) => c.closedWithin(close_wait_limit_ms)));
    assert.ok(
      cut.every((t) => t !== null),
      'the slow clients are cut by the request timeout',
    );
    for (let i = 0; i < 50 && (await serverConnections()) > 0; i++) await delay(20);
    assert.equal((await health(port)).status, 200);
  });
});

function note(line: string): void {
  // Shown with the test output: the measured cut time is a figure worth seeing.
  console.log(`# ${line}`);
}
