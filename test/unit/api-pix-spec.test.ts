import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  API_PIX_FILE,
  apiPixExample,
  checkApiPixCallback,
  checkApiPixRequest,
  checkApiPixResponse,
  SHARED_API_PIX_FILE,
  startValidatingProxy,
} from '../helpers/api-pix-spec.ts';
import { prismCli, startPrism } from '../helpers/prism.ts';

const TXID = '7978c0c97ea847e78e8849634473c1f1';
const AUTH = { authorization: 'Bearer token', 'content-type': 'application/json' };
/** The file's own example of an immediate charge (PUT /cob/{txid}, exemplo1). */
const cobBody = () => apiPixExample('cobBody2') as Record<string, unknown>;
const putCob = (body: unknown, txid = TXID) => checkApiPixRequest({ method: 'PUT', path: `/cob/${txid}`, headers: AUTH, body });
const has = (violations: string[], part: string) => violations.some((v) => v.includes(part));
const cobGerada = () => ({
  ...cobBody(),
  txid: TXID,
  revisao: 0,
  status: 'ATIVA',
  calendario: { criacao: '2020-09-09T20:15:00.358Z', expiracao: 3600 },
});
const pix = { endToEndId: 'E12345678202009091221kkkkkkkkkkk', txid: TXID, valor: '110.00', horario: '2020-09-09T20:15:00.358Z' };

test('the vendored official file is the shared copy, byte for byte (never edited)', {
  skip: !existsSync(SHARED_API_PIX_FILE) && 'no shared copy beside this checkout',
}, () => {
  assert.ok(readFileSync(API_PIX_FILE).equals(readFileSync(SHARED_API_PIX_FILE)), `${API_PIX_FILE} differs from ${SHARED_API_PIX_FILE}`);
});

describe('API Pix requests', () => {
  test('the file example of PUT /cob/{txid} passes', () => {
    assert.deepEqual(putCob(cobBody()), []);
  });

  test('each broken field of PUT /cob/{txid} is named', () => {
    const asNumber = putCob({ ...cobBody(), valor: { original: 37 } });
    assert.ok(has(asNumber, 'request body /valor/original must be string'), `valor.original as a number: ${asNumber}`);
    const shortTxid = putCob(cobBody(), 'abcdefghij');
    assert.ok(has(shortTxid, 'path parameter txid must match pattern'), `10-character txid: ${shortTxid}`);
    const noKey = putCob({ ...cobBody(), chave: undefined });
    assert.ok(has(noKey, "must have required property 'chave'"), `without chave: ${noKey}`);
    const noToken = checkApiPixRequest({ method: 'PUT', path: `/cob/${TXID}`, headers: { 'content-type': 'application/json' }, body: cobBody() });
    assert.ok(has(noToken, 'OAuth2 bearer token'), `without Authorization: ${noToken}`);
    const noOperation = checkApiPixRequest({ method: 'PATCH', path: '/pix' });
    assert.ok(has(noOperation, 'no such operation'), `PATCH /pix: ${noOperation}`);
  });

  test('unknown fields pass: the file sets additionalProperties nowhere', () => {
    assert.ok(!readFileSync(API_PIX_FILE, 'utf8').includes('additionalProperties'), 'the file now restricts fields: add a failing case here');
    assert.deepEqual(putCob({ ...cobBody(), extra: 1 }), []);
  });

  test('a CPF debtor passes (erratum) and a malformed one does not', () => {
    assert.deepEqual(putCob({ ...cobBody(), devedor: { cpf: '12345678909', nome: 'Francisco da Silva' } }), []);
    const bad = putCob({ ...cobBody(), devedor: { cpf: '123', nome: 'Francisco da Silva' } });
    assert.ok(has(bad, '/devedor/cpf must match pattern'), `CPF of 3 digits: ${bad}`);
  });

  test('a Pix Saque charge passes (erratum) and one with both saque and troco does not', () => {
    const saque: Record<string, unknown> = { ...(apiPixExample('cobBody6') as object), calendario: { expiracao: 3600 } };
    assert.deepEqual(putCob(saque), []);
    type Valor = { retirada: Record<string, unknown> };
    const valor = saque.valor as Valor;
    const troco = ((apiPixExample('cobBody9') as { valor: Valor }).valor.retirada as { troco: unknown }).troco;
    const both = putCob({ ...saque, valor: { ...valor, retirada: { ...valor.retirada, troco } } });
    assert.ok(has(both, '/valor/retirada must match exactly one schema in oneOf'), `saque and troco: ${both}`);
  });

  test('a readOnly property is not required in a request (loc.id), the others are (loc.tipoCob)', () => {
    assert.deepEqual(putCob({ ...cobBody(), loc: { tipoCob: 'cob' } }), []);
    const noType = putCob({ ...cobBody(), loc: { id: 7 } });
    assert.deepEqual(noType, ["request body /loc must have required property 'tipoCob'"]);
  });

  test('GET /pix query: valid passes, a date without time, a negative page and an unknown name fail', () => {
    const query = { inicio: '2020-04-01T00:00:00Z', fim: '2020-04-01T23:59:59Z', 'paginacao.paginaAtual': '0', 'paginacao.itensPorPagina': '100' };
    assert.deepEqual(checkApiPixRequest({ method: 'GET', path: '/pix', query }), []);
    assert.deepEqual(checkApiPixRequest({ method: 'GET', path: `/pix?${new URLSearchParams(query)}&txIdPresente=true` }), []);
    const bad = checkApiPixRequest({
      method: 'GET',
      path: '/pix',
      query: { ...query, inicio: '2020-04-01', 'paginacao.paginaAtual': '-1', pagina: '2' },
    });
    assert.ok(has(bad, 'query parameter inicio must match format "date-time"'), `inicio without time: ${bad}`);
    assert.ok(has(bad, 'query parameter paginacao.paginaAtual must be >= 0'), `negative page: ${bad}`);
    assert.ok(has(bad, 'query parameter pagina is not defined for GET /pix'), `unknown parameter: ${bad}`);
    const missing = checkApiPixRequest({ method: 'GET', path: '/pix', query: { inicio: query.inicio } });
    assert.deepEqual(missing, ['query parameter fim is required']);
  });

  test('what the file lets through, as written: a txid over 35 characters, a callback without pix', () => {
    assert.deepEqual(putCob(cobBody(), 'a'.repeat(40)), [], 'TxId\'s pattern "[a-zA-Z0-9]{26,35}" is not anchored');
    assert.deepEqual(checkApiPixCallback({}), [], 'WebhookPixBody requires nothing');
  });
});

describe('API Pix answers and callbacks', () => {
  test('a complete 201 to PUT /cob/{txid} passes; without txid it fails', () => {
    assert.deepEqual(checkApiPixResponse({ method: 'PUT', path: `/cob/${TXID}`, status: 201, body: cobGerada() }), []);
    const missing = checkApiPixResponse({ method: 'PUT', path: `/cob/${TXID}`, status: 201, body: { ...cobGerada(), txid: undefined } });
    assert.deepEqual(missing, ["response 201 body must have required property 'txid'"]);
  });

  test('an undocumented status, a body where none is documented and a wrong media type fail', () => {
    const undocumented = checkApiPixResponse({ method: 'GET', path: `/cob/${TXID}`, status: 500, body: {} });
    assert.ok(has(undocumented, 'status 500 is not documented for GET /cob/{txid}'), `500: ${undocumented}`);
    assert.deepEqual(checkApiPixResponse({ method: 'DELETE', path: '/webhook/k', status: 204 }), []);
    const bodyOn204 = checkApiPixResponse({ method: 'DELETE', path: '/webhook/k', status: 204, body: { ok: true } });
    assert.ok(has(bodyOn204, 'no content in the file'), `204 with a body: ${bodyOn204}`);
    const problem = apiPixExample('RequisicaoInvalidaCobExample1');
    const asProblem = { method: 'PUT', path: `/cob/${TXID}`, status: 400, body: problem };
    assert.deepEqual(checkApiPixResponse({ ...asProblem, contentType: 'application/problem+json; charset=utf-8' }), []);
    const asJson = checkApiPixResponse({ ...asProblem, contentType: 'application/json' });
    assert.ok(has(asJson, 'application/json is not one the file documents'), `400 as application/json: ${asJson}`);
  });

  test('GET /pix 200 with a list of pix passes (erratum: no "cobs")', () => {
    const paginacao = { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: 1 };
    const body = { parametros: { inicio: '2020-04-01T00:00:00Z', fim: '2020-04-01T23:59:59Z', paginacao }, pix: [pix] };
    assert.deepEqual(checkApiPixResponse({ method: 'GET', path: '/pix', status: 200, body }), []);
    const noPaging = checkApiPixResponse({
      method: 'GET',
      path: '/pix',
      status: 200,
      body: { ...body, parametros: { ...body.parametros, paginacao: {} } },
    });
    assert.ok(has(noPaging, "/parametros/paginacao must have required property 'quantidadeDePaginas'"), `paging without counts: ${noPaging}`);
  });

  test('a webhook callback passes; valor "10" and a missing endToEndId fail', () => {
    assert.deepEqual(checkApiPixCallback({ pix: [apiPixExample('pixWebhook2'), { ...pix, infoPagador: 'pedido 1' }] }), []);
    const noCents = checkApiPixCallback({ pix: [{ ...pix, valor: '10' }] });
    assert.deepEqual(noCents, ['callback body /pix/0/valor must match pattern "\\d{1,10}\\.\\d{2}"']);
    assert.deepEqual(checkApiPixCallback({ pix: [{ ...pix, txid: 'PEDIDO123' }] }), [], "a static code's txid (erratum)");
    const noId = checkApiPixCallback({ pix: [{ ...pix, endToEndId: undefined }] });
    assert.deepEqual(noId, ["callback body /pix/0 must have required property 'endToEndId'"]);
  });
});

describe('the validating proxy', () => {
  const seen: string[] = [];
  const target = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/api/v2/hang')) return; // never answers
      if (req.url === '/api/v2/oauth/token') return void res.end('{"access_token":"t"}');
      const failing = req.url?.includes('undocumented');
      res.writeHead(failing ? 418 : 201, { 'content-type': 'application/json', 'x-from': 'target' });
      res.end(JSON.stringify(cobGerada()));
    });
  });
  let proxy: Awaited<ReturnType<typeof startValidatingProxy>>;
  before(async () => {
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    proxy = await startValidatingProxy({ target: `http://127.0.0.1:${(target.address() as AddressInfo).port}/api/v2`, timeoutMs: 1_000 });
  });
  after(async () => {
    await proxy.close();
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
  });
  const send = (path: string, body?: unknown, method = 'PUT') =>
    fetch(`${proxy.url}${path}`, {
      method,
      headers: AUTH,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });

  test('passes a valid exchange through unchanged and records nothing', async () => {
    const res = await send(`/cob/${TXID}`, cobBody());
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-from'), 'target');
    assert.deepEqual(await res.json(), cobGerada());
    assert.ok(seen.includes(`PUT /api/v2/cob/${TXID}`), `the target saw ${seen}`);
    await (await send('/oauth/token', { grant_type: 'client_credentials' }, 'POST')).text();
    assert.deepEqual(proxy.violations, []);
  });

  test('records a bad request, an undocumented status and a silent target, with method and path', async () => {
    const before = proxy.violations.length;
    await (await send(`/cob/${TXID}`, { ...cobBody(), valor: { original: 37 } })).text();
    await (await send(`/cob/undocumented${TXID}`, cobBody())).text();
    const silent = await send(`/hang/${TXID}`, undefined, 'GET');
    await silent.text();
    assert.equal(silent.status, 502, 'a target that does not answer yields 502');
    const recorded = proxy.violations.slice(before);
    assert.ok(has(recorded, `PUT /cob/${TXID}: request body /valor/original must be string`), `recorded: ${recorded}`);
    assert.ok(has(recorded, '→ 418: status 418 is not documented for PUT /cob/{txid}'), `recorded: ${recorded}`);
    assert.ok(has(recorded, `GET /hang/${TXID}: the target did not answer`), `recorded: ${recorded}`);
  });
});

const prism = prismCli();
describe('Prism, a second reader of the file', { skip: 'unavailable' in prism ? prism.unavailable : false }, () => {
  let server: Awaited<ReturnType<typeof startPrism>>;
  before(async () => {
    server = await startPrism({ timeoutMs: 60_000 });
  });
  after(async () => {
    await server?.close();
  });
  type PrismViolation = { location: string[]; code: string; message: string };
  const prismViolations = (res: Response) => JSON.parse(res.headers.get('sl-violations') ?? '[]') as PrismViolation[];
  /** "/loc required criacao" from Prism's finding and from ours, to compare the two readers. */
  const prismKey = (v: PrismViolation) => `/${v.location.slice(2).join('/')} ${v.code} ${/'([^']+)'/.exec(v.message)?.[1] ?? ''}`.trim();
  const ourKey = (v: string) => {
    const m = /body (\/\S*)? ?must (?:have required property '([^']+)'|match (format))/.exec(v);
    return m ? `${m[1] ?? '/'} ${m[2] ? `required ${m[2]}` : 'format'}` : v;
  };
  const put = (txid: string, body: unknown) =>
    fetch(`${server.url}/cob/${txid}`, { method: 'PUT', headers: AUTH, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });

  test('a valid PUT /cob/{txid}: 201, and both readers fault the same fields of the file example it returns', async () => {
    assert.deepEqual(putCob(cobBody()), []);
    const res = await put(TXID, cobBody());
    const body = await res.json();
    assert.equal(res.status, 201, server.output());
    const found = prismViolations(res);
    assert.deepEqual(
      found.filter((v) => v.location[0] === 'request'),
      [],
      'Prism accepts the request',
    );
    const ours = checkApiPixResponse({ method: 'PUT', path: `/cob/${TXID}`, status: 201, body, contentType: res.headers.get('content-type') ?? '' });
    // The answer is the file's example cobResponse1, which its own schema rejects: loc lacks txid and
    // criacao, and location has no scheme. Both validators must say exactly that.
    assert.deepEqual(ours.map(ourKey).sort(), found.map(prismKey).sort(), `ours: ${ours}`);
    assert.ok(has(ours, "/loc must have required property 'txid'"), `ours: ${ours}`);
  });

  test('an invalid PUT /cob/{txid}: Prism answers 400 and finds what we find', async () => {
    const body = { ...cobBody(), valor: { original: 37 } };
    const res = await put('abcdefghij', body);
    const answer = await res.json();
    assert.equal(res.status, 400, server.output());
    const found = prismViolations(res).map((v) => v.location.join('.'));
    assert.deepEqual(found.sort(), ['request.body.valor.original', 'request.path.txid']);
    const ours = putCob(body, 'abcdefghij');
    assert.equal(ours.length, 2, `ours: ${ours}`);
    assert.deepEqual(
      checkApiPixResponse({ method: 'PUT', path: '/cob/abcdefghij', status: 400, body: answer, contentType: 'application/problem+json' }),
      [],
    );
  });
});
