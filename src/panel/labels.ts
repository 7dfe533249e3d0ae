/**
 * Every code the panel shows, in the one Portuguese word a seller reads for it (CONTRACT §12): the
 * same word on every page, filters keep the code as their value. A page never prints a code itself.
 */
import type { CashoutStatus } from '../domain/cashout-states.ts';
import type { PixKeyType } from '../domain/pix-keys.ts';
import type { InfractionStatus } from '../domain/provider-facts.ts';
import type { PaymentMethod, TransactionEvent, TransactionStatus } from '../domain/transaction-states.ts';

export const sale_statuses: Record<TransactionStatus, string> = {
  PENDENTE: 'Pendente',
  EM_PROCESSAMENTO: 'Em processamento',
  PAGO: 'Pago',
  CANCELADO: 'Cancelado',
  RECUSADO: 'Recusado',
  ESTORNADO: 'Estornado',
  FALHA: 'Falha',
  CHARGEBACK: 'Em chargeback',
  MED: 'Em contestação (MED)',
};

/** An ESTORNADO sale says how its money went back: by the event that ended it (its last one). */
export const refunded_by: Partial<Record<TransactionEvent, string>> = {
  REFUNDED: 'Estornado (reembolso)',
  CHARGEBACK_CONFIRMED: 'Estornado (chargeback)',
  MED_LOST: 'Estornado (MED)',
};

/** A PENDENTE card sale whose shopper has not passed 3-D Secure yet (CONTRACT §11.2), in place of "Pendente". */
export const awaiting_authentication = 'Aguardando autenticação';

/** Whether a card sale's shopper passed 3-D Secure (the transaction's `authenticated`). */
export const authentication_results: Record<'authenticated' | 'failed', string> = {
  authenticated: 'Autenticado com 3-D Secure',
  failed: 'Autenticação recusada ou abandonada',
};

export const payment_methods: Record<PaymentMethod, string> = {
  PIX: 'PIX',
  CREDIT_CARD: 'Cartão de crédito',
  DEBIT_CARD: 'Cartão de débito',
  BOLETO: 'Boleto',
};

/** What moved a sale from one status to another (its history). */
export const sale_events: Record<TransactionEvent, string> = {
  PAYMENT_CONFIRMED: 'pagamento confirmado',
  SENT_TO_PROCESSOR: 'enviada à operadora do cartão',
  APPROVED: 'aprovada pela operadora',
  DECLINED: 'recusada pela operadora',
  PROCESSING_ERROR: 'erro no processamento',
  RETRY_PROCESSED: 'nova tentativa processada',
  CANCELLED: 'cancelada',
  EXPIRED: 'prazo de pagamento vencido',
  REFUNDED: 'estornada',
  CHARGEBACK_OPENED: 'chargeback aberto',
  CHARGEBACK_REVERTED: 'chargeback revertido',
  CHARGEBACK_CONFIRMED: 'chargeback confirmado',
  MED_OPENED: 'contestação (MED) aberta',
  MED_WON: 'contestação (MED) ganha',
  MED_LOST: 'contestação (MED) perdida',
};

/** A PIX dispute's infraction at the PSP (CONTRACT §11.5), as the sale's page says it. */
export const infraction_statuses: Record<InfractionStatus, string> = {
  ABERTA: 'Aberta',
  EM_DEFESA: 'Em análise, defesa enviada',
  ACEITA: 'Aceita: o valor será devolvido ao pagador',
  REJEITADA: 'Rejeitada: o valor foi liberado',
  CANCELADA: 'Cancelada',
};

/** The seller's defence of a MED: sent to the PSP, being sent, or refused by it. */
export const defense_states: Record<'SENDING' | 'SENT' | 'REFUSED', string> = {
  SENDING: 'Enviando…',
  SENT: 'Enviada',
  REFUSED: 'Recusada pelo PSP',
};

/** The other words of a MED on the sale's page: one place, as for the codes above. */
export const med_words = {
  /** An accepted infraction once its devolução took the money (the sale ESTORNADO). */
  returned: 'Aceita: o valor foi devolvido ao pagador',
  noReason: 'Motivo não informado pelo PSP',
  noRefusalReason: 'motivo não informado',
  sent: 'Defesa enviada ao PSP.',
  sending: 'Defesa registrada. O PSP ainda não respondeu; o envio é repetido até ele responder.',
  refused: 'O PSP recusou a defesa: ',
  notDefensible: 'Esta contestação não aceita defesa agora: ela não está mais aberta, ou uma defesa já foi enviada.',
};

/**
 * The reasons the gateway itself records for a defence not sent (in the API's English), in the
 * panel's words; a PSP's own reason is shown as the PSP gave it.
 */
export const defense_refusals: readonly (readonly [RegExp, string])[] = [
  [/^the infraction was decided before the PSP received the defence$/, 'a contestação foi decidida antes de o PSP receber a defesa'],
  [/^account .* does not report infractions here$/, 'a conta que recebeu este PIX não recebe contestações por aqui'],
  [/^account .* not configured$/, 'a conta que recebeu este PIX não está configurada no gateway'],
];

export const cashout_statuses: Record<CashoutStatus, string> = {
  PENDING: 'Pendente',
  PROCESSING: 'Em processamento',
  COMPLETED: 'Concluído',
  REJECTED: 'Recusado',
  CANCELLED: 'Cancelado',
};

/** What the PSP said of a cashout's Pix (CONTRACT §11.3), beside the cashout's own status. */
export const psp_statuses: Record<string, string> = {
  EM_PROCESSAMENTO: 'Pix em processamento no PSP',
  REALIZADO: 'Pix realizado',
  NAO_REALIZADO: 'Pix não realizado',
};

export const refund_statuses: Record<'PENDING' | 'SUCCEEDED' | 'FAILED', string> = {
  PENDING: 'Em andamento',
  SUCCEEDED: 'Concluído',
  FAILED: 'Não realizado',
};

/** A notification's delivery. */
export const delivery_statuses: Record<'PENDING' | 'DELIVERED' | 'FAILED', string> = {
  PENDING: 'Aguardando entrega',
  DELIVERED: 'Entregue',
  FAILED: 'Não entregue',
};

export const notification_kinds: Record<'TRANSACTION_WEBHOOK' | 'TRANSACTION_POSTBACK' | 'WITHDRAWAL_WEBHOOK', string> = {
  TRANSACTION_WEBHOOK: 'Webhook de venda',
  TRANSACTION_POSTBACK: 'Postback de venda',
  WITHDRAWAL_WEBHOOK: 'Webhook de saque',
};

export const webhook_types: Record<'TRANSACTION' | 'WITHDRAWAL', string> = { TRANSACTION: 'Transações', WITHDRAWAL: 'Notificar saques' };

export const pix_key_types: Record<PixKeyType, string> = { CPF: 'CPF', CNPJ: 'CNPJ', EMAIL: 'E-mail', PHONE: 'Telefone', RANDOM: 'Chave aleatória' };

/** The seller's two ledger accounts. */
export const ledger_accounts: Record<'available' | 'blocked', string> = { available: 'Disponível', blocked: 'Bloqueado' };

/**
 * A code's word; a code this version does not know (a stored value from another one) still reads as
 * words, lower-cased, rather than as a code.
 */
export function labelOf(names: Record<string, string>, code: string): string {
  const known = names[code];
  if (known !== undefined) return known;
  const words = code.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The status a notification announces: a cashout's for a withdrawal webhook, a sale's otherwise. */
export const announcedStatus = (kind: string, status: string): string =>
  labelOf(kind === 'WITHDRAWAL_WEBHOOK' ? cashout_statuses : sale_statuses, status);

/** A notification's delivery in words: "Entregue (1 tentativa, HTTP 200)". */
export function deliveryInWords(status: string, attempts: number, http: number | null): string {
  const tries = `${attempts} tentativa${attempts === 1 ? '' : 's'}`;
  return `${labelOf(delivery_statuses, status)} (${tries}${http ? `, HTTP ${http}` : ''})`;
}
