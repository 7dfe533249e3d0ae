/**
 * Checks a charge body as a PSP would (CobSolicitada for PUT, CobRevisada for PATCH), naming every
 * violation the way the file's CobOperacaoInvalida list does: `cob.valor.original` and so on.
 */
import { isValidCnpj, isValidCpf } from './documents.ts';
import type { Violacao } from './problems.ts';
import { centsOf } from './wire.ts';

export interface Devedor {
  cpf?: string;
  cnpj?: string;
  nome: string;
}

export interface InfoAdicional {
  nome: string;
  valor: string;
}

/** A charge's fields as stored, defaults applied (`expiracao` 86400, `modalidadeAlteracao` 0). */
export interface CobFields {
  expiracao: number;
  originalCents: number;
  modalidadeAlteracao: 0 | 1;
  chave: string;
  devedor?: Devedor;
  solicitacaoPagador?: string;
  infoAdicionais?: InfoAdicional[];
}

export type Checked<T> = { ok: true; value: T } | { ok: false; violacoes: Violacao[] };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const INT32_MAX = 2_147_483_647;
const DEFAULT_EXPIRACAO = 86_400;

class Violations {
  readonly list: Violacao[] = [];
  add(propriedade: string, razao: string): void {
    this.list.push({ razao, propriedade });
  }
}

/** PUT /cob/{txid}: the whole charge. */
export function checkCobSolicitada(body: unknown, receiverKey: string): Checked<CobFields> {
  const v = new Violations();
  if (!isObj(body)) return { ok: false, violacoes: [{ razao: 'O corpo da requisição deve ser um objeto JSON.', propriedade: 'cob' }] };
  if (body.calendario === undefined) v.add('cob.calendario', 'O campo cob.calendario é obrigatório.');
  if (body.valor === undefined) v.add('cob.valor', 'O campo cob.valor é obrigatório.');
  if (body.chave === undefined) v.add('cob.chave', 'O campo cob.chave é obrigatório.');
  const parts = checkParts(body, receiverKey, v, true);
  if (v.list.length > 0) return { ok: false, violacoes: v.list };
  const fields: CobFields = {
    expiracao: parts.expiracao ?? DEFAULT_EXPIRACAO,
    originalCents: parts.originalCents!,
    modalidadeAlteracao: parts.modalidadeAlteracao ?? 0,
    chave: parts.chave!,
    ...optionalParts(parts),
  };
  return checkAmount(fields);
}

export interface CobRevisao {
  remove: boolean;
  changes: Partial<CobFields>;
}

const REVISABLE = ['calendario', 'valor', 'chave', 'devedor', 'solicitacaoPagador', 'infoAdicionais', 'loc'] as const;

/** PATCH /cob/{txid}: either a removal alone, or changes to some fields (merged by the caller). */
export function checkCobRevisada(body: unknown, receiverKey: string): Checked<CobRevisao> {
  if (!isObj(body)) return { ok: false, violacoes: [{ razao: 'O corpo da requisição deve ser um objeto JSON.', propriedade: 'cob' }] };
  const v = new Violations();
  const remove = body.status !== undefined;
  if (remove && body.status !== 'REMOVIDA_PELO_USUARIO_RECEBEDOR') {
    v.add('cob.status', 'O campo cob.status não respeita o schema: o único valor aceito é REMOVIDA_PELO_USUARIO_RECEBEDOR.');
  }
  if (remove && REVISABLE.some((k) => body[k] !== undefined)) {
    v.add('cob.status', 'Não faz sentido remover uma cobrança ao mesmo tempo em que se realizam alterações.');
  }
  const parts = checkParts(body, receiverKey, v, false);
  if (v.list.length > 0) return { ok: false, violacoes: v.list };
  const changes: Partial<CobFields> = { ...optionalParts(parts) };
  if (parts.expiracao !== undefined) changes.expiracao = parts.expiracao;
  if (parts.originalCents !== undefined) changes.originalCents = parts.originalCents;
  if (parts.modalidadeAlteracao !== undefined) changes.modalidadeAlteracao = parts.modalidadeAlteracao;
  if (parts.chave !== undefined) changes.chave = parts.chave;
  return { ok: true, value: { remove, changes } };
}

/** The charge after a revision must still be a valid charge: a zero amount needs modalidadeAlteracao 1. */
export function checkAmount(fields: CobFields): Checked<CobFields> {
  if (fields.originalCents === 0 && fields.modalidadeAlteracao !== 1) {
    return { ok: false, violacoes: [{ razao: 'O campo cob.valor.original é zero.', propriedade: 'cob.valor.original', valor: '0.00' }] };
  }
  return { ok: true, value: fields };
}

type Parts = Partial<CobFields>;

function optionalParts(parts: Parts): Pick<CobFields, 'devedor' | 'solicitacaoPagador' | 'infoAdicionais'> {
  const out: Parts = {};
  if (parts.devedor) out.devedor = parts.devedor;
  if (parts.solicitacaoPagador !== undefined) out.solicitacaoPagador = parts.solicitacaoPagador;
  if (parts.infoAdicionais) out.infoAdicionais = parts.infoAdicionais;
  return out;
}

function checkParts(body: Obj, receiverKey: string, v: Violations, creating: boolean): Parts {
  const parts: Parts = {};
  if (body.calendario !== undefined) parts.expiracao = checkCalendario(body.calendario, v);
  if (body.valor !== undefined) Object.assign(parts, checkValor(body.valor, v, creating));
  if (body.chave !== undefined) parts.chave = checkChave(body.chave, receiverKey, v);
  if (body.devedor !== undefined) parts.devedor = checkDevedor(body.devedor, v);
  if (body.solicitacaoPagador !== undefined) parts.solicitacaoPagador = checkText(body.solicitacaoPagador, 140, 'cob.solicitacaoPagador', v);
  if (body.infoAdicionais !== undefined) parts.infoAdicionais = checkInfoAdicionais(body.infoAdicionais, v);
  // Locations are made with their charge here (no POST /loc), so no loc.id can exist yet.
  if (body.loc !== undefined) v.add('cob.loc.id', 'O location referenciado por cob.loc.id inexiste.');
  return parts;
}

function checkCalendario(calendario: unknown, v: Violations): number | undefined {
  if (!isObj(calendario)) return void v.add('cob.calendario', 'O objeto cob.calendario não respeita o schema.');
  const { expiracao } = calendario;
  if (expiracao === undefined) return undefined;
  if (typeof expiracao !== 'number' || !Number.isInteger(expiracao) || expiracao <= 0 || expiracao > INT32_MAX) {
    return void v.add('cob.calendario.expiracao', 'O campo cob.calendario.expiracao é igual ou menor que zero, ou não é um inteiro.');
  }
  return expiracao;
}

function checkValor(valor: unknown, v: Violations, creating: boolean): Parts {
  if (!isObj(valor)) {
    v.add('cob.valor', 'O objeto cob.valor não respeita o schema.');
    return {};
  }
  const parts: Parts = {};
  if (valor.original !== undefined || creating) {
    const cents = centsOf(valor.original);
    if (cents === null) v.add('cob.valor.original', 'O campo cob.valor.original não respeita o schema.');
    else parts.originalCents = cents;
  }
  const m = valor.modalidadeAlteracao;
  if (m !== undefined && m !== 0 && m !== 1) v.add('cob.valor.modalidadeAlteracao', 'O campo cob.valor.modalidadeAlteracao deve ser 0 ou 1.');
  else if (m !== undefined) parts.modalidadeAlteracao = m;
  if (valor.retirada !== undefined) v.add('cob.valor.retirada', 'Pix Saque e Pix Troco não são oferecidos por este PSP.');
  return parts;
}

function checkChave(chave: unknown, receiverKey: string, v: Violations): string | undefined {
  if (typeof chave !== 'string' || chave.length === 0 || chave.length > 77) {
    return void v.add('cob.chave', 'O campo cob.chave não respeita o schema.');
  }
  if (chave !== receiverKey) return void v.add('cob.chave', 'O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor.');
  return chave;
}

function checkDevedor(devedor: unknown, v: Violations): Devedor | undefined {
  const bad = (razao: string) => void v.add('cob.devedor', razao);
  if (!isObj(devedor)) return bad('O objeto cob.devedor não respeita o schema.');
  const { cpf, cnpj, nome } = devedor;
  if (cpf !== undefined && cnpj !== undefined) return bad('Os campos cob.devedor.cpf e cob.devedor.cnpj não podem estar preenchidos ao mesmo tempo.');
  if (cpf === undefined && cnpj === undefined) return bad('O objeto cob.devedor deve ter cpf ou cnpj, além do nome.');
  if (typeof nome !== 'string' || nome.trim().length === 0 || nome.length > 200) return bad('O campo cob.devedor.nome não respeita o schema.');
  if (cpf !== undefined) {
    if (typeof cpf !== 'string' || !isValidCpf(cpf)) return void v.add('cob.devedor.cpf', 'O campo cob.devedor.cpf não é um CPF válido.');
    return { cpf, nome };
  }
  if (typeof cnpj !== 'string' || !isValidCnpj(cnpj)) return void v.add('cob.devedor.cnpj', 'O campo cob.devedor.cnpj não é um CNPJ válido.');
  return { cnpj, nome };
}

function checkText(text: unknown, max: number, propriedade: string, v: Violations): string | undefined {
  if (typeof text !== 'string' || text.length > max)
    return void v.add(propriedade, `O campo ${propriedade} deve ser um texto de até ${max} caracteres.`);
  return text;
}

function checkInfoAdicionais(list: unknown, v: Violations): InfoAdicional[] | undefined {
  const bad = () => void v.add('cob.infoAdicionais', 'O objeto cob.infoAdicionais não respeita o schema (até 50 itens { nome ≤ 50, valor ≤ 200 }).');
  if (!Array.isArray(list) || list.length > 50) return bad();
  const items: InfoAdicional[] = [];
  for (const item of list) {
    if (!isObj(item) || typeof item.nome !== 'string' || typeof item.valor !== 'string') return bad();
    if (item.nome.length > 50 || item.valor.length > 200) return bad();
    items.push({ nome: item.nome, valor: item.valor });
  }
  return items;
}
