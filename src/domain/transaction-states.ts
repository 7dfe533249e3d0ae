/**
 * The transaction state machine of the spec's table, as data (CONTRACT §6). Use cases ask
 * applyTransactionEvent whether a move is legal and postingKind which ledger posting it carries.
 */

export const TRANSACTION_STATUSES = [
  'PENDENTE',
  'EM_PROCESSAMENTO',
  'PAGO',
  'CANCELADO',
  'RECUSADO',
  'ESTORNADO',
  'FALHA',
  'CHARGEBACK',
  'MED',
] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

export const PAYMENT_METHODS = ['PIX', 'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export const CARD_METHODS = ['CREDIT_CARD', 'DEBIT_CARD'] as const satisfies readonly PaymentMethod[];

export const TRANSACTION_EVENTS = [
  'PAYMENT_CONFIRMED',
  'SENT_TO_PROCESSOR',
  'APPROVED',
  'DECLINED',
  'PROCESSING_ERROR',
  'RETRY_PROCESSED',
  'CANCELLED',
  'EXPIRED',
  'REFUNDED',
  'CHARGEBACK_OPENED',
  'CHARGEBACK_REVERTED',
  'CHARGEBACK_CONFIRMED',
  'MED_OPENED',
  'MED_WON',
  'MED_LOST',
] as const;
export type TransactionEvent = (typeof TRANSACTION_EVENTS)[number];

export interface TransitionRow<S extends string, E extends string> {
  readonly event: E;
  readonly from: readonly S[];
  readonly to: S;
}

export interface TransactionTransition extends TransitionRow<TransactionStatus, TransactionEvent> {
  /** When present, only sales paid by one of these methods may take this move. */
  readonly methods?: readonly PaymentMethod[];
}

/** One row per event of CONTRACT §6; each event has exactly one target status. */
export const TRANSACTION_TRANSITIONS: readonly TransactionTransition[] = [
  { event: 'PAYMENT_CONFIRMED', from: ['PENDENTE'], to: 'PAGO' },
  { event: 'SENT_TO_PROCESSOR', from: ['PENDENTE'], to: 'EM_PROCESSAMENTO', methods: CARD_METHODS },
  { event: 'APPROVED', from: ['EM_PROCESSAMENTO'], to: 'PAGO' },
  { event: 'DECLINED', from: ['EM_PROCESSAMENTO'], to: 'RECUSADO' },
  { event: 'PROCESSING_ERROR', from: ['PENDENTE', 'EM_PROCESSAMENTO'], to: 'FALHA' },
  { event: 'RETRY_PROCESSED', from: ['FALHA'], to: 'PAGO' },
  { event: 'CANCELLED', from: ['PENDENTE', 'FALHA'], to: 'CANCELADO' },
  { event: 'EXPIRED', from: ['PENDENTE'], to: 'CANCELADO', methods: ['PIX', 'BOLETO'] },
  { event: 'REFUNDED', from: ['PAGO'], to: 'ESTORNADO' },
  { event: 'CHARGEBACK_OPENED', from: ['PAGO'], to: 'CHARGEBACK', methods: CARD_METHODS },
  { event: 'CHARGEBACK_REVERTED', from: ['CHARGEBACK'], to: 'PAGO' },
  { event: 'CHARGEBACK_CONFIRMED', from: ['CHARGEBACK'], to: 'ESTORNADO' },
  { event: 'MED_OPENED', from: ['PAGO'], to: 'MED', methods: ['PIX'] },
  { event: 'MED_WON', from: ['MED'], to: 'PAGO' },
  { event: 'MED_LOST', from: ['MED'], to: 'ESTORNADO' },
];

/** Closed result of asking a state machine to take an event; shared with cashouts. */
export type TransitionOutcome<S extends string> = { kind: 'moved'; from: S; to: S } | { kind: 'noop' } | { kind: 'refused'; reason: string };

export interface TransactionState {
  status: TransactionStatus;
  paymentMethod: PaymentMethod;
  lastEvent: TransactionEvent | null;
  /** A refund is PENDING (CONTRACT §5a): no other refund, and no dispute, until it settles. */
  refundPending?: boolean;
}

// While a refund is PENDING its cents wait in blocked: a dispute or another refund would count them twice.
const waits_for_refund: readonly TransactionEvent[] = ['REFUNDED', 'MED_OPENED', 'CHARGEBACK_OPENED'];

/**
 * The §6 rule shared by both machines: repeating the last applied event while still in its target
 * status is a no-op (a retried webhook or operator call is answered 200, not 409); anything else
 * must be a row whose `from` holds the current status and that `objection` (if given) lets pass.
 */
export function applyTableEvent<S extends string, E extends string, R extends TransitionRow<S, E>>(
  table: readonly R[],
  current: { status: S; lastEvent: E | null },
  event: E,
  objection: (row: R) => string | null = () => null,
): TransitionOutcome<S> {
  const row = table.find((r) => r.event === event);
  if (!row) return { kind: 'refused', reason: `unknown event ${event}` };
  if (event === current.lastEvent && current.status === row.to) return { kind: 'noop' };
  if (!row.from.includes(current.status)) {
    return { kind: 'refused', reason: `event ${event} is not allowed from status ${current.status}` };
  }
  const reason = objection(row);
  return reason === null ? { kind: 'moved', from: current.status, to: row.to } : { kind: 'refused', reason };
}

export function applyTransactionEvent(current: TransactionState, event: TransactionEvent): TransitionOutcome<TransactionStatus> {
  // The method check guards real moves only; a no-op repeats a move that was already allowed.
  return applyTableEvent(TRANSACTION_TRANSITIONS, current, event, (row) => {
    if (row.methods && !row.methods.includes(current.paymentMethod)) return `event ${event} does not apply to ${current.paymentMethod} sales`;
    if (current.refundPending && waits_for_refund.includes(event)) return `a refund of this transaction is pending`;
    return null;
  });
}

/** Statuses that send transaction notifications (spec Events; MED → PAGO included). */
export const NOTIFYING_STATUSES = [
  'PAGO',
  'CANCELADO',
  'RECUSADO',
  'ESTORNADO',
  'FALHA',
  'CHARGEBACK',
  'MED',
] as const satisfies readonly TransactionStatus[];

/** No event leaves these (spec: "Final statuses (no further move)"). */
export const FINAL_STATUSES = ['CANCELADO', 'RECUSADO', 'ESTORNADO'] as const satisfies readonly TransactionStatus[];

export function isNotifyingStatus(status: TransactionStatus): boolean {
  return (NOTIFYING_STATUSES as readonly TransactionStatus[]).includes(status);
}

export function isFinalStatus(status: TransactionStatus): boolean {
  return (FINAL_STATUSES as readonly TransactionStatus[]).includes(status);
}

export const POSTING_KINDS = [
  'FIRST_PAYMENT',
  'REFUND',
  'MED_OPENED',
  'MED_WON',
  'MED_LOST',
  'CHARGEBACK_OPENED',
  'CHARGEBACK_REVERTED',
  'CHARGEBACK_CONFIRMED',
] as const;
export type PostingKind = (typeof POSTING_KINDS)[number];

/**
 * The ledger row of CONTRACT §5 that a move carries, or null for moves without money (e.g. to
 * EM_PROCESSAMENTO, CANCELADO). The pair of statuses is enough: PAGO is never left for PENDENTE,
 * EM_PROCESSAMENTO or FALHA, so a move from those to PAGO is always the first payment.
 * CHARGEBACK_REVERTED posts no lines itself but is named so the ledger can release a held reserve.
 */
export function postingKind(from: TransactionStatus, to: TransactionStatus): PostingKind | null {
  if (to === 'PAGO') {
    if (from === 'PENDENTE' || from === 'EM_PROCESSAMENTO' || from === 'FALHA') return 'FIRST_PAYMENT';
    if (from === 'MED') return 'MED_WON';
    if (from === 'CHARGEBACK') return 'CHARGEBACK_REVERTED';
    return null;
  }
  if (to === 'ESTORNADO') {
    if (from === 'PAGO') return 'REFUND';
    if (from === 'MED') return 'MED_LOST';
    if (from === 'CHARGEBACK') return 'CHARGEBACK_CONFIRMED';
    return null;
  }
  if (from === 'PAGO' && to === 'MED') return 'MED_OPENED';
  if (from === 'PAGO' && to === 'CHARGEBACK') return 'CHARGEBACK_OPENED';
  return null;
}
