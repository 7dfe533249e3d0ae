/**
 * Efí's MED 2.0 endpoints, as its SDK's schemas describe them: GET /v2/gn/infracoes (the infractions
 * opened in a period, paged as the API Pix pages; MedListResponseSchema) and POST
 * /v2/gn/infracoes/{idInfracao}/defesa (MedSubmitDefenseBodySchema, strict). Errors are the
 * package's problems, each naming the field at fault.
 */
import type { FastifyInstance } from 'fastify';
import type { Infractions } from './infractions.ts';
import { problem } from './problems.ts';
import { iso, parseDateTime } from './wire.ts';

const JUSTIFICATIVA_MAX = 5000;
const PAGE_MAX = 2_147_483_647;

const consultaInvalida = (razao: string, propriedade: string) =>
  problem(400, 'InfracaoConsultaInvalida', 'Consulta inválida.', 'Os parâmetros da consulta de infrações são inválidos.', [{ razao, propriedade }]);

const defesaInvalida = (razao: string, propriedade: string) =>
  problem(400, 'InfracaoDefesaInvalida', 'Defesa inválida.', 'A defesa não respeita o schema da requisição.', [{ razao, propriedade }]);

export interface InfractionQuery {
  inicio: Date;
  fim: Date;
  page: number;
  perPage: number;
}

/** An integer of the query in [min, max], its default when absent, or null. */
function integer(text: unknown, fallback: number, min: number, max: number): number | null {
  if (text === undefined) return fallback;
  if (typeof text !== 'string' || !/^\d{1,10}$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}

/** The query of GET /v2/gn/infracoes, checked (a repeated parameter is no value of it). */
export function readInfractionQuery(query: Record<string, unknown>): InfractionQuery {
  const inicio = parseDateTime(query.inicio);
  if (!inicio) throw consultaInvalida('O parâmetro inicio é obrigatório e deve ser um timestamp RFC 3339.', 'inicio');
  const fim = parseDateTime(query.fim);
  if (!fim) throw consultaInvalida('O parâmetro fim é obrigatório e deve ser um timestamp RFC 3339.', 'fim');
  if (fim < inicio) throw consultaInvalida('O parâmetro fim é anterior ao parâmetro inicio.', 'fim');
  const page = integer(query['paginacao.paginaAtual'], 0, 0, PAGE_MAX);
  if (page === null) throw consultaInvalida('O parâmetro deve ser um inteiro não negativo.', 'paginacao.paginaAtual');
  const perPage = integer(query['paginacao.itensPorPagina'], 100, 1, 1000);
  if (perPage === null) throw consultaInvalida('O parâmetro deve ser um inteiro de 1 a 1000.', 'paginacao.itensPorPagina');
  return { inicio, fim, page, perPage };
}

/** The body of a defence: exactly `{ analise: 'rejeitado', justificativa }`; its justification. */
export function readDefenseBody(body: unknown): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw defesaInvalida('O corpo deve ser um objeto JSON.', 'defesa');
  const fields = body as Record<string, unknown>;
  const extra = Object.keys(fields).find((k) => k !== 'analise' && k !== 'justificativa');
  if (extra !== undefined) throw defesaInvalida('Campo não permitido na defesa.', extra);
  // The receiver only contests: agreeing with an infraction is the absence of a defence.
  if (fields.analise !== 'rejeitado') throw defesaInvalida('O campo analise deve ser "rejeitado".', 'analise');
  const justificativa = fields.justificativa;
  if (typeof justificativa !== 'string' || justificativa.trim() === '' || justificativa.length > JUSTIFICATIVA_MAX) {
    throw defesaInvalida(`O campo justificativa deve ser um texto de 1 a ${JUSTIFICATIVA_MAX} caracteres.`, 'justificativa');
  }
  return justificativa;
}

export function registerInfractionRoutes(app: FastifyInstance, infractions: Infractions): void {
  app.get<{ Querystring: Record<string, unknown> }>('/v2/gn/infracoes', { config: { scope: 'gn.infractions.read' } }, async (request) => {
    const q = readInfractionQuery(request.query);
    const { total, infracoes } = await infractions.list(q.inicio, q.fim, q.page, q.perPage);
    const paginacao = {
      paginaAtual: q.page,
      itensPorPagina: q.perPage,
      quantidadeDePaginas: Math.ceil(total / q.perPage),
      quantidadeTotalDeItens: total,
    };
    return { parametros: { inicio: iso(q.inicio), fim: iso(q.fim), paginacao }, infracoes };
  });

  app.post<{ Params: { idInfracao: string } }>(
    '/v2/gn/infracoes/:idInfracao/defesa',
    { config: { scope: 'gn.infractions.write' } },
    async (request) => infractions.defend(request.params.idInfracao, readDefenseBody(request.body)),
  );
}
