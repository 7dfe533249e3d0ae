import { AnswerError, readCobCompleta, readCobGerada, readDevolucao, readPix, readPixConsultados, readWebhookCompleto } from './api-pix-answers.ts';
import { type Call, createCaller } from './api-pix-call.ts';
import { ApiPixError } from './api-pix-error.ts';
import type {
  CobCompleta,
  CobGerada,
  CobRevisada,
  CobSolicitada,
  Devolucao,
  DevolucaoSolicitada,
  ListPixQuery,
  Pix,
  PixConsultados,
  WebhookCompleto,
} from './api-pix-types.ts';
import { createTokenSource } from './oauth.ts';
import { type ApiPixLogger, createAgent } from './transport.ts';
import { centsFromValor, isValor } from './valor.ts';

export { ApiPixError, type ApiPixErrorKind, isRefusal } from './api-pix-error.ts';
export type * from './api-pix-types.ts';
export type { ApiPixLogger } from './transport.ts';
export { centsFromValor, valorFromCents } from './valor.ts';

export interface ApiPixClientOptions {
  /** The PSP's API Pix root, e.g. https://pix.psp.example/api/v2 (operations are appended to its path). */
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Space-separated OAuth2 scopes, for PSPs that want them asked for. */
  scope?: string;
  /** How the token request carries the grant: form (RFC 6749, default) or JSON (Efí's Cobranças API). */
  grantBody?: 'form' | 'json';
  /** Client certificate and key (PEM): presented on every connection, to the token URL and to the API (mTLS). */
  cert?: string;
  key?: string;
  /** CA (PEM) the PSP's server certificate must chain to, instead of the system's. */
  ca?: string;
  /** connectMs bounds a TCP + TLS connection; requestMs bounds a whole call: token, attempts and backoff. */
  timeouts?: { connectMs?: number; requestMs?: number };
  /** Requests of an idempotent call after transient failures, the first included (the 401 refresh is extra). */
  maxAttempts?: number;
  /** Pooled connections per origin. */
  connections?: number;
  logger?: ApiPixLogger;
  /** Wall clock of the token cache, in ms (tests move it). */
  clock?: () => number;
}

export interface ApiPixClient {
  /** Its connections and token cache, for a client of the same PSP's other endpoints. */
  readonly transport: PixTransport;
  putCob(txid: string, body: CobSolicitada): Promise<CobGerada>;
  getCob(txid: string): Promise<CobCompleta>;
  patchCob(txid: string, body: CobRevisada): Promise<CobGerada>;
  getPix(e2eid: string): Promise<Pix>;
  listPix(query: ListPixQuery): Promise<PixConsultados>;
  /** Every Pix received between inicio and fim, page after page (1,000 a page unless told). */
  allPix(query: Omit<ListPixQuery, 'paginaAtual'>): AsyncGenerator<Pix>;
  /** Idempotent by `id`: when the PSP says the id was already used, the existing devolução of that amount is the answer. */
  putDevolucao(e2eid: string, id: string, body: DevolucaoSolicitada): Promise<Devolucao>;
  getDevolucao(e2eid: string, id: string): Promise<Devolucao>;
  putWebhook(chave: string, webhookUrl: string): Promise<void>;
  getWebhook(chave: string): Promise<WebhookCompleto>;
  /** Destroys the connection pool; calls in flight fail with kind 'network'. */
  close(): Promise<void>;
}

const defaults = { connectMs: 3_000, requestMs: 10_000, maxAttempts: 3, connections: 16 };
// allPix's bound: 1,000 pages of 1,000 Pix. An answer announcing more is a PSP fault, not a busy minute.
const max_pages = 1_000;
const all_pix_page_size = 1_000;

const TXID = /^[a-zA-Z0-9]{26,35}$/;
const E2EID = /^[a-zA-Z0-9]{32}$/;
const DEVOLUCAO_ID = /^[a-zA-Z0-9]{1,35}$/;

/** A path parameter, checked against the file's pattern (anchored) so that no id can reach another path. */
function param(value: string, pattern: RegExp, what: string, operation: string): string {
  if (typeof value !== 'string' || !pattern.test(value)) throw new RangeError(`API Pix ${operation}: ${what} does not match ${pattern.source}`);
  return value;
}

function chaveParam(chave: string, operation: string): string {
  // A DICT key (e-mail, +55 phone, CPF/CNPJ, EVP) is never a dot segment nor has control characters; encoded, it stays one segment.
  if (typeof chave !== 'string' || chave.length < 1 || chave.length > 77 || /^\.{1,2}$/.test(chave) || /[\p{Cc}\s]/u.test(chave)) {
    throw new RangeError(`API Pix ${operation}: chave is not a DICT key`);
  }
  return encodeURIComponent(chave);
}

function listQuery(q: ListPixQuery): URLSearchParams {
  const query = new URLSearchParams({ inicio: q.inicio.toISOString(), fim: q.fim.toISOString() });
  if (q.paginaAtual !== undefined) {
    if (!Number.isSafeInteger(q.paginaAtual) || q.paginaAtual < 0) throw new RangeError('API Pix GET /pix: paginaAtual must be an integer ≥ 0');
    query.set('paginacao.paginaAtual', String(q.paginaAtual));
  }
  if (q.itensPorPagina !== undefined) {
    if (!Number.isSafeInteger(q.itensPorPagina) || q.itensPorPagina < 1 || q.itensPorPagina > 1000) {
      throw new RangeError('API Pix GET /pix: itensPorPagina must be an integer from 1 to 1000');
    }
    query.set('paginacao.itensPorPagina', String(q.itensPorPagina));
  }
  if (q.txIdPresente !== undefined) query.set('txIdPresente', String(q.txIdPresente));
  return query;
}

function checkOptions(o: ApiPixClientOptions): { baseUrl: URL } {
  const urls = [o.baseUrl, o.tokenUrl].map((u) => new URL(u));
  if (urls.some((u) => u.protocol !== 'https:' && u.protocol !== 'http:')) throw new TypeError('API Pix: baseUrl and tokenUrl must be http(s) URLs');
  if (Boolean(o.cert) !== Boolean(o.key)) throw new TypeError('API Pix: cert and key go together');
  if (!o.clientId || !o.clientSecret) throw new TypeError('API Pix: clientId and clientSecret are required');
  return { baseUrl: urls[0]! };
}

const cobPath = (txid: string, op: string) => `/cob/${param(txid, TXID, 'txid', op)}`;
const pixPath = (e2eid: string, op: string) => `/pix/${param(e2eid, E2EID, 'e2eid', op)}`;
const devolucaoPath = (e2eid: string, id: string, op: string) => `${pixPath(e2eid, op)}/devolucao/${param(id, DEVOLUCAO_ID, 'id', op)}`;

/**
 * One connection pool (mTLS) and one token cache, with their deadlines: the calls of every client
 * made on it share them, whatever root of the PSP they address (the API Pix, and a PSP's own
 * endpoints beside it, such as Efí's Pix sending).
 */
export interface PixTransport {
  /** A caller of operations under `baseUrl`. */
  caller(baseUrl: string): Call;
  close(): Promise<void>;
}

export function createPixTransport(options: ApiPixClientOptions): PixTransport {
  checkOptions(options);
  const requestMs = options.timeouts?.requestMs ?? defaults.requestMs;
  const agent = createAgent({
    cert: options.cert,
    key: options.key,
    ca: options.ca,
    connectMs: options.timeouts?.connectMs ?? defaults.connectMs,
    connections: options.connections ?? defaults.connections,
  });
  const tokens = createTokenSource({ ...options, agent, requestMs, clock: options.clock ?? Date.now });
  const maxAttempts = options.maxAttempts ?? defaults.maxAttempts;
  return {
    caller: (baseUrl) => createCaller({ baseUrl: new URL(baseUrl), agent, tokens, requestMs, maxAttempts, logger: options.logger }),
    close: () => agent.destroy(),
  };
}

export function createApiPixClient(options: ApiPixClientOptions, transport = createPixTransport(options)): ApiPixClient {
  const call = transport.caller(options.baseUrl);
  const client: ApiPixClient = {
    transport,
    async putCob(txid, body) {
      const operation = 'PUT /cob/{txid}';
      if (!isValor(body.valor?.original)) throw new RangeError(`API Pix ${operation}: valor.original must be reais with two decimals`);
      return call({
        method: 'PUT',
        operation,
        path: cobPath(txid, operation),
        body,
        idempotent: true,
        read: (answer) => {
          const cob = readCobGerada(answer);
          if (!cob.pixCopiaECola) throw new AnswerError('cob.pixCopiaECola is missing');
          return cob;
        },
      });
    },
    getCob: async (txid) =>
      call({ method: 'GET', operation: 'GET /cob/{txid}', path: cobPath(txid, 'GET /cob/{txid}'), idempotent: true, read: readCobCompleta }),
    patchCob: async (txid, body) =>
      call({
        method: 'PATCH',
        operation: 'PATCH /cob/{txid}',
        path: cobPath(txid, 'PATCH /cob/{txid}'),
        body,
        idempotent: false,
        read: (a) => readCobGerada(a),
      }),
    getPix: async (e2eid) =>
      call({ method: 'GET', operation: 'GET /pix/{e2eid}', path: pixPath(e2eid, 'GET /pix/{e2eid}'), idempotent: true, read: (a) => readPix(a) }),
    listPix: async (query) =>
      call({ method: 'GET', operation: 'GET /pix', path: '/pix', query: listQuery(query), idempotent: true, read: readPixConsultados }),
    allPix: (query) => walkPages(client, query),
    putDevolucao: async (e2eid, id, body) =>
      putDevolucaoOnce(client, call, devolucaoPath(e2eid, id, 'PUT /pix/{e2eid}/devolucao/{id}'), e2eid, id, body),
    getDevolucao: async (e2eid, id) => {
      const operation = 'GET /pix/{e2eid}/devolucao/{id}';
      return call({ method: 'GET', operation, path: devolucaoPath(e2eid, id, operation), idempotent: true, read: (a) => readDevolucao(a) });
    },
    putWebhook: async (chave, webhookUrl) => {
      const operation = 'PUT /webhook/{chave}';
      await call({
        method: 'PUT',
        operation,
        path: `/webhook/${chaveParam(chave, operation)}`,
        body: { webhookUrl },
        idempotent: true,
        bodyless: true,
        read: () => {},
      });
    },
    getWebhook: async (chave) => {
      const operation = 'GET /webhook/{chave}';
      return call({ method: 'GET', operation, path: `/webhook/${chaveParam(chave, operation)}`, idempotent: true, read: readWebhookCompleto });
    },
    close: () => transport.close(),
  };
  return client;
}

async function* walkPages(client: ApiPixClient, query: Omit<ListPixQuery, 'paginaAtual'>): AsyncGenerator<Pix> {
  const invalid = (reason: string) => new ApiPixError({ kind: 'invalid-answer', operation: 'GET /pix', reason });
  let pages = 1;
  for (let page = 0; page < pages; page++) {
    const answer = await client.listPix({ ...query, itensPorPagina: query.itensPorPagina ?? all_pix_page_size, paginaAtual: page });
    const { paginaAtual, quantidadeDePaginas } = answer.parametros.paginacao;
    // A PSP that ignores the page asked for would have us read page 0 again and again and miss the rest.
    if (paginaAtual !== page) throw invalid(`asked for page ${page}, got page ${paginaAtual}`);
    if (quantidadeDePaginas > max_pages) throw invalid(`${quantidadeDePaginas} pages announced, more than the ${max_pages} walked`);
    pages = quantidadeDePaginas;
    yield* answer.pix;
  }
}

/**
 * The file answers 400 (PixDevolucaoInvalida) to a PUT whose id was already used for that Pix: the
 * same request, sent by a retry whose first answer was lost or by an earlier run of the caller. Then
 * the devolução with that id, if its amount is the one asked, is the answer: the PUT is idempotent.
 */
async function putDevolucaoOnce(
  client: ApiPixClient,
  call: Call,
  path: string,
  e2eid: string,
  id: string,
  body: DevolucaoSolicitada,
): Promise<Devolucao> {
  const operation = 'PUT /pix/{e2eid}/devolucao/{id}';
  if (!isValor(body.valor)) throw new RangeError(`API Pix ${operation}: valor must be reais with two decimals`);
  try {
    return await call({ method: 'PUT', operation, path, body, idempotent: true, read: (a) => readDevolucao(a) });
  } catch (err) {
    if (!(err instanceof ApiPixError) || err.kind !== 'http' || err.status !== 400) throw err;
    // The 400 may mean "this id is taken" after a first answer was lost: only a devolução of that id
    // the PSP does not have (404) makes the 400 a refusal; any other failure to ask leaves it unknown.
    const existing = await client.getDevolucao(e2eid, id).catch((getError: unknown) => {
      if (getError instanceof ApiPixError && getError.kind === 'http' && getError.status === 404) return null;
      throw getError;
    });
    if (existing && centsFromValor(existing.valor) === centsFromValor(body.valor)) return existing;
    throw err;
  }
}
