/** GET /pix, GET /pix/{e2eid}, PUT and GET /pix/{e2eid}/devolucao/{id}. */
import type { FastifyInstance } from 'fastify';
import { devolucaoJson, findDevolucao } from './devolucao-store.ts';
import { type DevolucaoRequest, type Devolucoes, devolucaoInvalida } from './devolucoes.ts';
import { sortedJson } from './encoders.ts';
import { listPix, type PixFilter, pixById, pixJsons } from './pix-store.ts';
import { notFound, problem, type Violacao } from './problems.ts';
import type { Db } from './sql.ts';
import { centsOf, compact, DEVOLUCAO_ID_RE, E2E_ID_RE, iso, PIX_TXID_RE, parseDateTime } from './wire.ts';

const pixNaoEncontrado = () => notFound('PixNaoEncontrado', 'Pix não encontrado para o e2eid informado.');

export function registerPixRoutes(app: FastifyInstance, db: Db, devolucoes: Devolucoes): void {
  app.get<{ Querystring: Record<string, unknown> }>('/pix', { config: { scope: 'pix.read' } }, async (request) => {
    const { filter, page, perPage } = checkPixQuery(request.query);
    const { total, rows } = await listPix(db, filter, page, perPage);
    const parametros = compact({
      inicio: iso(filter.inicio),
      fim: iso(filter.fim),
      txid: filter.txid,
      txIdPresente: filter.txIdPresente,
      devolucaoPresente: filter.devolucaoPresente,
      cpf: filter.cpf,
      cnpj: filter.cnpj,
      paginacao: {
        paginaAtual: page,
        itensPorPagina: perPage,
        // The file's minimum is 1, even for an empty result.
        quantidadeDePaginas: Math.max(1, Math.ceil(total / perPage)),
        quantidadeTotalDeItens: total,
      },
    });
    return { parametros, pix: await pixJsons(db, rows) };
  });

  app.get<{ Params: { e2eid: string } }>('/pix/:e2eid', { config: { scope: 'pix.read' } }, async (request) => {
    const pix = E2E_ID_RE.test(request.params.e2eid) ? await pixById(db, request.params.e2eid) : null;
    if (!pix) throw pixNaoEncontrado();
    return pix;
  });

  app.put<{ Params: { e2eid: string; id: string } }>('/pix/:e2eid/devolucao/:id', { config: { scope: 'pix.write' } }, async (request, reply) => {
    const { e2eid, id } = request.params;
    if (!E2E_ID_RE.test(e2eid)) throw pixNaoEncontrado();
    if (!DEVOLUCAO_ID_RE.test(id)) throw devolucaoInvalida('O id da devolução deve ter de 1 a 35 caracteres [a-zA-Z0-9].', 'id');
    const devolucao = await devolucoes.request(e2eid, id, checkDevolucaoBody(request.body));
    return reply.status(201).send(devolucao);
  });

  app.get<{ Params: { e2eid: string; id: string } }>('/pix/:e2eid/devolucao/:id', { config: { scope: 'pix.read' } }, async (request) => {
    const { e2eid, id } = request.params;
    const row = E2E_ID_RE.test(e2eid) && DEVOLUCAO_ID_RE.test(id) ? await findDevolucao(db, e2eid, id) : null;
    if (!row) throw notFound('PixDevolucaoNaoEncontrada', 'Devolução não encontrada para o e2eid informado.');
    return devolucaoJson(row);
  });
}

function checkDevolucaoBody(body: unknown): DevolucaoRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw devolucaoInvalida('O corpo deve ser um objeto JSON.', 'devolucao');
  const { valor, natureza, descricao } = body as Record<string, unknown>;
  const cents = centsOf(valor);
  if (cents === null) throw devolucaoInvalida('O campo devolucao.valor não respeita o schema.', 'devolucao.valor');
  if (cents === 0) throw devolucaoInvalida('O campo devolucao.valor deve ser maior que zero.', 'devolucao.valor');
  if (natureza === 'RETIRADA') throw devolucaoInvalida('A natureza RETIRADA só cabe a Pix Saque ou Pix Troco.', 'devolucao.natureza');
  if (natureza !== undefined && natureza !== 'ORIGINAL')
    throw devolucaoInvalida('O campo devolucao.natureza não respeita o schema.', 'devolucao.natureza');
  if (descricao !== undefined && (typeof descricao !== 'string' || descricao.length > 140)) {
    throw devolucaoInvalida('O campo devolucao.descricao deve ser um texto de até 140 caracteres.', 'devolucao.descricao');
  }
  const request = compact({ valorCents: cents, natureza: 'ORIGINAL' as const, descricao: descricao as string | undefined });
  return { ...request, canonical: sortedJson(request) };
}

const BOOLEAN: Record<string, boolean> = { true: true, false: false };

/** The query of GET /pix, or a 400 PixConsultaInvalida naming every bad parameter. */
function checkPixQuery(query: Record<string, unknown>): { filter: PixFilter; page: number; perPage: number } {
  const violacoes: Violacao[] = [];
  const bad = (propriedade: string, razao: string) => violacoes.push({ propriedade, razao });
  const text = (name: string): string | null => {
    const value = query[name];
    if (value === undefined) return null;
    if (typeof value === 'string') return value;
    bad(name, `O parâmetro ${name} foi informado mais de uma vez.`);
    return null;
  };
  const inicio = parseDateTime(text('inicio'));
  const fim = parseDateTime(text('fim'));
  if (!inicio) bad('inicio', 'O parâmetro inicio é obrigatório e deve ser um timestamp RFC 3339.');
  if (!fim) bad('fim', 'O parâmetro fim é obrigatório e deve ser um timestamp RFC 3339.');
  if (inicio && fim && fim < inicio) bad('fim', 'O timestamp representado pelo parâmetro fim é anterior ao parâmetro inicio.');
  const txid = text('txid');
  if (txid !== null && !PIX_TXID_RE.test(txid)) bad('txid', 'O parâmetro txid não respeita o schema.');
  const flag = (name: string): boolean | null => {
    const value = text(name);
    if (value !== null && !(value in BOOLEAN)) bad(name, `O parâmetro ${name} deve ser true ou false.`);
    return value === null ? null : (BOOLEAN[value] ?? null);
  };
  const txIdPresente = flag('txIdPresente');
  const devolucaoPresente = flag('devolucaoPresente');
  const cpf = text('cpf');
  const cnpj = text('cnpj');
  if (cpf !== null && !/^\d{11}$/.test(cpf)) bad('cpf', 'O parâmetro cpf não respeita o schema.');
  if (cnpj !== null && !/^[0-9A-Z]{14}$/.test(cnpj)) bad('cnpj', 'O parâmetro cnpj não respeita o schema.');
  if (cpf !== null && cnpj !== null) bad('cpf', 'Os parâmetros cpf e cnpj não podem ser usados ao mesmo tempo.');
  const page = integer(text('paginacao.paginaAtual'), 0, 0, 2_147_483_647);
  const perPage = integer(text('paginacao.itensPorPagina'), 100, 1, 1000);
  if (page === null) bad('paginacao.paginaAtual', 'O parâmetro paginacao.paginaAtual deve ser um inteiro não negativo.');
  if (perPage === null) bad('paginacao.itensPorPagina', 'O parâmetro paginacao.itensPorPagina deve ser um inteiro de 1 a 1000.');
  if (violacoes.length > 0) {
    throw problem(
      400,
      'PixConsultaInvalida',
      'Consulta inválida.',
      'Os parâmetros de consulta à lista de pix recebidos não respeitam o schema.',
      violacoes,
    );
  }
  return { filter: { inicio: inicio!, fim: fim!, txid, txIdPresente, devolucaoPresente, cpf, cnpj }, page: page!, perPage: perPage! };
}

function integer(text: string | null, fallback: number, min: number, max: number): number | null {
  if (text === null) return fallback;
  if (!/^\d{1,10}$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}
