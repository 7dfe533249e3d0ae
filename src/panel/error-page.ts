/**
 * The panel's own error handler: the API's one answers JSON, a browser gets a page in words. The
 * status stays the API's; internals never reach the page, and a 500 carries the request id.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../db/db.ts';
import { ApiError } from '../domain/errors.ts';
import { unavailable_retry_after_s } from '../http/errors.ts';
import { inWords } from './messages.ts';
import { HashingBusy } from './passwords.ts';
import { page } from './session.ts';

function statusAndWords(error: FastifyError | ApiError, request: FastifyRequest): { status: number; text: string } {
  if (error instanceof ApiError) return inWords(error.code, error.details);
  if (error instanceof HashingBusy) return { status: 429, text: 'Muitos acessos ao mesmo tempo. Tente de novo em instantes.' };
  if (error instanceof DatabaseUnavailableError) {
    request.log.warn({ err: error }, 'database unavailable');
    return { status: 503, text: 'O serviço está indisponível no momento. Tente de novo em instantes.' };
  }
  if ((error as FastifyError).validation) return { status: 400, text: 'O endereço ou o formulário tem um valor inválido.' };
  const status = (error as FastifyError).statusCode ?? 500;
  if (status >= 400 && status < 500) return { status, text: 'O pedido não pôde ser atendido (grande demais ou malformado).' };
  request.log.error({ err: error }, 'unexpected error');
  return { status: 500, text: `Algo deu errado do nosso lado. Informe ao suporte o código do pedido: ${request.id}.` };
}

export function panelError(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) {
  const { status, text } = statusAndWords(error, request);
  if (status === 503) void reply.header('retry-after', String(unavailable_retry_after_s));
  if (error instanceof HashingBusy) void reply.header('retry-after', String(error.retryAfterSeconds));
  return page(reply, status, 'mensagem.eta', {
    title: 'Não foi possível concluir',
    message: text,
    link: { href: '/painel', text: 'Voltar ao painel' },
    session: null,
  });
}
