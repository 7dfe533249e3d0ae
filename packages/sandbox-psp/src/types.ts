/**
 * The embedded PSP's public shapes: its options, its handle, and the API Pix objects it answers
 * (field names as the BCB's API Pix 2.9.0 writes them, money as "123.45" strings).
 */
import type { CardSettlementInput } from './card-settlements.ts';
import type { Db } from './sql.ts';

export interface PspClock {
  now(): Date;
}

/** pino's Logger fits; the PSP logs callback failures and unexpected errors only. */
export interface PspLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export type MedNatureza = 'MED_OPERACIONAL' | 'MED_FRAUDE';
export type DevolucaoNatureza = 'ORIGINAL' | MedNatureza;
export type DevolucaoStatus = 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
export type CobStatus = 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';

export interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  natureza: DevolucaoNatureza;
  descricao?: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: DevolucaoStatus;
  motivo?: string;
}

export interface Pix {
  endToEndId: string;
  txid?: string;
  valor: string;
  componentesValor: { original: { valor: string } };
  chave: string;
  horario: string;
  infoPagador?: string;
  devolucoes?: Devolucao[];
}

export type Pagador = { cpf: string } | { cnpj: string };

export type InfracaoStatus = 'ABERTA' | 'EM_DEFESA' | 'ACEITA' | 'REJEITADA' | 'CANCELADA_EFI';
/** How an infraction ends: the payer's bank agrees (ACEITA, the money goes back) or not, or Efí cancels it. */
export type InfracaoDecisao = Extract<InfracaoStatus, 'ACEITA' | 'REJEITADA' | 'CANCELADA_EFI'>;

/** A side of the contested Pix, as Efí describes it. */
export interface InfracaoParte {
  nomeParticipante: string;
  conta: number;
  nome: string;
  documento: string;
}

/** A MED infraction as Efí's GET /v2/gn/infracoes lists it (the SDK's MedListResponseSchema item): money in reais, as a number. */
export interface Infracao {
  idInfracao: string;
  endToEndId: string;
  protocolo: number;
  dataTransacao: string;
  valor: number;
  chave: string;
  status: InfracaoStatus;
  razao: string;
  tipoSituacao: 'golpe';
  comentario?: string;
  defesa?: string;
  justificativaAnalista?: string;
  identificadorTicket: number[];
  dadosAnalise: { abertura: string; prazoFinalizacao: string; recebimentoDefesa?: string; finalizacao?: string };
  origem: InfracaoParte;
  destino: InfracaoParte;
  criadoEm: string;
  atualizadoEm: string;
}

export interface PayOptions {
  /** Free text the payer typed (the pacs.008 RemittanceInformation), at most 140 characters. */
  infoPagador?: string;
  /** The payer's document, for GET /pix's cpf/cnpj filters (the Pix itself does not show it). */
  pagador?: Pagador;
}

export interface SandboxPspOptions {
  db: Db;
  /** The receiver's Pix key: the only `chave` this PSP accepts in charges and webhooks. */
  receiverKey: string;
  merchantName: string;
  merchantCity: string;
  /** Generated per process when absent: read them back from the handle. */
  clientId?: string;
  clientSecret?: string;
  host?: string;
  port?: number;
  /**
   * host:port written into locations and the JWS `jku` (default `localhost:<port>`, or the bound
   * host when it is neither loopback nor a wildcard). A location outlives the process: give a fixed
   * port to keep old QR codes readable after a restart.
   */
  publicHost?: string;
  clock?: PspClock;
  /** EM_PROCESSAMENTO → final after this long (default 300 ms). */
  devolucaoDelayMs?: number;
  /** Per callback attempt (default 5,000 ms). */
  callbackTimeoutMs?: number;
  /** Waits before each retry of a failed callback (default 250 ms, 1 s, 3 s: four attempts). */
  callbackRetryDelaysMs?: readonly number[];
  /** Plain-http webhook URLs are accepted for loopback hosts only, unless this is true. */
  allowHttpWebhooks?: boolean;
  /** Longest a client may take to send a whole request, headers included (default 30 s): a slow client is cut, as the gateway's are. */
  requestTimeoutMs?: number;
  /** A sent Pix settles (REALIZADO or NAO_REALIZADO) this long after it was taken (default 600 ms). */
  sendDelayMs?: number;
  /**
   * The paying key's balance before any Pix came in or went out (default R$ 1.000.000.000,00); part
   * of the balance GET /v2/gn/saldo tells.
   */
  payerFloatCents?: number;
  /** The bank code of the boletos it issues (default 364, Efí's). */
  boletoBankCode?: string;
  /** The receiver's CNPJ, which the official WebhookCompleto schema requires in GET /webhook. */
  receiverCnpj?: string;
  logger?: PspLogger;
}

/** A refusal of a send, armed by a test: the HTTP status and Efí's error name (Retry-After with 429). */
export interface SendFailure {
  status: number;
  nome?: string;
  retryAfterSeconds?: number;
}

export interface SandboxPsp {
  /** The API Pix root, e.g. http://127.0.0.1:PORT/api/v2 */
  readonly apiUrl: string;
  /** The root of Efí's own endpoints (Pix sending, /v2/webhook), e.g. http://127.0.0.1:PORT */
  readonly efiUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Where the location payloads' signing key is published (the JWS `jku`). */
  readonly jwksUrl: string;
  /** The sandbox card processor's reports: `${reportsUrl}/settlement_detail_report_<YYYY-MM-DD>.csv`, HTTP Basic with clientId and clientSecret. */
  readonly reportsUrl: string;
  /** Books a card movement in the sandbox card processor's settlement record (once per type and modification). */
  settleCard(input: CardSettlementInput): Promise<void>;
  /**
   * Receives a Pix as a payer's bank would, then calls the registered webhook back. Resolves once
   * the Pix is stored and its callback was answered, given up or dropped; a failed callback is
   * logged, never thrown.
   */
  pay(txid: string, amountCents: number, options?: PayOptions): Promise<Pix>;
  setCallbacks(mode: 'deliver' | 'drop'): void;
  /** The next n devoluções requested through the API end NAO_REALIZADO. */
  failNextDevolucoes(n: number): void;
  /** A devolução by MED: DEVOLVIDO at once, then a callback. Throws for an unknown Pix or an amount beyond what is left. */
  openMedDevolucao(e2eid: string, input: { amountCents: number; natureza: MedNatureza }): Promise<Devolucao>;
  /** A bank paying a boleto charge (of its value when `amountCents` is absent); its notification follows. Throws when already paid. */
  payBoleto(chargeId: number, amountCents?: number): Promise<void>;
  /**
   * A boleto paid at the bank that the PSP tells nobody of (no notification): it shows paid in
   * GET /v1/charges and the charge's detail only. Throws when already paid.
   */
  payBoletoSilently(chargeId: number, amountCents?: number): Promise<void>;
  /**
   * A devolução of a received Pix made at the PSP by hand: DEVOLVIDO at once, with an id the PSP
   * made, shown by GET /pix and GET /pix/{e2eid}, and no callback. Throws for an unknown Pix or an
   * amount beyond what is left.
   */
  devolveByHand(endToEndId: string, amountCents: number): Promise<Devolucao>;
  /**
   * The next send is booked twice, as a PSP fault would: two sent Pix of the same idEnvio (two
   * end-to-end ids, settled together) in GET /v2/gn/pix/enviados and the balance; a read by idEnvio
   * and the callback still show the first only.
   */
  sendTwiceNext(): void;
  /** The next n boleto charges are refused by the PSP (400 validation_error). */
  refuseNextCharges(n: number): void;
  /** The next n sends are refused in the request (nothing sent). */
  failNextSends(n: number, failure: SendFailure): void;
  /** The next n sends are made, but their answer is lost: the connection reset, or never answered. */
  loseNextSendAnswers(n: number, how: 'reset' | 'hang'): void;
  /** The next n sends are taken, then end NAO_REALIZADO (the receiver's side refused them). */
  rejectNextSends(n: number): void;
  /** Settles every sent Pix still under way now, and waits for their callbacks. */
  settleSends(): Promise<void>;
  /** The receiver's bank sends back part or all of a sent Pix made; the callback follows. */
  returnSent(idEnvio: string, amountCents: number): Promise<void>;
  /** Settles every devolução still EM_PROCESSAMENTO now, and waits for their callbacks. */
  settleDevolucoes(): Promise<void>;
  /**
   * The payer's bank contests a Pix received here (MED): an infraction ABERTA, listed by GET
   * /v2/gn/infracoes, its analysis due 7 days later (prazoFinalizacao, told, not enforced). Throws for
   * an unknown Pix (an Error with statusCode 404) and for a Pix whose last infraction is not decided
   * yet (statusCode 409).
   */
  openInfraction(e2eid: string, input?: { razao?: string }): Promise<{ idInfracao: string }>;
  /**
   * The payer's bank (or Efí) decides an infraction ABERTA or EM_DEFESA (else an Error with statusCode
   * 409; 404 for an unknown one). ACEITA then gives back what is left of the Pix as a MED_FRAUDE
   * devolução (DEVOLVIDO at once, then the callback), unless `withoutDevolucao`: a devolução that
   * never comes.
   */
  resolveInfraction(idInfracao: string, status: InfracaoDecisao, options?: { withoutDevolucao?: true }): Promise<void>;
  /** The next n defences of an infraction ABERTA are refused (400, nothing changed). */
  refuseNextDefenses(n: number): void;
  close(): Promise<void>;
}
