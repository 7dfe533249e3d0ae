import type {
  CobCompleta,
  CobGerada,
  Devolucao,
  Paginacao,
  PessoaFisica,
  PessoaJuridica,
  Pix,
  PixConsultados,
  Problema,
  Violacao,
  WebhookCompleto,
} from './api-pix-types.ts';
import { isValor } from './valor.ts';

/**
 * Checks of the PSP's answers: what the gateway reads must be there with its type, so a wrong
 * answer is one typed error here rather than an `undefined` deep in a money path. Fields the
 * gateway does not read are not checked (the file's own examples break some of them: 34-character
 * endToEndIds, a `loc` without `criacao`, a webhook without `cnpj`), and unknown fields are dropped.
 */
export class AnswerError extends Error {}

type Obj = Record<string, unknown>;

function object(value: unknown, path: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AnswerError(`${path} is not an object`);
  return value as Obj;
}

function string(o: Obj, key: string, path: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new AnswerError(`${path}.${key} is ${v === undefined ? 'missing' : 'not a string'}`);
  return v;
}

function optionalString(o: Obj, key: string, path: string): string | undefined {
  return o[key] === undefined || o[key] === null ? undefined : string(o, key, path);
}

function integer(o: Obj, key: string, path: string, min = 0): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new AnswerError(`${path}.${key} is not an integer ≥ ${min}`);
  return v;
}

function valor(o: Obj, key: string, path: string): string {
  const v = o[key];
  if (!isValor(v)) throw new AnswerError(`${path}.${key} is not reais with two decimals`);
  return v;
}

function array(o: Obj, key: string, path: string): unknown[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new AnswerError(`${path}.${key} is not an array`);
  return v;
}

/** Sets `key` on `target` only when `value` is defined, so absent fields stay absent. */
function put<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

function devedor(value: unknown, path: string): PessoaFisica | PessoaJuridica | undefined {
  if (value === undefined || value === null) return undefined;
  const o = object(value, path);
  const nome = optionalString(o, 'nome', path) ?? '';
  if (typeof o.cpf === 'string') return { cpf: o.cpf, nome };
  if (typeof o.cnpj === 'string') return { cnpj: o.cnpj, nome };
  return undefined;
}

export function readCobGerada(body: unknown, path = 'cob'): CobGerada {
  const o = object(body, path);
  const calendario = object(o.calendario, `${path}.calendario`);
  const valorObj = object(o.valor, `${path}.valor`);
  const cob: CobGerada = {
    txid: string(o, 'txid', path),
    revisao: integer(o, 'revisao', path),
    calendario: { criacao: string(calendario, 'criacao', `${path}.calendario`) },
    status: string(o, 'status', path),
    valor: { original: valor(valorObj, 'original', `${path}.valor`) },
    chave: string(o, 'chave', path),
  };
  if (calendario.expiracao !== undefined) cob.calendario.expiracao = integer(calendario, 'expiracao', `${path}.calendario`);
  if (valorObj.modalidadeAlteracao === 0 || valorObj.modalidadeAlteracao === 1) cob.valor.modalidadeAlteracao = valorObj.modalidadeAlteracao;
  if (o.loc !== undefined && o.loc !== null) {
    const loc = object(o.loc, `${path}.loc`);
    cob.loc = {};
    if (typeof loc.id === 'number') cob.loc.id = loc.id;
    put(cob.loc, 'location', optionalString(loc, 'location', `${path}.loc`));
    put(cob.loc, 'tipoCob', optionalString(loc, 'tipoCob', `${path}.loc`));
    put(cob.loc, 'criacao', optionalString(loc, 'criacao', `${path}.loc`));
  }
  put(cob, 'location', optionalString(o, 'location', path));
  put(cob, 'pixCopiaECola', optionalString(o, 'pixCopiaECola', path));
  put(cob, 'devedor', devedor(o.devedor, `${path}.devedor`));
  put(cob, 'solicitacaoPagador', optionalString(o, 'solicitacaoPagador', path));
  return cob;
}

export function readCobCompleta(body: unknown): CobCompleta {
  const cob: CobCompleta = readCobGerada(body);
  put(
    cob,
    'pix',
    array(body as Obj, 'pix', 'cob')?.map((p, i) => readPix(p, `cob.pix[${i}]`)),
  );
  return cob;
}

export function readDevolucao(body: unknown, path = 'devolucao'): Devolucao {
  const o = object(body, path);
  const horario = o.horario === undefined || o.horario === null ? {} : object(o.horario, `${path}.horario`);
  const d: Devolucao = {
    id: string(o, 'id', path),
    rtrId: string(o, 'rtrId', path),
    valor: valor(o, 'valor', path),
    horario: {},
    status: string(o, 'status', path),
  };
  put(d.horario, 'solicitacao', optionalString(horario, 'solicitacao', `${path}.horario`));
  put(d.horario, 'liquidacao', optionalString(horario, 'liquidacao', `${path}.horario`));
  put(d, 'natureza', optionalString(o, 'natureza', path));
  put(d, 'descricao', optionalString(o, 'descricao', path));
  put(d, 'motivo', optionalString(o, 'motivo', path));
  return d;
}

export function readPix(body: unknown, path = 'pix'): Pix {
  const o = object(body, path);
  const pix: Pix = { endToEndId: string(o, 'endToEndId', path), valor: valor(o, 'valor', path), horario: string(o, 'horario', path) };
  put(pix, 'txid', optionalString(o, 'txid', path));
  put(pix, 'chave', optionalString(o, 'chave', path));
  put(pix, 'infoPagador', optionalString(o, 'infoPagador', path));
  put(
    pix,
    'devolucoes',
    array(o, 'devolucoes', path)?.map((d, i) => readDevolucao(d, `${path}.devolucoes[${i}]`)),
  );
  return pix;
}

function readPaginacao(value: unknown, path: string): Paginacao {
  const o = object(value, path);
  return {
    paginaAtual: integer(o, 'paginaAtual', path),
    itensPorPagina: integer(o, 'itensPorPagina', path, 1),
    quantidadeDePaginas: integer(o, 'quantidadeDePaginas', path),
    quantidadeTotalDeItens: integer(o, 'quantidadeTotalDeItens', path),
  };
}

/**
 * One page of GET /pix. The file's schema requires `cobs` (a copy of CobsConsultadas) and not
 * `pix`: an absent `pix` is read as an empty page.
 */
export function readPixConsultados(body: unknown): PixConsultados {
  const o = object(body, 'answer');
  const parametros = object(o.parametros, 'answer.parametros');
  return {
    parametros: {
      inicio: string(parametros, 'inicio', 'answer.parametros'),
      fim: string(parametros, 'fim', 'answer.parametros'),
      paginacao: readPaginacao(parametros.paginacao, 'answer.parametros.paginacao'),
    },
    pix: (array(o, 'pix', 'answer') ?? []).map((p, i) => readPix(p, `answer.pix[${i}]`)),
  };
}

export function readWebhookCompleto(body: unknown): WebhookCompleto {
  const o = object(body, 'webhook');
  const w: WebhookCompleto = { webhookUrl: string(o, 'webhookUrl', 'webhook') };
  put(w, 'chave', optionalString(o, 'chave', 'webhook'));
  put(w, 'cnpj', optionalString(o, 'cnpj', 'webhook'));
  put(w, 'criacao', optionalString(o, 'criacao', 'webhook'));
  return w;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The problem+json of an error answer, kept as far as it has the RFC 7807 shape; undefined when it has none. */
export function readProblema(body: unknown): Problema | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const o = body as Obj;
  const problem: Problema = {};
  put(problem, 'type', text(o.type));
  put(problem, 'title', text(o.title));
  if (typeof o.status === 'number') problem.status = o.status;
  put(problem, 'detail', text(o.detail));
  put(problem, 'correlationId', text(o.correlationId));
  // Efí's own endpoints (Pix sending) answer errors as { nome, mensagem }: the name is what a caller acts on.
  put(problem, 'nome', text(o.nome));
  put(problem, 'mensagem', text(o.mensagem));
  // Efí's Cobranças API: { code, error, error_description } (the description a text or { property, message }).
  put(problem, 'nome', text(o.error));
  const description = o.error_description as unknown;
  put(problem, 'mensagem', text(description) ?? text((description as Obj | null)?.message));
  if (Array.isArray(o.violacoes)) {
    problem.violacoes = o.violacoes
      .filter((v): v is Obj => typeof v === 'object' && v !== null)
      .map((v) => {
        const violacao: Violacao = {};
        put(violacao, 'razao', text(v.razao));
        put(violacao, 'propriedade', text(v.propriedade));
        put(violacao, 'valor', text(v.valor));
        return violacao;
      });
  }
  return Object.keys(problem).length > 0 ? problem : undefined;
}
