import assert from 'node:assert/strict';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import {
  type ApiPixClient,
  type ApiPixClientOptions,
  ApiPixError,
  centsFromValor,
  createApiPixClient,
  valorFromCents,
} from '../../src/providers/api-pix/client/api-pix-client.ts';
import { makeTestCerts, opensslAvailable, type TestCerts } from '../helpers/tls-certs.ts';

const SECRET = 'sup3r-s3cret-client-secret';
const TXID = '7978c0c97ea847e78e8849634473c1f1';
const E2EID = 'E12345678202009091221abcdef12345';

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  clientCn: string | undefined;
}
type Reply = { status: number; body?: unknown; raw?: string; headers?: Record<string, string> } | 'hang' | 'drip';
type Route = (req: Seen) => Reply;

/**
 * A PSP speaking the API Pix over HTTPS that requires a client certificate: tokens at /oauth/token
 * (tok-1, tok-2, … valid unless revoked), the API under /api/v2 answering from per-route scripts.
 */
class FakePsp {
  server!: Server;
  port = 0;
  connections = 0;
  readonly tokenRequests: Seen[] = [];
  readonly apiRequests: Seen[] = [];
  readonly issued: string[] = [];
  readonly revoked = new Set<string>();
  tokenDelayMs = 0;
  /** Answers the token endpoint gives, in turn, before it hands out tokens. */
  readonly tokenRefusals: Reply[] = [];
  expiresIn: number | undefined = 3600;
  private readonly scripts = new Map<string, { replies: (Reply | Route)[]; next: number }>();
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

  /** Replies for `METHOD /path` (under /api/v2), in turn; the last one repeats. */
  script(route: string, ...replies: (Reply | Route)[]): void {
    this.scripts.set(route, { replies, next: 0 });
  }

  requestsTo(route: string): Seen[] {
    return this.apiRequests.filter((r) => `${r.method} ${r.path.replace(/^\/api\/v2/, '')}` === route);
  }

  async start(certs: TestCerts): Promise<this> {
    this.server = createServer(
      { key: certs.serverKey, cert: certs.serverCert, ca: certs.ca, requestCert: true, rejectUnauthorized: true },
      (req, res) => this.handle(req, res),
    );
    this.server.on('connection', (socket: Socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    // Handshakes refused (the client without a certificate) are expected here.
    this.server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://psp.test');
      const cert = (req.socket as TLSSocket).getPeerCertificate();
      const seen: Seen = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        clientCn: typeof cert?.subject?.CN === 'string' ? cert.subject.CN : undefined,
      };
      if (seen.path === '/oauth/token') {
        this.token(seen, res);
        return;
      }
      this.apiRequests.push(seen);
      this.answer(res, this.route(seen));
    });
  }

  private token(seen: Seen, res: ServerResponse): void {
    this.tokenRequests.push(seen);
    const refusal = this.tokenRefusals.shift();
    if (refusal) {
      this.answer(res, refusal);
      return;
    }
    const value = `tok-${this.issued.length + 1}-${Math.random().toString(36).slice(2)}`;
    this.issued.push(value);
    const body: Record<string, unknown> = { access_token: value, token_type: 'Bearer' };
    if (this.expiresIn !== undefined) body.expires_in = this.expiresIn;
    const timer = setTimeout(() => this.answer(res, { status: 200, body }), this.tokenDelayMs);
    this.timers.add(timer);
  }

  private route(seen: Seen): Reply {
    const bearer = seen.headers.authorization?.replace(/^Bearer /, '') ?? '';
    if (!this.issued.includes(bearer) || this.revoked.has(bearer)) return { status: 401, body: { title: 'Unauthorized' } };
    const script = this.scripts.get(`${seen.method} ${seen.path.replace(/^\/api\/v2/, '')}`);
    if (!script) return { status: 404, body: { type: 'https://pix.bcb.gov.br/api/v2/error/NaoEncontrado', title: 'Não Encontrado', status: 404 } };
    const reply = script.replies[Math.min(script.next++, script.replies.length - 1)]!;
    return typeof reply === 'function' ? reply(seen) : reply;
  }

  private answer(res: ServerResponse, reply: Reply): void {
    if (reply === 'hang') return;
    if (reply === 'drip') {
      // Headers at once, then a byte of body every 50 ms: each byte resets undici's idle body timeout.
      res.writeHead(200, { 'content-type': 'application/json' });
      const bytes = Buffer.from(JSON.stringify(cobGerada()));
      let sent = 0;
      const timer = setInterval(() => {
        if (sent < bytes.length) res.write(bytes.subarray(sent, ++sent));
        else res.end();
      }, 50);
      this.timers.add(timer);
      return;
    }
    const text = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
    const type = reply.status >= 400 ? 'application/problem+json' : 'application/json';
    res.writeHead(reply.status, { 'content-type': type, ...reply.headers });
    res.end(text);
  }
}

const cobGerada = (txid = TXID) => ({
  calendario: { criacao: '2020-09-09T20:15:00.358Z', expiracao: 3600 },
  txid,
  revisao: 0,
  loc: { id: 789, location: 'pix.example.com/qr/9d36b84fc70b478fb95c12729b90ca25', tipoCob: 'cob' },
  location: 'pix.example.com/qr/9d36b84fc70b478fb95c12729b90ca25',
  status: 'ATIVA',
  valor: { original: '37.00' },
  chave: '7d9f0335-8dcc-4054-9bf9-0dbd61d36906',
  pixCopiaECola:
    '00020101021226830014br.gov.bcb.pix2561pix.example.com/qr/9d36b84fc70b478fb95c12729b90ca255204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D',
});
const cobBody = { calendario: { expiracao: 3600 }, valor: { original: '37.00' }, chave: '7d9f0335-8dcc-4054-9bf9-0dbd61d36906' };
const problem503 = {
  type: 'https://pix.bcb.gov.br/api/v2/error/ServicoIndisponivel',
  title: 'Serviço Indisponível',
  status: 503,
  detail: 'Serviço não está disponível no momento.',
};
const pixItem = (n: number) => ({
  endToEndId: `E1234567820200909122100000000${String(n).padStart(3, '0')}`,
  txid: TXID,
  valor: `${n}.00`,
  horario: '2020-09-10T13:03:33.902Z',
});

/** Everything logged by every client of this file: checked at the end for secrets. */
const logged: string[] = [];
const logger = {
  warn: (obj: object, msg: string) => logged.push(JSON.stringify({ obj, msg })),
  debug: (obj: object, msg: string) => logged.push(JSON.stringify({ obj, msg })),
};
const errorsSeen: string[] = [];
const allTokens: string[] = [];

async function rejection(p: Promise<unknown>): Promise<ApiPixError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ApiPixError, `expected an ApiPixError, got ${String(err)}`);
    errorsSeen.push(err.message, String(err.stack));
    return err;
  }
  assert.fail('expected the call to fail');
}

// Another part of the suite checks requests against the official file; used here when it is there.
const specChecks = await import('../helpers/api-pix-checks.ts').catch(() => undefined);

const skip = opensslAvailable() ? false : 'the openssl CLI is not available to make test certificates';

describe('API Pix client over mTLS', { skip, timeout: 60_000 }, () => {
  let certs: TestCerts;
  const open: { psp: FakePsp; client: ApiPixClient }[] = [];

  before(() => {
    certs = makeTestCerts();
  });
  after(async () => {
    for (const { psp, client } of open) {
      allTokens.push(...psp.issued);
      await client.close();
      await psp.close();
    }
    const everything = [...logged, ...errorsSeen].join('\n');
    assert.ok(allTokens.length > 0, 'tokens were issued during the tests');
    assert.ok(!everything.includes(SECRET), 'the client secret never appears in a log line or an error');
    for (const token of allTokens) assert.ok(!everything.includes(token), `the access token ${token} never appears in a log line or an error`);
  });

  async function setup(extra: Partial<ApiPixClientOptions> = {}): Promise<{ psp: FakePsp; client: ApiPixClient }> {
    const psp = await new FakePsp().start(certs);
    const client = createApiPixClient({
      baseUrl: `https://127.0.0.1:${psp.port}/api/v2`,
      tokenUrl: `https://127.0.0.1:${psp.port}/oauth/token`,
      clientId: 'client-id',
      clientSecret: SECRET,
      cert: certs.clientCert,
      key: certs.clientKey,
      ca: certs.ca,
      timeouts: { connectMs: 2_000, requestMs: 5_000 },
      logger,
      ...extra,
    });
    open.push({ psp, client });
    return { psp, client };
  }

  it('presents the client certificate to the token URL and the API, and sends what the file describes', async () => {
    const { psp, client } = await setup();
    psp.script(`PUT /cob/${TXID}`, (req) => ({ status: 201, body: { ...cobGerada(), sent: JSON.parse(req.body) } }));
    const cob = await client.putCob(TXID, cobBody);
    assert.equal(cob.txid, TXID);
    assert.equal(cob.status, 'ATIVA');
    assert.equal(cob.valor.original, '37.00');
    assert.ok(cob.pixCopiaECola?.startsWith('000201'), `pixCopiaECola kept: ${cob.pixCopiaECola}`);
    assert.ok(!('sent' in cob), 'fields the gateway does not read are dropped');

    const [tokenReq] = psp.tokenRequests;
    assert.ok(tokenReq, 'one token request');
    assert.equal(tokenReq.clientCn, 'gateway-test-client');
    assert.equal(tokenReq.method, 'POST');
    assert.equal(tokenReq.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(tokenReq.body, 'grant_type=client_credentials');
    const basic = Buffer.from(String(tokenReq.headers.authorization).replace(/^Basic /, ''), 'base64').toString();
    assert.equal(basic, `client-id:${SECRET}`);

    const [put] = psp.requestsTo(`PUT /cob/${TXID}`);
    assert.ok(put, 'the PUT reached the PSP');
    assert.equal(put.clientCn, 'gateway-test-client');
    assert.equal(put.headers['content-type'], 'application/json');
    assert.equal(put.headers.authorization, `Bearer ${psp.issued[0]}`);
    assert.deepEqual(JSON.parse(put.body), cobBody);
  });

  it('fails with kind network when the client has no certificate', async () => {
    const { client } = await setup({ cert: undefined, key: undefined, maxAttempts: 2 });
    const err = await rejection(client.getCob(TXID));
    assert.equal(err.kind, 'network', `kind network, got ${err.kind}: ${err.message}`);
  });

  it('serves many calls, concurrent and sequential, with one token request', async () => {
    const { psp, client } = await setup();
    psp.tokenDelayMs = 50;
    psp.script(`GET /cob/${TXID}`, { status: 200, body: cobGerada() });
    const concurrent = await Promise.all(Array.from({ length: 20 }, () => client.getCob(TXID)));
    for (let i = 0; i < 5; i++) await client.getCob(TXID);
    assert.equal(concurrent.length, 20);
    assert.equal(psp.tokenRequests.length, 1, 'one token request for 25 calls');
    assert.equal(psp.requestsTo(`GET /cob/${TXID}`).length, 25);
  });

  it('refreshes the token shortly before it expires (min(60 s, 10 %) early)', async () => {
    let now = 1_700_000_000_000;
    const { psp, client } = await setup({ clock: () => now });
    psp.script(`GET /cob/${TXID}`, { status: 200, body: cobGerada() });
    await client.getCob(TXID);
    now += 3_540_000 - 1_000; // 3,600 s less 60 s early, less one second: still fresh
    await client.getCob(TXID);
    assert.equal(psp.tokenRequests.length, 1, 'the cached token served before its refresh time');
    now += 2_000;
    await client.getCob(TXID);
    assert.equal(psp.tokenRequests.length, 2, 'a new token once within 60 s of expiry');
    const last = psp.requestsTo(`GET /cob/${TXID}`).at(-1);
    assert.equal(last?.headers.authorization, `Bearer ${psp.issued[1]}`);
  });

  it('on a 401 gets a new token and sends the call once more', async () => {
    const { psp, client } = await setup();
    psp.script(`PATCH /cob/${TXID}`, { status: 200, body: { ...cobGerada(), status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR', revisao: 1 } });
    psp.script(`GET /cob/${TXID}`, { status: 200, body: cobGerada() });
    await client.getCob(TXID);
    psp.revoked.add(psp.issued[0]!);
    const cob = await client.patchCob(TXID, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
    assert.equal(cob.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    assert.equal(psp.tokenRequests.length, 2, 'one refresh');
    const patches = psp.requestsTo(`PATCH /cob/${TXID}`);
    assert.equal(patches.length, 2, 'the PATCH refused by the 401 is sent again once');
    assert.equal(patches[1]?.headers.authorization, `Bearer ${psp.issued[1]}`);
  });

  it('gives up after one refresh when the PSP keeps answering 401', async () => {
    const { psp, client } = await setup();
    psp.script(`GET /cob/${TXID}`, { status: 200, body: cobGerada() });
    await client.getCob(TXID);
    psp.revoked.add(psp.issued[0]!);
    psp.tokenDelayMs = 0;
    // Every new token is revoked as soon as it is used.
    psp.script(`GET /cob/${TXID}`, (req) => {
      psp.revoked.add(String(req.headers.authorization).replace(/^Bearer /, ''));
      return { status: 401, body: { title: 'Unauthorized' } };
    });
    const err = await rejection(client.getCob(TXID));
    assert.equal(err.kind, 'http');
    assert.equal(err.status, 401);
    assert.equal(psp.tokenRequests.length, 2, 'one refresh, not a loop');
  });

  it('reports a refused token request as the call failing, without retrying it', async () => {
    const { psp, client } = await setup();
    psp.tokenRefusals.push({ status: 401, body: { error: 'invalid_client', error_description: 'bad credentials' } });
    const err = await rejection(client.getCob(TXID));
    assert.equal(err.kind, 'http');
    assert.equal(err.status, 401);
    assert.equal(err.operation, 'GET /cob/{txid}');
    assert.ok(
      err.message.includes('POST /oauth/token') && err.message.includes('invalid_client'),
      `names the token request and its error: ${err.message}`,
    );
    assert.equal(psp.tokenRequests.length, 1, 'a refusal is final');
    assert.equal(psp.apiRequests.length, 0, 'the API is not called without a token');
  });

  it('retries a token request that got a 503, whatever the call', async () => {
    const { psp, client } = await setup();
    psp.tokenRefusals.push({ status: 503, body: problem503 });
    psp.script(`PATCH /cob/${TXID}`, { status: 200, body: { ...cobGerada(), status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } });
    const cob = await client.patchCob(TXID, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
    assert.equal(cob.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    assert.equal(psp.tokenRequests.length, 2, 'the token request was retried');
    assert.equal(psp.requestsTo(`PATCH /cob/${TXID}`).length, 1, 'the PATCH went once');
  });

  it('retries a PUT after a 503 and succeeds', async () => {
    const { psp, client } = await setup();
    psp.script(`PUT /cob/${TXID}`, { status: 503, body: problem503 }, { status: 201, body: cobGerada() });
    const cob = await client.putCob(TXID, cobBody);
    assert.equal(cob.txid, TXID);
    const puts = psp.requestsTo(`PUT /cob/${TXID}`);
    assert.equal(puts.length, 2, 'the PUT was sent twice');
    assert.equal(puts[0]?.body, puts[1]?.body, 'the same body both times');
  });

  it('does not retry a PATCH after a 503', async () => {
    const { psp, client } = await setup();
    psp.script(`PATCH /cob/${TXID}`, { status: 503, body: problem503 }, { status: 200, body: cobGerada() });
    const err = await rejection(client.patchCob(TXID, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }));
    assert.equal(err.kind, 'http');
    assert.equal(err.status, 503);
    assert.equal(err.operation, 'PATCH /cob/{txid}');
    assert.equal(err.problem?.type, problem503.type);
    assert.equal(psp.requestsTo(`PATCH /cob/${TXID}`).length, 1, 'one PATCH only');
  });

  it('treats a 400 as final and keeps its problem+json', async () => {
    const { psp, client } = await setup();
    psp.script(`PUT /cob/${TXID}`, {
      status: 400,
      body: {
        type: 'https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida',
        title: 'Cobrança inválida.',
        status: 400,
        detail: 'A requisição não respeita o _schema_.',
        violacoes: [{ razao: 'O campo cob.valor.original não respeita o _schema_.', propriedade: 'cob.valor.original', valor: '99999.999' }],
      },
    });
    const err = await rejection(client.putCob(TXID, cobBody));
    assert.equal(err.kind, 'http');
    assert.equal(err.status, 400);
    assert.equal(err.problem?.violacoes?.[0]?.propriedade, 'cob.valor.original');
    assert.ok(err.message.includes('CobOperacaoInvalida'), `the message names the problem type: ${err.message}`);
    assert.ok(!err.message.includes('99999.999'), `the message leaves out violated values: ${err.message}`);
    assert.equal(psp.requestsTo(`PUT /cob/${TXID}`).length, 1, 'a 400 is not retried');
  });

  it('times out on a PSP that never answers', async () => {
    const { psp, client } = await setup({ timeouts: { connectMs: 2_000, requestMs: 400 } });
    psp.script(`GET /cob/${TXID}`, 'hang');
    const err = await rejection(client.getCob(TXID));
    assert.equal(err.kind, 'timeout', `kind timeout, got ${err.kind}: ${err.message}`);
    assert.equal(err.operation, 'GET /cob/{txid}');
  });

  it('times out on a PSP that sends its answer a byte at a time: the deadline bounds the whole exchange', async () => {
    const { psp, client } = await setup({ timeouts: { connectMs: 2_000, requestMs: 400 } });
    psp.script(`GET /cob/${TXID}`, 'drip');
    const started = performance.now();
    const err = await rejection(client.getCob(TXID));
    assert.equal(err.kind, 'timeout', `kind timeout, got ${err.kind}: ${err.message}`);
    // The whole body would take ~30 s at this pace; the cut comes at the deadline (retries included).
    assert.ok(performance.now() - started < 10_000, `cut after ${Math.round(performance.now() - started)} ms`);
  });

  it('reuses one TCP connection for sequential calls and the token', async () => {
    const { psp, client } = await setup();
    psp.script(`GET /pix/${E2EID}`, { status: 200, body: { endToEndId: E2EID, valor: '100.00', horario: '2020-09-10T13:03:33.902Z' } });
    for (let i = 0; i < 6; i++) await client.getPix(E2EID);
    assert.equal(psp.requestsTo(`GET /pix/${E2EID}`).length, 6);
    assert.equal(psp.connections, 1, `one connection for a token and 6 calls, got ${psp.connections}`);
  });

  it('walks every page of GET /pix', async () => {
    const { psp, client } = await setup();
    const pages = [[pixItem(1), pixItem(2)], [pixItem(3), pixItem(4)], [pixItem(5)]];
    psp.script('GET /pix', (req) => {
      const page = Number(req.query.get('paginacao.paginaAtual'));
      const paginacao = { paginaAtual: page, itensPorPagina: 2, quantidadeDePaginas: 3, quantidadeTotalDeItens: 5 };
      return { status: 200, body: { parametros: { inicio: req.query.get('inicio'), fim: req.query.get('fim'), paginacao }, pix: pages[page] ?? [] } };
    });
    const inicio = new Date('2020-04-01T00:00:00Z');
    const fim = new Date('2020-04-01T23:59:59Z');
    const seen: string[] = [];
    for await (const pix of client.allPix({ inicio, fim })) seen.push(pix.endToEndId);
    assert.deepEqual(
      seen,
      [1, 2, 3, 4, 5].map((n) => pixItem(n).endToEndId),
    );
    const asked = psp.requestsTo('GET /pix');
    assert.deepEqual(
      asked.map((r) => r.query.get('paginacao.paginaAtual')),
      ['0', '1', '2'],
    );
    assert.equal(asked[0]?.query.get('inicio'), '2020-04-01T00:00:00.000Z');
    assert.equal(asked[0]?.query.get('fim'), '2020-04-01T23:59:59.000Z');
  });

  it('refuses a PSP that ignores the page asked for', async () => {
    const { psp, client } = await setup();
    const paginacao = { paginaAtual: 0, itensPorPagina: 1, quantidadeDePaginas: 3, quantidadeTotalDeItens: 3 };
    psp.script('GET /pix', { status: 200, body: { parametros: { inicio: 'x', fim: 'y', paginacao }, pix: [pixItem(1)] } });
    const walk = async () => {
      for await (const _ of client.allPix({ inicio: new Date(0), fim: new Date(1) })) {
        // read them all
      }
    };
    const err = await rejection(walk());
    assert.equal(err.kind, 'invalid-answer');
    assert.equal(psp.requestsTo('GET /pix').length, 2, 'stops at the first wrong page');
  });

  it('turns answers that are not JSON or lack what we need into invalid-answer', async () => {
    const { psp, client } = await setup();
    psp.script(`PUT /cob/${TXID}`, { status: 201, raw: '<html>ok</html>' });
    assert.equal((await rejection(client.putCob(TXID, cobBody))).kind, 'invalid-answer');
    const { pixCopiaECola: _, ...withoutCode } = cobGerada();
    psp.script(`PUT /cob/${TXID}`, { status: 201, body: withoutCode });
    const err = await rejection(client.putCob(TXID, cobBody));
    assert.equal(err.kind, 'invalid-answer');
    assert.ok(err.message.includes('pixCopiaECola'), `names what is missing: ${err.message}`);
    psp.script(`GET /pix/${E2EID}`, { status: 200, body: { endToEndId: E2EID, valor: '1.5', horario: '2020-09-10T13:03:33.902Z' } });
    assert.equal((await rejection(client.getPix(E2EID))).kind, 'invalid-answer');
  });

  it('asks for a devolução and takes the existing one when its id was already used', async () => {
    const { psp, client } = await setup();
    const route = `/pix/${E2EID}/devolucao/D1`;
    const devolucao = {
      id: 'D1',
      rtrId: 'D12345678202009091000abcde123456',
      valor: '7.89',
      horario: { solicitacao: '2020-09-11T15:25:59.411Z' },
      status: 'EM_PROCESSAMENTO',
    };
    psp.script(`PUT ${route}`, { status: 201, body: devolucao });
    const first = await client.putDevolucao(E2EID, 'D1', { valor: '7.89', natureza: 'ORIGINAL' });
    assert.equal(first.status, 'EM_PROCESSAMENTO');
    assert.deepEqual(JSON.parse(psp.requestsTo(`PUT ${route}`)[0]!.body), { valor: '7.89', natureza: 'ORIGINAL' });

    psp.script(`PUT ${route}`, {
      status: 400,
      body: { type: 'https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida', title: 'Devolução inválida', status: 400 },
    });
    psp.script(`GET ${route}`, { status: 200, body: { ...devolucao, status: 'DEVOLVIDO' } });
    const again = await client.putDevolucao(E2EID, 'D1', { valor: '7.89', natureza: 'ORIGINAL' });
    assert.equal(again.status, 'DEVOLVIDO');
    const other = await rejection(client.putDevolucao(E2EID, 'D1', { valor: '8.00' }));
    assert.equal(other.status, 400, 'a different amount under the same id stays refused');
  });

  it('registers and reads the webhook of a chave', async () => {
    const { psp, client } = await setup();
    const chave = 'loja+pix@example.com';
    const path = `/webhook/${encodeURIComponent(chave)}`;
    psp.script(`PUT ${path}`, { status: 200 });
    psp.script(`GET ${path}`, {
      status: 200,
      body: { webhookUrl: 'https://gw.example/providers/pix/s', chave, criacao: '2020-11-11T10:15:00.358Z' },
    });
    await client.putWebhook(chave, 'https://gw.example/providers/pix/s');
    assert.deepEqual(JSON.parse(psp.requestsTo(`PUT ${path}`)[0]!.body), { webhookUrl: 'https://gw.example/providers/pix/s' });
    const webhook = await client.getWebhook(chave);
    assert.equal(webhook.webhookUrl, 'https://gw.example/providers/pix/s');
  });

  it('sends every request as the official file describes it', { skip: specChecks ? false : 'test/helpers/api-pix-checks.ts is absent' }, async () => {
    const { psp, client } = await setup();
    const route = `/pix/${E2EID}/devolucao/D1`;
    const devolucao = { id: 'D1', rtrId: 'D12345678202009091000abcde123456', valor: '7.89', horario: {}, status: 'EM_PROCESSAMENTO' };
    const paginacao = { paginaAtual: 0, itensPorPagina: 1000, quantidadeDePaginas: 1, quantidadeTotalDeItens: 0 };
    psp.script(`PUT /cob/${TXID}`, { status: 201, body: cobGerada() });
    psp.script(`GET /cob/${TXID}`, { status: 200, body: cobGerada() });
    psp.script(`PATCH /cob/${TXID}`, { status: 200, body: cobGerada() });
    psp.script(`GET /pix/${E2EID}`, { status: 200, body: pixItem(1) });
    psp.script('GET /pix', { status: 200, body: { parametros: { inicio: 'a', fim: 'b', paginacao }, pix: [] } });
    psp.script(`PUT ${route}`, { status: 201, body: devolucao });
    psp.script(`GET ${route}`, { status: 200, body: devolucao });
    psp.script('PUT /webhook/loja%40example.com', { status: 200 });
    psp.script('GET /webhook/loja%40example.com', { status: 200, body: { webhookUrl: 'https://gw.example/p' } });

    const devedor = { cpf: '12345678909', nome: 'Fulano de Tal' };
    await client.putCob(TXID, { ...cobBody, devedor, solicitacaoPagador: 'Pedido 123' });
    await client.getCob(TXID);
    await client.patchCob(TXID, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
    await client.getPix(E2EID);
    await client.listPix({ inicio: new Date(0), fim: new Date(), paginaAtual: 0, itensPorPagina: 1000, txIdPresente: true });
    for await (const _ of client.allPix({ inicio: new Date(0), fim: new Date() })) assert.fail('no Pix in this window');
    await client.putDevolucao(E2EID, 'D1', { valor: '7.89', natureza: 'ORIGINAL', descricao: 'Devolução do pedido 123' });
    await client.getDevolucao(E2EID, 'D1');
    await client.putWebhook('loja@example.com', 'https://gw.example/providers/pix/s');
    await client.getWebhook('loja@example.com');

    assert.equal(psp.apiRequests.length, 10, 'one request per call');
    for (const r of psp.apiRequests) {
      const path = `${r.path.replace(/^\/api\/v2/, '')}?${r.query.toString()}`;
      const violations = specChecks!.checkApiPixRequest({
        method: r.method,
        path,
        headers: r.headers,
        body: r.body ? JSON.parse(r.body) : undefined,
      });
      assert.deepEqual(violations, [], `${r.method} ${path} conforms to the file`);
    }
  });

  it('refuses path parameters outside the file patterns before sending anything', async () => {
    const { psp, client } = await setup();
    await assert.rejects(client.getPix('../../oauth/token'), RangeError);
    await assert.rejects(client.getCob('short'), RangeError);
    await assert.rejects(client.getWebhook('..'), RangeError);
    assert.equal(psp.apiRequests.length + psp.tokenRequests.length, 0, 'nothing was sent');
  });
});

describe('API Pix amounts', () => {
  it('round-trips cents and reais strings exactly', () => {
    for (const cents of [0, 1, 29, 100, 12345, 999_999_999_999]) {
      assert.equal(centsFromValor(valorFromCents(cents)), cents, `${cents} survives the round trip`);
    }
    assert.equal(valorFromCents(12345), '123.45');
    assert.equal(valorFromCents(5), '0.05');
    assert.equal(centsFromValor('0.29'), 29);
    assert.equal(centsFromValor('0001.10'), 110);
  });

  it('refuses anything not matching \\d{1,10}\\.\\d{2}', () => {
    for (const bad of ['1.5', '1e3', '-1.00', '1', '1.000', ' 1.00', '1.00\n', '12345678901.00', '1,00', '']) {
      assert.throws(() => centsFromValor(bad), RangeError, `${JSON.stringify(bad)} is refused`);
    }
    for (const bad of [-1, 1.5, Number.NaN, 1_000_000_000_000]) {
      assert.throws(() => valorFromCents(bad), RangeError, `${bad} cents are refused`);
    }
  });
});
