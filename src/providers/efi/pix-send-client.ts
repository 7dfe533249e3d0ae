/**
 * Efí's Pix sending endpoints (CONTRACT §11.3), called through the API Pix client's transport: the
 * same mTLS connections, token cache and deadlines. Answers are checked for what the gateway reads;
 * Efí's documentation and SDK name the end-to-end id differently (`e2eId`, `endToEndId`): both are read.
 */
import type { PayoutStatus } from '../../domain/provider-facts.ts';
import { AnswerError } from '../api-pix/client/api-pix-answers.ts';
import { ApiPixError, type PixTransport } from '../api-pix/client/api-pix-client.ts';
import { isValor } from '../api-pix/client/valor.ts';

export interface PixSendBody {
  valor: string;
  pagador: { chave: string; infoPagador?: string };
  favorecido: { chave: string; cpf?: string; cnpj?: string };
}

export interface PixSendAccepted {
  idEnvio: string;
  endToEndId: string | null;
  valor: string;
}

export interface SentReturn {
  /** rtrId, or the devolução's id when Efí gives one: what makes it one. */
  id: string;
  valor: string;
  /** When the money came back: its `horario` (a time, or liquidacao else solicitacao); null when Efí gives none. */
  at?: string | null;
}

export interface SentPix {
  idEnvio: string;
  endToEndId: string | null;
  valor: string;
  status: PayoutStatus;
  /** Why it was not made, in Efí's words. */
  reason: string | null;
  returns: SentReturn[];
}

/** A sent Pix as GET /v2/gn/pix/enviados lists it: with the time Efí took the money. */
export interface SentPixListed extends SentPix {
  /** horario.solicitacao: when the send was taken from the account's balance. */
  requestedAt: string;
  /** horario.liquidacao, when it was settled. */
  settledAt: string | null;
}

export interface SentListQuery {
  inicio: Date;
  fim: Date;
  /** From 0. */
  paginaAtual?: number;
  /** 1 to 1,000. */
  itensPorPagina?: number;
}

export interface SentPage {
  paginacao: { paginaAtual: number; itensPorPagina: number; quantidadeDePaginas: number; quantidadeTotalDeItens: number };
  pix: SentPixListed[];
}

/** What reconciliation reads of the paying account at Efí (CONTRACT §15). */
export interface EfiAccountReads {
  /** GET /v2/gn/pix/enviados: one page of the Pix sent (requested) between inicio and fim. */
  listSent(query: SentListQuery): Promise<SentPage>;
  /** Every page of it, one after the other (1,000 a page unless told, at most 1,000 pages). */
  sentPages(query: Omit<SentListQuery, 'paginaAtual'>): AsyncGenerator<SentPixListed[]>;
  /** GET /v2/gn/saldo: the account's balance, in cents. */
  getBalance(): Promise<number>;
}

export interface EfiPixSendClient {
  sendPix(idEnvio: string, body: PixSendBody): Promise<PixSendAccepted>;
  getSent(idEnvio: string): Promise<SentPix>;
  /** Where Efí posts the paying key's callbacks (it appends /pix). */
  putWebhook(chave: string, webhookUrl: string): Promise<void>;
}

const ID_ENVIO = /^[a-zA-Z0-9]{1,35}$/;
const statuses: readonly string[] = ['EM_PROCESSAMENTO', 'REALIZADO', 'NAO_REALIZADO'];
type Obj = Record<string, unknown>;

function object(value: unknown, path: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AnswerError(`${path} is not an object`);
  return value as Obj;
}
const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

function valor(o: Obj, path: string): string {
  if (!isValor(o.valor)) throw new AnswerError(`${path}.valor is not reais with two decimals`);
  return o.valor;
}

function readAccepted(body: unknown, idEnvio: string): PixSendAccepted {
  const o = object(body, 'answer');
  if (o.idEnvio !== undefined && o.idEnvio !== idEnvio) throw new AnswerError(`answer.idEnvio is not the one sent`);
  return { idEnvio, endToEndId: text(o.e2eId) ?? text(o.endToEndId), valor: valor(o, 'answer') };
}

/** A time Efí gives as a string, or as `{ solicitacao, liquidacao }` (settled first). */
function timeOf(horario: unknown): string | null {
  if (typeof horario === 'string') return text(horario);
  const h = typeof horario === 'object' && horario !== null ? (horario as Obj) : {};
  return text(h.liquidacao) ?? text(h.solicitacao);
}

function readReturns(o: Obj, path: string): SentReturn[] {
  const returns = Array.isArray(o.devolucoes) ? o.devolucoes : [];
  return (
    returns
      .map((d, i) => object(d, `${path}.devolucoes[${i}]`))
      // A devolução under way or not made moved no money yet; Efí's examples leave the status out of those done.
      .filter((d) => d.status === undefined || d.status === 'DEVOLVIDO')
      .map((d, i) => {
        const id = text(d.rtrId) ?? text(d.id);
        if (!id) throw new AnswerError(`${path}.devolucoes[${i}] has no rtrId`);
        return { id, valor: valor(d, `${path}.devolucoes[${i}]`), at: timeOf(d.horario) };
      })
  );
}

/** A sent Pix, whichever read answers it (the caller checks its idEnvio), and its times. */
function readSentPix(body: unknown, path: string): { sent: SentPix; requestedAt: string | null; settledAt: string | null } {
  const o = object(body, path);
  const idEnvio = text(o.idEnvio);
  if (!idEnvio) throw new AnswerError(`${path}.idEnvio is missing`);
  if (typeof o.status !== 'string' || !statuses.includes(o.status)) throw new AnswerError(`${path}.status is not a status of a sent Pix`);
  const extras = typeof o.gnExtras === 'object' && o.gnExtras !== null ? (o.gnExtras as Obj) : {};
  const erro = typeof extras.erro === 'object' && extras.erro !== null ? (extras.erro as Obj) : {};
  const horario = typeof o.horario === 'object' && o.horario !== null ? (o.horario as Obj) : {};
  const sent: SentPix = {
    idEnvio,
    endToEndId: text(o.endToEndId) ?? text(o.e2eId),
    valor: valor(o, path),
    status: o.status as PayoutStatus,
    reason: text(erro.motivo) ?? text(o.motivo),
    returns: readReturns(o, path),
  };
  return { sent, requestedAt: text(horario.solicitacao), settledAt: text(horario.liquidacao) };
}

function readSent(body: unknown, idEnvio: string): SentPix {
  if (text(object(body, 'sent').idEnvio) !== idEnvio) throw new AnswerError('sent.idEnvio is not the one asked for');
  return readSentPix(body, 'sent').sent;
}

const count = (o: Obj, name: string, path: string, min = 0): number => {
  const v = o[name];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new AnswerError(`${path}.${name} is not an integer ≥ ${min}`);
  return v;
};

/** One page of GET /v2/gn/pix/enviados: every item must read, or the page is an error (a record with a hole is no record). */
function readSentPage(body: unknown): SentPage {
  const o = object(body, 'answer');
  const paginacao = object(object(o.parametros, 'answer.parametros').paginacao, 'answer.parametros.paginacao');
  const path = 'answer.parametros.paginacao';
  const pix = o.pix === undefined ? [] : o.pix;
  if (!Array.isArray(pix)) throw new AnswerError('answer.pix is not a list');
  return {
    paginacao: {
      paginaAtual: count(paginacao, 'paginaAtual', path),
      itensPorPagina: count(paginacao, 'itensPorPagina', path, 1),
      quantidadeDePaginas: count(paginacao, 'quantidadeDePaginas', path),
      quantidadeTotalDeItens: count(paginacao, 'quantidadeTotalDeItens', path),
    },
    pix: pix.map((item, i) => {
      const { sent, requestedAt, settledAt } = readSentPix(item, `answer.pix[${i}]`);
      if (!requestedAt) throw new AnswerError(`answer.pix[${i}].horario.solicitacao is missing`);
      return { ...sent, requestedAt, settledAt };
    }),
  };
}

const SALDO = /^-?\d{1,13}\.\d{2}$/;
function readBalance(body: unknown): number {
  const saldo = object(body, 'answer').saldo;
  if (typeof saldo !== 'string' || !SALDO.test(saldo)) throw new AnswerError('answer.saldo is not reais with two decimals');
  // Digits only, never a float: "-12.34" → -1234.
  return Number(saldo.replace('.', '')) || 0;
}

export const sent_list_max_pages = 1_000;
const sent_list_page_size = 1_000;

/** GET /v2/gn/pix/enviados's query, as the SDK's PixSendListParamsSchema names it. */
export function sentListQuery(q: SentListQuery): URLSearchParams {
  const query = new URLSearchParams({ inicio: q.inicio.toISOString(), fim: q.fim.toISOString() });
  if (q.paginaAtual !== undefined) {
    if (!Number.isSafeInteger(q.paginaAtual) || q.paginaAtual < 0)
      throw new RangeError('Efí GET /v2/gn/pix/enviados: paginaAtual must be an integer ≥ 0');
    query.set('paginacao.paginaAtual', String(q.paginaAtual));
  }
  if (q.itensPorPagina !== undefined) {
    if (!Number.isSafeInteger(q.itensPorPagina) || q.itensPorPagina < 1 || q.itensPorPagina > 1000) {
      throw new RangeError('Efí GET /v2/gn/pix/enviados: itensPorPagina must be an integer from 1 to 1000');
    }
    query.set('paginacao.itensPorPagina', String(q.itensPorPagina));
  }
  return query;
}

async function* walkSent(reads: EfiAccountReads, query: Omit<SentListQuery, 'paginaAtual'>): AsyncGenerator<SentPixListed[]> {
  const invalid = (reason: string) => new ApiPixError({ kind: 'invalid-answer', operation: 'GET /v2/gn/pix/enviados', reason });
  let pages = 1;
  for (let page = 0; page < pages; page++) {
    const answer = await reads.listSent({ ...query, itensPorPagina: query.itensPorPagina ?? sent_list_page_size, paginaAtual: page });
    const { paginaAtual, quantidadeDePaginas } = answer.paginacao;
    // A PSP that ignores the page asked for would have us read page 0 again and again and miss the rest.
    if (paginaAtual !== page) throw invalid(`asked for page ${page}, got page ${paginaAtual}`);
    if (quantidadeDePaginas > sent_list_max_pages)
      throw invalid(`${quantidadeDePaginas} pages announced, more than the ${sent_list_max_pages} walked`);
    pages = quantidadeDePaginas;
    yield answer.pix;
  }
}

function idEnvioParam(idEnvio: string, operation: string): string {
  if (!ID_ENVIO.test(idEnvio)) throw new RangeError(`Efí ${operation}: idEnvio does not match ${ID_ENVIO.source}`);
  return idEnvio;
}

function chaveParam(chave: string): string {
  if (chave.length < 1 || chave.length > 77 || /^\.{1,2}$/.test(chave) || /[\p{Cc}\s]/u.test(chave)) {
    throw new RangeError('Efí PUT /v2/webhook/{chave}: chave is not a DICT key');
  }
  return encodeURIComponent(chave);
}

/** `baseUrl`: Efí's Pix API root, e.g. https://pix.api.efipay.com.br. */
export function createEfiPixSendClient(baseUrl: string, transport: PixTransport): EfiPixSendClient & EfiAccountReads {
  const call = transport.caller(baseUrl);
  const client: EfiPixSendClient & EfiAccountReads = {
    sendPix: (idEnvio, body) =>
      call({
        method: 'PUT',
        operation: 'PUT /v3/gn/pix/{idEnvio}',
        path: `/v3/gn/pix/${idEnvioParam(idEnvio, 'PUT /v3/gn/pix/{idEnvio}')}`,
        body,
        // Sent once per round: a lost answer is found by the next round's 409 and GET, never by a quick resend.
        idempotent: false,
        read: (a) => readAccepted(a, idEnvio),
      }),
    getSent: (idEnvio) => {
      const operation = 'GET /v2/gn/pix/enviados/id-envio/{idEnvio}';
      return call({
        method: 'GET',
        operation,
        path: `/v2/gn/pix/enviados/id-envio/${idEnvioParam(idEnvio, operation)}`,
        idempotent: true,
        read: (a) => readSent(a, idEnvio),
      });
    },
    putWebhook: async (chave, webhookUrl) => {
      await call({
        method: 'PUT',
        operation: 'PUT /v2/webhook/{chave}',
        path: `/v2/webhook/${chaveParam(chave)}`,
        body: { webhookUrl },
        idempotent: true,
        bodyless: true,
        read: () => {},
      });
    },
    listSent: (query) =>
      call({
        method: 'GET',
        operation: 'GET /v2/gn/pix/enviados',
        path: '/v2/gn/pix/enviados',
        query: sentListQuery(query),
        idempotent: true,
        read: readSentPage,
      }),
    sentPages: (query) => walkSent(client, query),
    getBalance: () => call({ method: 'GET', operation: 'GET /v2/gn/saldo', path: '/v2/gn/saldo', idempotent: true, read: readBalance }),
  };
  return client;
}
