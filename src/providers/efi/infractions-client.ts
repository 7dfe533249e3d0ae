/**
 * Efí's MED 2.0 infractions (CONTRACT §11.5), `GET /v2/gn/infracoes` and `POST /v2/gn/infracoes/{idInfracao}/defesa`,
 * called through the API Pix client's transport (the same mTLS connections, token and deadlines) on
 * the PSP's host. Answers are checked for what the gateway reads; a page whose item cannot be read is
 * an error, never a page with a hole.
 */
import { AnswerError } from '../api-pix/client/api-pix-answers.ts';
import { ApiPixError, type PixTransport } from '../api-pix/client/api-pix-client.ts';

export type EfiInfractionStatus = 'ABERTA' | 'EM_DEFESA' | 'ACEITA' | 'REJEITADA' | 'CANCELADA_EFI';

export interface EfiInfraction {
  idInfracao: string;
  endToEndId: string;
  /** Reais, as Efí writes it (a number). */
  valor: number;
  status: EfiInfractionStatus;
  razao: string | null;
  abertura: string | null;
  prazoFinalizacao: string | null;
  defesa: string | null;
  criadoEm: string | null;
}

export interface InfractionListQuery {
  inicio: Date;
  fim: Date;
  /** From 0. */
  paginaAtual?: number;
  /** 1 to 1,000. */
  itensPorPagina?: number;
}

export interface InfractionPage {
  paginacao: { paginaAtual: number; itensPorPagina: number; quantidadeDePaginas: number; quantidadeTotalDeItens: number };
  infracoes: EfiInfraction[];
}

export interface EfiInfractionsClient {
  listInfractions(query: InfractionListQuery): Promise<InfractionPage>;
  /** Every page of the window, one after the other (at most `infraction_max_pages`). */
  infractionPages(query: Omit<InfractionListQuery, 'paginaAtual'>): AsyncGenerator<EfiInfraction[]>;
  /** Sends the receiver's defence: the infraction is contested (`analise: rejeitado`). Throws the PSP's refusal as an ApiPixError. */
  defend(idInfracao: string, justificativa: string): Promise<void>;
}

export const infraction_max_pages = 1_000;
const page_size = 1_000;
const ID = /^[A-Za-z0-9._-]{1,100}$/;
const statuses: readonly string[] = ['ABERTA', 'EM_DEFESA', 'ACEITA', 'REJEITADA', 'CANCELADA_EFI'];
type Obj = Record<string, unknown>;

function object(value: unknown, path: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AnswerError(`${path} is not an object`);
  return value as Obj;
}
const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
// A time with its offset (RFC 3339): one without would be read in this server's zone.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
/** A time the gateway can keep, as ISO; null when absent or unreadable (the infraction still counts: only its date is unknown). */
const time = (v: unknown): string | null => {
  const t = text(v);
  return t !== null && RFC3339.test(t) && !Number.isNaN(Date.parse(t)) ? new Date(t).toISOString() : null;
};
const count = (o: Obj, name: string, path: string, min = 0): number => {
  const v = o[name];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new AnswerError(`${path}.${name} is not an integer ≥ ${min}`);
  return v;
};

function readInfraction(item: unknown, path: string): EfiInfraction {
  const o = object(item, path);
  const idInfracao = text(o.idInfracao);
  const endToEndId = text(o.endToEndId);
  if (!idInfracao) throw new AnswerError(`${path}.idInfracao is missing`);
  if (!endToEndId) throw new AnswerError(`${path}.endToEndId is missing`);
  if (typeof o.valor !== 'number' || !Number.isFinite(o.valor) || o.valor < 0) throw new AnswerError(`${path}.valor is not a sum of reais`);
  if (typeof o.status !== 'string' || !statuses.includes(o.status)) throw new AnswerError(`${path}.status is not an infraction's status`);
  const analise = typeof o.dadosAnalise === 'object' && o.dadosAnalise !== null ? (o.dadosAnalise as Obj) : {};
  const criadoEm = time(o.criadoEm) ?? time(analise.abertura);
  return {
    idInfracao,
    endToEndId,
    valor: o.valor,
    status: o.status as EfiInfractionStatus,
    razao: text(o.razao),
    abertura: time(analise.abertura),
    prazoFinalizacao: time(analise.prazoFinalizacao),
    defesa: text(o.defesa),
    criadoEm,
  };
}

function readPage(body: unknown): InfractionPage {
  const o = object(body, 'answer');
  const path = 'answer.parametros.paginacao';
  const paginacao = object(object(o.parametros, 'answer.parametros').paginacao, path);
  const infracoes = o.infracoes === undefined ? [] : o.infracoes;
  if (!Array.isArray(infracoes)) throw new AnswerError('answer.infracoes is not a list');
  return {
    paginacao: {
      paginaAtual: count(paginacao, 'paginaAtual', path),
      itensPorPagina: count(paginacao, 'itensPorPagina', path, 1),
      quantidadeDePaginas: count(paginacao, 'quantidadeDePaginas', path),
      quantidadeTotalDeItens: count(paginacao, 'quantidadeTotalDeItens', path),
    },
    infracoes: infracoes.map((item, i) => readInfraction(item, `answer.infracoes[${i}]`)),
  };
}

/** The list's query, as the SDK's MedListParamsSchema names it. */
export function infractionQuery(q: InfractionListQuery): URLSearchParams {
  const query = new URLSearchParams({ inicio: q.inicio.toISOString(), fim: q.fim.toISOString() });
  if (q.paginaAtual !== undefined) {
    if (!Number.isSafeInteger(q.paginaAtual) || q.paginaAtual < 0)
      throw new RangeError('Efí GET /v2/gn/infracoes: paginaAtual must be an integer ≥ 0');
    query.set('paginacao.paginaAtual', String(q.paginaAtual));
  }
  if (q.itensPorPagina !== undefined) {
    if (!Number.isSafeInteger(q.itensPorPagina) || q.itensPorPagina < 1 || q.itensPorPagina > 1000)
      throw new RangeError('Efí GET /v2/gn/infracoes: itensPorPagina must be an integer from 1 to 1000');
    query.set('paginacao.itensPorPagina', String(q.itensPorPagina));
  }
  return query;
}

async function* walk(client: EfiInfractionsClient, query: Omit<InfractionListQuery, 'paginaAtual'>): AsyncGenerator<EfiInfraction[]> {
  const invalid = (reason: string) => new ApiPixError({ kind: 'invalid-answer', operation: 'GET /v2/gn/infracoes', reason });
  let pages = 1;
  for (let page = 0; page < pages; page++) {
    const answer = await client.listInfractions({ ...query, itensPorPagina: query.itensPorPagina ?? page_size, paginaAtual: page });
    const { paginaAtual, quantidadeDePaginas } = answer.paginacao;
    // A PSP that ignores the page asked for would have us read page 0 again and again and miss the rest.
    if (paginaAtual !== page) throw invalid(`asked for page ${page}, got page ${paginaAtual}`);
    if (quantidadeDePaginas > infraction_max_pages)
      throw invalid(`${quantidadeDePaginas} pages announced, more than the ${infraction_max_pages} walked`);
    pages = quantidadeDePaginas;
    yield answer.infracoes;
  }
}

/** `baseUrl`: the PSP's host, e.g. https://pix.api.efipay.com.br (the infractions live at /v2/gn/infracoes there). */
export function createEfiInfractionsClient(baseUrl: string, transport: PixTransport): EfiInfractionsClient {
  const call = transport.caller(baseUrl);
  const client: EfiInfractionsClient = {
    listInfractions: (query) =>
      call({
        method: 'GET',
        operation: 'GET /v2/gn/infracoes',
        path: '/v2/gn/infracoes',
        query: infractionQuery(query),
        idempotent: true,
        read: readPage,
      }),
    infractionPages: (query) => walk(client, query),
    defend: async (idInfracao, justificativa) => {
      const operation = 'POST /v2/gn/infracoes/{idInfracao}/defesa';
      if (!ID.test(idInfracao)) throw new RangeError(`Efí ${operation}: idInfracao does not match ${ID.source}`);
      await call({
        method: 'POST',
        operation,
        path: `/v2/gn/infracoes/${encodeURIComponent(idInfracao)}/defesa`,
        body: { analise: 'rejeitado', justificativa },
        // Sent once: a lost answer is settled by the next poll (EM_DEFESA), never by a quick resend.
        idempotent: false,
        bodyless: true,
        read: () => {},
      });
    },
  };
  return client;
}
