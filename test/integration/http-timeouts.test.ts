import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, type Gateway, startGateway } from '../helpers/gateway.ts';

// Slow clients against a real listening server: Node cuts them only through the server's own
// timeouts, which app.inject never exercises.
//
// What is asserted is behaviour, not how fast a loaded machine gets to it: a client is cut by the
// timeout it ran into (the server reports that timeout on that connection, then the connection
// closes), never before that timeout, and within cut_limit_ms. That limit is far above the configured
// timeouts plus Node's once-a-second sweep on a loaded 2-core machine (CI runs three test files at
// once; a cut was once measured 3.2 s after a 2 s timeout), and far below the defaults (30 s request,
// 15 min idle) and the 300 s a slow body would take: a cut within it is the configured timeout's, and
// a timeout missing or not configured fails instead of hanging the test.

const request_timeout_ms = 1500;
const idle_timeout_ms = 2000;
const byte_interval_ms = 300;
const cut_limit_ms = 15_000;
// Bounded waits for the server to reach a state (a connection accepted): as long as it takes, up to this.
const settle_limit_ms = 10_000;

interface Client {
  socket: Socket;
  /** This end's port: the server's remotePort for the connection. */
  port: number;
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
      port: 0,
      data: '',
      closedAtMs: null,
      closedWithin: (limitMs) => Promise.race([closed, delay(limitMs).then(() => null)]),
    };
    socket.on('data', (chunk) => {
      client.data += chunk.toString('latin1');
    });
    this.all.add(client);
    return new Promise((resolve) => {
      socket.once('connect', () => {
        client.port = socket.localPort!;
        resolve(client);
      });
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

/**
 * The request and headers timeouts as the server reports them: Node's sweep raises
 * ERR_HTTP_REQUEST_TIMEOUT on the connection as a client error (Fastify's handler answers 408 and
 * closes it). Kept by the client's port, with when it was reported.
 */
function requestTimeoutsOf(gw: Gateway): Map<number, number> {
  const reported = new Map<number, number>();
  gw.app.server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.remotePort !== undefined) reported.set(socket.remotePort, performance.now());
  });
  return reported;
}

/** The client was cut by the request timeout: reported on its connection, then closed. */
function assertCutByRequestTimeout(timeouts: Map<number, number>, client: Client): void {
  const at = timeouts.get(client.port);
  assert.ok(at !== undefined, 'the server reported the request timeout on this connection');
  assert.ok(client.closedAtMs !== null && at <= client.closedAtMs, 'and the connection closed after it');
}

describe('HTTP timeouts cut slow clients', { concurrency: true }, () => {
  const clients = new Clients();
  let gw: Gateway;
  let port: number;
  let timeouts: Map<number, number>;
  before(async () => {
    gw = await startGateway({ env: { HTTP_REQUEST_TIMEOUT_MS: String(request_timeout_ms) } });
    timeouts = requestTimeoutsOf(gw);
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
      const ms = await client.closedWithin(cut_limit_ms);
      assert.ok(ms !== null, `still open after ${cut_limit_ms} ms`);
      note(`slow body (${authenticated ? 'authenticated' : 'no credentials'}) cut after ${Math.round(ms)} ms`);
      assert.ok(ms >= request_timeout_ms - 100, `cut by the timeout, not before it (${ms} ms)`);
      assertCutByRequestTimeout(timeouts, client);
      if (authenticated) assert.match(client.data, /^HTTP\/1\.1 408 /, 'told why');
      assert.doesNotMatch(client.data, /HTTP\/1\.1 201/, 'the half-sent body never reached the handler');
    });
  }

  test('headers sent a byte at a time are cut within the headers timeout', async () => {
    const client = await clients.open(port);
    startSlowHeaders(clients, client);
    const ms = await client.closedWithin(cut_limit_ms);
    assert.ok(ms !== null, `still open after ${cut_limit_ms} ms`);
    assertCutByRequestTimeout(timeouts, client);
    assert.doesNotMatch(client.data, /HTTP\/1\.1 200/);
  });

  test('a connection that sends nothing is cut too', async () => {
    const client = await clients.open(port);
    const ms = await client.closedWithin(cut_limit_ms);
    assert.ok(ms !== null, `still open after ${cut_limit_ms} ms`);
    assertCutByRequestTimeout(timeouts, client);
  });

  test('while 20 slow clients hang on, GET /health answers at once', async () => {
    const slow = await Promise.all(Array.from({ length: 20 }, () => clients.open(port)));
    slow.forEach((c, i) => {
      if (i % 2) startSlowBody(clients, c, i % 4 === 1);
      else startSlowHeaders(clients, c);
    });
    await delay(2 * byte_interval_ms);
    const { status, ms } = await health(port, cut_limit_ms);
    note(`GET /health beside 20 slow clients answered in ${Math.round(ms)} ms`);
    assert.equal(status, 200);
    assert.ok(
      slow.every((c) => c.closedAtMs === null),
      'answered while every slow client was still connected: it did not wait for them to be cut',
    );
    const cut = await Promise.all(slow.map((c) => c.closedWithin(cut_limit_ms)));
    assert.ok(
      cut.every((ms) => ms !== null),
      'and every one of them is cut',
    );
    for (const c of slow) assertCutByRequestTimeout(timeouts, c);
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
      for (let i = 0; i < settle_limit_ms / 20 && !accepted.has(client.port); i++) await delay(20);
      const serverSide = accepted.get(client.port);
      assert.ok(serverSide, 'the server accepted the connection');
      // The socket's inactivity timeout fires on the server's side of the connection, then it closes.
      let timedOutMs: number | null = null;
      serverSide.once('timeout', () => {
        timedOutMs = performance.now() - startedMs;
      });
      const closed = new Promise<number>((resolve) => serverSide.once('close', () => resolve(performance.now() - startedMs)));
      const ms = await Promise.race([closed, delay(cut_limit_ms).then(() => null)]);
      assert.ok(ms !== null, `still open after ${cut_limit_ms} ms`);
      note(`a client that does not read cut after ${Math.round(ms)} ms`);
      assert.ok(ms >= idle_timeout_ms - 100, `cut by the idle timeout, not before it (${Math.round(ms)} ms)`);
      assert.ok(timedOutMs !== null && timedOutMs <= ms, 'the idle timeout fired on the connection, and it closed after that');
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
    for (let i = 0; i < settle_limit_ms / 20 && (await serverConnections()) < cap; i++) await delay(20);
    assert.equal(await serverConnections(), cap);

    const extra = await clients.open(port);
    extra.socket.write('GET /health HTTP/1.1\r\nHost: gateway\r\n\r\n');
    const ms = await extra.closedWithin(cut_limit_ms);
    assert.ok(ms !== null, 'the sixth connection was closed');
    assert.equal(extra.data, '', 'and got no answer');
    assert.ok(
      slow.every((c) => c.closedAtMs === null || c.closedAtMs > extra.closedAtMs!),
      'while the five were still open',
    );

    const cut = await Promise.all(slow.map((c) => c.closedWithin(cut_limit_ms)));
    assert.ok(
      cut.every((t) => t !== null),
      'the slow clients are cut by the request timeout',
    );
    for (let i = 0; i < settle_limit_ms / 20 && (await serverConnections()) > 0; i++) await delay(20);
    assert.equal((await health(port, cut_limit_ms)).status, 200);
  });
});

function note(line: string): void {
  // Shown with the test output: the measured cut time is a figure worth seeing.
  console.log(`# ${line}`);
}
