/**
 * Efí's reads of the account's own record (CONTRACT §15): GET /v2/gn/pix/enviados (the Pix sent in
 * a period, paged as the API Pix pages, in the shape of the SDK's PixSendListResponseSchema; each
 * item is the same object GET /v2/gn/pix/enviados/id-envio/{idEnvio} answers) and GET /v2/gn/saldo
 * (GetAccountBalanceResponseSchema: `saldo` in reais). Errors as Efí's own endpoints answer them,
 * `{ nome, mensagem }`.
 */
import type { FastifyInstance } from 'fastify';
import type { Sends } from './sends.ts';
import { listSent, type SentStatus, sentJson } from './sent-store.ts';
import type { Queryable } from './sql.ts';
import { compact, iso, parseDateTime, valorOf } from './wire.ts';

const statuses: readonly string[] = ['EM_PROCESSAMENTO', 'REALIZADO', 'NAO_REALIZADO'];

export interface AccountRouteOptions {
  db: Queryable;
  sends: Sends;
  payerKey: string;
}

interface SentQuery {
  inicio: Date;
  fim: Date;
  status: SentStatus | null;
  cpf: string | null;
  cnpj: string | null;
  page: number;
  perPage: number;
}

/** The query of GET /v2/gn/pix/enviados, or the words of what is wrong with it. */
function readSentQuery(query: Record<string, unknown>): SentQuery | string {
  const text = (name: string): string | null => (typeof query[name] === 'string' ? (query[name] as string) : null);
  const inicio = parseDateTime(text('inicio'));
  const fim = parseDateTime(text('fim'));
  if (!inicio || !fim) return 'Os parâmetros inicio e fim são obrigatórios e devem ser timestamps RFC 3339.';
  if (fim < inicio) return 'O parâmetro fim é anterior ao parâmetro inicio.';
  const status = text('status');
  if (status !== null && !statuses.includes(status)) return 'O parâmetro status não é um status de Pix enviado.';
  const cpf = text('cpf');
  const cnpj = text('cnpj');
  if ((cpf !== null && !/^\d{11}$/.test(cpf)) || (cnpj !== null && !/^[0-9A-Z]{14}$/.test(cnpj))) return 'O parâmetro cpf ou cnpj é inválido.';
  if (cpf !== null && cnpj !== null) return 'Os parâmetros cpf e cnpj não podem ser usados ao mesmo tempo.';
  const page = integer(text('paginacao.paginaAtual'), 0, 0, 2_147_483_647);
  const perPage = integer(text('paginacao.itensPorPagina'), 100, 1, 1000);
  if (page === null) return 'O parâmetro paginacao.paginaAtual deve ser um inteiro não negativo.';
  if (perPage === null) return 'O parâmetro paginacao.itensPorPagina deve ser um inteiro de 1 a 1000.';
  return { inicio, fim, status: status as SentStatus | null, cpf, cnpj, page, perPage };
}

function integer(text: string | null, fallback: number, min: number, max: number): number | null {
  if (text === null) return fallback;
  if (!/^\d{1,10}$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}

export function registerAccountRoutes(app: FastifyInstance, o: AccountRouteOptions): void {
  app.get<{ Querystring: Record<string, unknown> }>('/v2/gn/pix/enviados', { config: { scope: 'gn.pix.send.read' } }, async (request, reply) => {
    const q = readSentQuery(request.query);
    if (typeof q === 'string') return reply.status(400).send({ nome: 'parametro_invalido', mensagem: q });
    const filter = { inicio: q.inicio, fim: q.fim, status: q.status, documento: q.cpf ?? q.cnpj };
    const { total, rows } = await listSent(o.db, filter, q.page, q.perPage);
    const parametros = compact({
      inicio: iso(q.inicio),
      fim: iso(q.fim),
      paginacao: {
        paginaAtual: q.page,
        itensPorPagina: q.perPage,
        // As GET /pix: at least one page, even for an empty result.
        quantidadeDePaginas: Math.max(1, Math.ceil(total / q.perPage)),
        quantidadeTotalDeItens: total,
      },
      status: q.status ?? undefined,
      cpf: q.cpf ?? undefined,
      cnpj: q.cnpj ?? undefined,
    });
    return { parametros, pix: rows.map(sentJson) };
  });

  app.get<{ Querystring: Record<string, unknown> }>('/v2/gn/saldo', { config: { scope: 'gn.balance.read' } }, async (request) => {
    const cents = await o.sends.balanceCents(o.payerKey);
    // Only a fault (a send booked twice) can take it below zero; it is then shown as it is.
    const saldo = `${cents < 0 ? '-' : ''}${valorOf(Math.abs(cents))}`;
    // Nothing is ever blocked here (no court order, no MED hold): the blocks asked for are zero.
    return request.query.bloqueios === 'true' ? { saldo, bloqueios: { judicial: '0.00', med: '0.00', total: '0.00' } } : { saldo };
  });
}
