/**
 * Types of the API Pix (BCB, ../shared/spec/providers/bcb-api-pix-2.9.0.yaml), named after its
 * schemas, with the fields the gateway sends or reads. Amounts stay the file's strings ("123.45");
 * valor.ts converts them to cents. Answers are checked by api-pix-answers.ts before they get these types.
 */

/**
 * An enumeration the file may grow: it lists "adição de novos elementos em enumerações" among the
 * compatible changes, so an answer may carry a value we do not know yet. The known ones still autocomplete.
 */
export type OpenEnum<T extends string> = T | (string & Record<never, never>);

export interface PessoaFisica {
  cpf: string;
  nome: string;
}
export interface PessoaJuridica {
  cnpj: string;
  nome: string;
}

/** CobValor: only the immediate-charge fields the gateway uses (no saque/troco). */
export interface CobValor {
  original: string;
  /** 1: the payer may change the amount. The gateway always sends a fixed amount (absent, i.e. 0). */
  modalidadeAlteracao?: 0 | 1;
}

export interface InfoAdicional {
  nome: string;
  valor: string;
}

/** Body of PUT /cob/{txid}. */
export interface CobSolicitada {
  calendario: { expiracao: number };
  devedor?: PessoaFisica | PessoaJuridica;
  valor: CobValor;
  chave: string;
  solicitacaoPagador?: string;
  infoAdicionais?: InfoAdicional[];
}

/** Body of PATCH /cob/{txid}; removal must come alone (CobOperacaoInvalida otherwise). */
export interface CobRevisada {
  status?: 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
  calendario?: { expiracao: number };
  devedor?: PessoaFisica | PessoaJuridica;
  valor?: CobValor;
  chave?: string;
  solicitacaoPagador?: string;
  infoAdicionais?: InfoAdicional[];
}

export type CobrancaStatus = OpenEnum<'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP'>;

export interface PayloadLocation {
  id?: number;
  location?: string;
  tipoCob?: string;
  criacao?: string;
}

/** Answer of PUT and PATCH /cob/{txid}. */
export interface CobGerada {
  txid: string;
  revisao: number;
  calendario: { criacao: string; expiracao?: number };
  status: CobrancaStatus;
  valor: CobValor;
  chave: string;
  loc?: PayloadLocation;
  location?: string;
  /** The dynamic BR Code; checked present on PUT (the sale's `pix.key` is made of it). */
  pixCopiaECola?: string;
  devedor?: PessoaFisica | PessoaJuridica;
  solicitacaoPagador?: string;
}

/** Answer of GET /cob/{txid}: the charge and the Pix it received. */
export interface CobCompleta extends CobGerada {
  pix?: Pix[];
}

export type DevolucaoStatus = OpenEnum<'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO'>;
export type DevolucaoNatureza = OpenEnum<'ORIGINAL' | 'RETIRADA' | 'MED_OPERACIONAL' | 'MED_FRAUDE' | 'MED_PIX_AUTOMATICO'>;

export interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  /** Absent means ORIGINAL (the file's rule). */
  natureza?: DevolucaoNatureza;
  descricao?: string;
  horario: { solicitacao?: string; liquidacao?: string };
  status: DevolucaoStatus;
  motivo?: string;
}

/** Body of PUT /pix/{e2eid}/devolucao/{id}. */
export interface DevolucaoSolicitada {
  valor: string;
  natureza?: 'ORIGINAL' | 'RETIRADA';
  descricao?: string;
}

export interface Pix {
  endToEndId: string;
  txid?: string;
  valor: string;
  chave?: string;
  horario: string;
  infoPagador?: string;
  devolucoes?: Devolucao[];
}

export interface Paginacao {
  paginaAtual: number;
  itensPorPagina: number;
  quantidadeDePaginas: number;
  quantidadeTotalDeItens: number;
}

/** Answer of GET /pix: one page. */
export interface PixConsultados {
  parametros: { inicio: string; fim: string; paginacao: Paginacao };
  pix: Pix[];
}

export interface ListPixQuery {
  inicio: Date;
  fim: Date;
  /** From 0 (the file's default). */
  paginaAtual?: number;
  /** 1 to 1000; the PSP's default is 100. */
  itensPorPagina?: number;
  txIdPresente?: boolean;
}

/** Answer of GET /webhook/{chave}. */
export interface WebhookCompleto {
  webhookUrl: string;
  chave?: string;
  cnpj?: string;
  criacao?: string;
}

export interface Violacao {
  razao?: string;
  propriedade?: string;
  valor?: string;
}

/** RFC 7807 body of every API Pix error (`type` like https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida). */
export interface Problema {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  correlationId?: string;
  violacoes?: Violacao[];
  /** Efí's error name on its own endpoints (e.g. "chave_invalida"), with `mensagem` its words. */
  nome?: string;
  mensagem?: string;
}
