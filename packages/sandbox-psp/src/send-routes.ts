/**
 * Efí's Pix sending endpoints (CONTRACT §11.3): PUT /v3/gn/pix/{idEnvio} and
 * GET /v2/gn/pix/enviados/id-envio/{idEnvio}, errors answered as Efí does, `{ nome, mensagem }`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isValidCnpj, isValidCpf } from './documents.ts';
import { EfiRefusal, ID_ENVIO_RE, type SendRequest, type Sends } from './sends.ts';
import { findSent, sentJson } from './sent-store.ts';
import type { Queryable } from './sql.ts';
import { centsOf, iso, valorOf } from './wire.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const refuse = (status: number, nome: string, mensagem: string) => new EfiRefusal(status, nome, mensagem);

function sendEfiError(reply: FastifyReply, e: EfiRefusal): FastifyReply {
  if (e.retryAfterSeconds !== undefined) void reply.header('retry-after', String(e.retryAfterSeconds));
  return reply.status(e.status).send({ nome: e.nome, mensagem: e.mensagem });
}

/** The body of PUT /v3/gn/pix/{idEnvio}, checked as Efí documents it (a key as the payee, with its holder's document when given). */
function readSendBody(body: unknown, payerKey: string): SendRequest {
  if (!isObj(body)) throw refuse(400, 'json_invalido', 'O corpo da requisição não é um JSON válido.');
  const valorCents = centsOf(body.valor);
  if (valorCents === null || valorCents <= 0)
    throw refuse(400, 'valor_invalido', 'O campo valor deve ser reais com duas casas decimais, maior que zero.');
  const pagador = body.pagador;
  if (!isObj(pagador) || typeof pagador.chave !== 'string') throw refuse(400, 'json_invalido', 'O campo pagador.chave é obrigatório.');
  if (pagador.chave !== payerKey) throw refuse(400, 'chave_invalida', 'A chave do pagador não pertence a esta conta.');
  if (pagador.infoPagador !== undefined && (typeof pagador.infoPagador !== 'string' || pagador.infoPagador.length > 140)) {
    throw refuse(400, 'json_invalido', 'O campo pagador.infoPagador deve ter até 140 caracteres.');
  }
  const favorecido = body.favorecido;
  if (!isObj(favorecido) || typeof favorecido.chave !== 'string' || favorecido.chave.length < 1 || favorecido.chave.length > 77) {
    throw refuse(400, 'chave_invalida', 'O campo favorecido.chave não é uma chave Pix.');
  }
  const documento = typeof favorecido.cpf === 'string' ? favorecido.cpf : typeof favorecido.cnpj === 'string' ? favorecido.cnpj : null;
  if (documento !== null && !(isValidCpf(documento) || isValidCnpj(documento))) {
    throw refuse(400, 'documento_invalido', 'O documento do favorecido é inválido.');
  }
  // A CPF or CNPJ key belongs to that document: another one given with it does not own the key.
  if (documento !== null && /^\d{11}$|^\d{14}$/.test(favorecido.chave) && favorecido.chave !== documento) {
    throw refuse(400, 'chave_nao_pertence_ao_documento', 'A chave informada não pertence ao documento do favorecido.');
  }
  const infoPagador = typeof pagador.infoPagador === 'string' ? pagador.infoPagador : null;
  return {
    valorCents,
    pagadorChave: pagador.chave,
    infoPagador,
    favorecidoChave: favorecido.chave,
    favorecidoDocumento: documento,
    canonical: JSON.stringify([valorCents, pagador.chave, infoPagador, favorecido.chave, documento]),
  };
}

/** Until the client goes away or the PSP stops: an answer that never comes. */
function hang(request: FastifyRequest, stopping: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (stopping.aborted) return resolve();
    stopping.addEventListener('abort', () => resolve(), { once: true });
    request.raw.socket.once('close', () => resolve());
  });
}

export interface SendRouteOptions {
  db: Queryable;
  sends: Sends;
  payerKey: string;
  stopping: AbortSignal;
}

export function registerSendRoutes(app: FastifyInstance, o: SendRouteOptions): void {
  app.put<{ Params: { idEnvio: string } }>('/v3/gn/pix/:idEnvio', { config: { scope: 'pix.send' } }, async (request, reply) => {
    try {
      if (!ID_ENVIO_RE.test(request.params.idEnvio)) throw refuse(400, 'id_envio_invalido', 'O idEnvio deve ter de 1 a 35 caracteres [a-zA-Z0-9].');
      const { row, fate } = await o.sends.send(request.params.idEnvio, readSendBody(request.body, o.payerKey));
      if (fate === 'reset') {
        request.raw.socket.destroy();
        return reply;
      }
      if (fate === 'hang') {
        await hang(request, o.stopping);
        request.raw.socket.destroy();
        return reply;
      }
      // Efí's documentation names the end-to-end id `e2eId` here (its SDK says `endToEndId`).
      return reply.status(201).send({
        idEnvio: row.id_envio,
        e2eId: row.end_to_end_id,
        valor: valorOf(row.valor_cents),
        horario: { solicitacao: iso(row.solicitacao) },
        status: 'EM_PROCESSAMENTO',
      });
    } catch (error) {
      if (error instanceof EfiRefusal) return sendEfiError(reply, error);
      throw error;
    }
  });

  app.get<{ Params: { idEnvio: string } }>(
    '/v2/gn/pix/enviados/id-envio/:idEnvio',
    { config: { scope: 'gn.pix.send.read' } },
    async (request, reply) => {
      const row = ID_ENVIO_RE.test(request.params.idEnvio) ? await findSent(o.db, request.params.idEnvio) : null;
      if (!row) return sendEfiError(reply, refuse(404, 'pix_nao_encontrado', 'Nenhum Pix enviado encontrado para o idEnvio informado.'));
      return sentJson(row);
    },
  );
}
