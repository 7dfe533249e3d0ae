/**
 * Efí's Pix sending endpoints (CONTRACT §11.3), called through the API Pix client's transport: the
 * same mTLS connections, token cache and deadlines. Answers are checked for what the gateway reads;
 * Efí's documentation and SDK name the end-to-end id differently (`e2eId`, `endToEndId`): both are read.
 */
import type { PayoutStatus } from '../../domain/provider-facts.ts';
import { AnswerError } from '../api-pix/client/api-pix-answers.ts';
import type { PixTransport } from '../api-pix/client/api-pix-client.ts';
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

function readSent(body: unknown, idEnvio: string): SentPix {
  const o = object(body, 'sent');
  if (text(o.idEnvio) !== idEnvio) throw new AnswerError('sent.idEnvio is not the one asked for');
  if (typeof o.status !== 'string' || !statuses.includes(o.status)) throw new AnswerError('sent.status is not a status of a sent Pix');
  const extras = typeof o.gnExtras === 'object' && o.gnExtras !== null ? (o.gnExtras as Obj) : {};
  const erro = typeof extras.erro === 'object' && extras.erro !== null ? (extras.erro as Obj) : {};
  const returns = Array.isArray(o.devolucoes) ? o.devolucoes : [];
  return {
    idEnvio,
    endToEndId: text(o.endToEndId) ?? text(o.e2eId),
    valor: valor(o, 'sent'),
    status: o.status as PayoutStatus,
    reason: text(erro.motivo) ?? text(o.motivo),
    returns: returns
      .map((d, i) => object(d, `sent.devolucoes[${i}]`))
      // A devolução under way or not made moved no money yet; Efí's examples leave the status out of those done.
      .filter((d) => d.status === undefined || d.status === 'DEVOLVIDO')
      .map((d, i) => {
        const id = text(d.rtrId) ?? text(d.id);
        if (!id) throw new AnswerError(`sent.devolucoes[${i}] has no rtrId`);
        return { id, valor: valor(d, `sent.devolucoes[${i}]`) };
      }),
  };
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
export function createEfiPixSendClient(baseUrl: string, transport: PixTransport): EfiPixSendClient {
  const call = transport.caller(baseUrl);
  return {
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
  };
}
