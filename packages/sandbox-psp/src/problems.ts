/**
 * Errors as the API Pix answers them: RFC 7807 problem+json, `type`
 * https://pix.bcb.gov.br/api/v2/error/<TipoErro>, and `violacoes` naming each bad field.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { PspLogger } from './types.ts';

export interface Violacao {
  razao: string;
  propriedade: string;
  valor?: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  correlationId?: string;
  violacoes?: Violacao[];
}

const ERROR_BASE = 'https://pix.bcb.gov.br/api/v2/error/';

/** Thrown by a route; the error handler answers it as is. */
export class PspProblem extends Error {
  readonly body: ProblemBody;
  readonly headers: Record<string, string>;

  constructor(body: ProblemBody, headers: Record<string, string> = {}) {
    super(body.detail ?? body.title);
    this.body = body;
    this.headers = headers;
  }
}

/** One of the file's error types (`tipo` is the last segment of `type`). */
export function problem(status: number, tipo: string, title: string, detail?: string, violacoes?: Violacao[]): PspProblem {
  const body: ProblemBody = { type: ERROR_BASE + tipo, title, status };
  if (detail) body.detail = detail;
  if (violacoes && violacoes.length > 0) body.violacoes = violacoes;
  return new PspProblem(body);
}

export const notFound = (tipo: string, detail: string): PspProblem => problem(404, tipo, 'Não Encontrado', detail);

/**
 * 401: the file describes no error type for a missing or bad token (its errors assume an
 * authenticated client), so the body is RFC 7807's generic `about:blank` with the status's title.
 */
export function unauthorized(detail: string): PspProblem {
  return new PspProblem(
    { type: 'about:blank', title: 'Unauthorized', status: 401, detail },
    { 'www-authenticate': 'Bearer realm="sandbox-psp", error="invalid_token"' },
  );
}

export function sendProblem(reply: FastifyReply, p: PspProblem): void {
  void reply.status(p.body.status).headers(p.headers).type('application/problem+json').send(p.body);
}

// Fastify's own client errors, in the file's general types.
function frameworkProblem(error: FastifyError): PspProblem {
  const status = error.statusCode ?? 400;
  if (status === 415) return problem(415, 'RequisicaoInvalida', 'Requisição inválida.', 'Content-Type deve ser application/json.');
  if (status === 413) return problem(413, 'RequisicaoInvalida', 'Requisição inválida.', 'Corpo da requisição grande demais.');
  if (status === 404) return notFound('NaoEncontrado', 'Entidade não encontrada.');
  return problem(400, 'RequisicaoInvalida', 'Requisição inválida.', 'O corpo da requisição não é um JSON válido.');
}

/** Every error leaves as problem+json; internals (stack, SQL) never do. */
export function installProblemHandlers(app: FastifyInstance, logger: PspLogger): void {
  app.setErrorHandler((error: FastifyError | PspProblem, request, reply) => {
    if (error instanceof PspProblem) return sendProblem(reply, error);
    const status = (error as FastifyError).statusCode ?? 500;
    if (status >= 400 && status < 500) return sendProblem(reply, frameworkProblem(error as FastifyError));
    logger.error({ err: error, method: request.method, url: request.url }, 'sandbox PSP: unexpected error');
    const p = problem(500, 'ErroInternoDoServidor', 'Erro Interno do Servidor', 'Condição inesperada ao processar requisição.');
    p.body.correlationId = request.id;
    sendProblem(reply, p);
  });
  app.setNotFoundHandler((_request, reply) => sendProblem(reply, notFound('NaoEncontrado', 'Entidade não encontrada.')));
}
