/**
 * Pure: what a provider fact does to the sale or refund it concerns (CONTRACT §14, §11). Every
 * fact ends in one of three states: applied (the moves below, possibly none when it repeats what
 * was applied), held (it cannot apply yet: a chargeback before its payment, a dispute while a
 * refund is pending) or needs_operator (the state machine can never take it). Money a sale cannot
 * take is sent back (followup RETURN), and that too is shown to the operator.
 */
import type { DisputeStep, Fact, FactState, Followup } from './provider-facts.ts';
import { applyTransactionEvent, type PaymentMethod, type TransactionEvent, type TransactionStatus } from './transaction-states.ts';

export interface SaleSnapshot {
  id: number;
  status: TransactionStatus;
  paymentMethod: PaymentMethod;
  lastEvent: TransactionEvent | null;
  amount: number;
  refundPending: boolean;
  /** A capture of this sale's payment was already asked for (manual capture). */
  captureAsked: boolean;
  /** The Pix that paid the sale, when one did. */
  paidBy: string | null;
}

export interface RefundSnapshot {
  id: number;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED';
  transactionId: number;
  /** The payment the refund returns (its sale's externalTransactionId or endToEndId). */
  paymentIds: string[];
}

export interface Naming {
  externalId?: string;
  paidBy?: string;
  /** The account the Pix that paid it was received at, when not the sale's own. */
  paidAccount?: string;
  data?: Record<string, unknown>;
}

export interface FactPlan {
  state: FactState;
  /** Why it is held or needs the operator, in words; null when applied. */
  reason: string | null;
  /** The moves of the sale, in order (none for a repeat, a hold, or most of what the operator must see). */
  events: TransactionEvent[];
  followup: Followup | null;
  /** The payment the fact names becomes the sale's: its id, the Pix that paid it, what the sale keeps of the provider's word. */
  naming: Naming | null;
  /** A PENDING refund settled as the provider reported it. */
  settle: { status: 'SUCCEEDED' } | { status: 'FAILED'; reason: string } | null;
}

const none: FactPlan = { state: 'applied', reason: null, events: [], followup: null, naming: null, settle: null };
const applied = (events: TransactionEvent[], extra: Partial<FactPlan> = {}): FactPlan => ({ ...none, events, ...extra });
const held = (reason: string): FactPlan => ({ ...none, state: 'held', reason });
const forOperator = (reason: string, extra: Partial<FactPlan> = {}): FactPlan => ({ ...none, state: 'needs_operator', reason, ...extra });

/** Not paid yet: a word about the money that came before the payment's own is held for it. */
const unpaid: readonly TransactionStatus[] = ['PENDENTE', 'EM_PROCESSAMENTO', 'FALHA'];

/**
 * Checks `events` against the state machine from the sale as read: a move a pending refund holds
 * back makes the fact wait; a move the machine refuses otherwise needs the operator.
 */
export function checked(sale: SaleSnapshot, plan: FactPlan): FactPlan {
  let state = { status: sale.status, paymentMethod: sale.paymentMethod, lastEvent: sale.lastEvent, refundPending: sale.refundPending };
  for (const event of plan.events) {
    const outcome = applyTransactionEvent(state, event);
    if (outcome.kind === 'refused') {
      if (sale.refundPending && applyTransactionEvent({ ...state, refundPending: false }, event).kind !== 'refused')
        return held('a refund of the sale is pending');
      return forOperator(`${event} refused for a ${sale.status} sale: ${outcome.reason}`, { followup: plan.followup });
    }
    if (outcome.kind === 'moved') state = { ...state, status: outcome.to, lastEvent: event };
  }
  return plan;
}

/** The plan of a fact about a sale, as the sale was read (locked) in the applying transaction. */
export function planSaleFact(fact: Fact, sale: SaleSnapshot): FactPlan {
  switch (fact.kind) {
    case 'AUTHORISATION':
      return checked(sale, planAuthorisation(fact, sale));
    case 'CARD_ANSWER':
      return planCardAnswer(fact, sale);
    case 'CAPTURE':
      return checked(sale, planCapture(fact, sale));
    case 'CANCELLATION':
      if (sale.status === 'PENDENTE' || sale.status === 'FALHA') return applied(['CANCELLED']);
      if (sale.status === 'CANCELADO') return none;
      return forOperator(`the payment was cancelled at the provider while the sale is ${sale.status}`);
    case 'CHARGEBACK':
      return checked(sale, planDispute(sale, fact.step, 'CHARGEBACK'));
    case 'MED':
      return checked(sale, planDispute(sale, 'lost', 'MED'));
    case 'PIX_RECEIVED':
      return sale.paymentMethod === 'BOLETO'
        ? planBoletoPix(fact.amount, { paidBy: fact.endToEndId, ...(fact.account ? { paidAccount: fact.account } : {}) }, sale)
        : planPixReceived(fact.amount, fact.endToEndId, sale);
    case 'BOLETO_STATUS':
      return planBoletoStatus(fact, sale);
    default:
      throw new Error(`a ${fact.kind} fact does not concern a sale`);
  }
}

function planAuthorisation(fact: Extract<Fact, { kind: 'AUTHORISATION' }>, sale: SaleSnapshot): FactPlan {
  if (!fact.authorised) {
    if (sale.status === 'PENDENTE') return applied(['SENT_TO_PROCESSOR', 'DECLINED']);
    return applied(sale.status === 'EM_PROCESSAMENTO' ? ['DECLINED'] : []);
  }
  if (fact.amount !== sale.amount || fact.currency !== 'BRL') {
    const failed: TransactionEvent[] = sale.status === 'PENDENTE' || sale.status === 'EM_PROCESSAMENTO' ? ['PROCESSING_ERROR'] : [];
    return forOperator(`authorised ${fact.amount} ${fact.currency} for a sale of ${sale.amount} BRL: returned`, {
      events: failed,
      followup: 'RETURN',
    });
  }
  const paid = eventsToPaid(sale.status);
  if (paid === null) return forOperator(`authorised for a ${sale.status} sale: returned`, { followup: 'RETURN' });
  const naming = { externalId: fact.paymentId, data: { authorised: true } };
  if (!fact.captureByGateway) return applied(paid, { naming });
  // Manual capture: the sale waits in EM_PROCESSAMENTO (or FALHA) for its capture.
  const waiting: TransactionEvent[] = sale.status === 'PENDENTE' ? ['SENT_TO_PROCESSOR'] : [];
  return applied(waiting, { naming, followup: paid.length > 0 && !sale.captureAsked ? 'CAPTURE' : null });
}

/**
 * A processor's answer to the payment request moves only a sale still PENDENTE: a notification
 * that got there first has said more. Authorised waits in EM_PROCESSAMENTO for the money's own word
 * (the AUTHORISATION notification, or the capture the gateway then asks for).
 */
function planCardAnswer(fact: Extract<Fact, { kind: 'CARD_ANSWER' }>, sale: SaleSnapshot): FactPlan {
  const authorised = fact.result === 'AUTHORISED';
  const data = authorised ? { ...fact.data, authorised: true } : fact.data;
  const naming = fact.paymentId === null ? { data } : { externalId: fact.paymentId, data };
  if (sale.status !== 'PENDENTE') return applied([], { naming: fact.paymentId === null ? null : naming });
  switch (fact.result) {
    case 'AUTHORISED':
      return applied(['SENT_TO_PROCESSOR'], { naming, followup: fact.captureByGateway && !sale.captureAsked ? 'CAPTURE' : null });
    case 'REFUSED':
      return applied(['SENT_TO_PROCESSOR', 'DECLINED'], { naming });
    case 'PENDING':
      return applied(['SENT_TO_PROCESSOR'], { naming });
    case 'ERROR':
      return applied(['PROCESSING_ERROR'], { naming });
  }
}

function planCapture(fact: Extract<Fact, { kind: 'CAPTURE' }>, sale: SaleSnapshot): FactPlan {
  if (!fact.captured) {
    if (sale.status === 'PAGO') return forOperator('the capture failed for a PAGO sale');
    return applied(sale.status === 'PENDENTE' || sale.status === 'EM_PROCESSAMENTO' ? ['PROCESSING_ERROR'] : []);
  }
  const paid = eventsToPaid(sale.status);
  return paid === null ? forOperator(`captured for a ${sale.status} sale: returned`, { followup: 'RETURN' }) : applied(paid);
}

/** The events that bring a sale to PAGO with money the provider confirmed; [] when already paid; null when it cannot take it. */
export function eventsToPaid(status: TransactionStatus): TransactionEvent[] | null {
  switch (status) {
    case 'PENDENTE':
      return ['SENT_TO_PROCESSOR', 'APPROVED'];
    case 'EM_PROCESSAMENTO':
      return ['APPROVED'];
    case 'FALHA':
      return ['RETRY_PROCESSED'];
    case 'PAGO':
    case 'ESTORNADO':
    case 'CHARGEBACK':
      // Already paid (a repeated or late word): nothing more to do, and nothing to return.
      return [];
    default:
      return null;
  }
}

/**
 * A dispute's step on the sale as it is. Before the payment is recorded it waits for it; once the
 * money has gone back to the payer (ESTORNADO) only a repeat of how it got there changes nothing.
 */
function planDispute(sale: SaleSnapshot, step: DisputeStep, scheme: 'CHARGEBACK' | 'MED'): FactPlan {
  const [opened, reverted, confirmed] =
    scheme === 'CHARGEBACK'
      ? (['CHARGEBACK_OPENED', 'CHARGEBACK_REVERTED', 'CHARGEBACK_CONFIRMED'] as const)
      : (['MED_OPENED', 'MED_WON', 'MED_LOST'] as const);
  const name = scheme === 'CHARGEBACK' ? 'chargeback' : 'MED';
  if (unpaid.includes(sale.status)) return held(`a ${name} ${step} before the payment was recorded`);
  const { status, lastEvent } = sale;
  if (step === 'opened') {
    if (status === 'PAGO') return applied([opened]);
    if (status === scheme) return none;
  } else if (step === 'reversed') {
    if (status === scheme) return applied([reverted]);
    if (status === 'PAGO' && lastEvent === reverted) return none;
    // The reversal came before the dispute itself: it waits for it.
    if (status === 'PAGO') return held(`a ${name} reversed before it was opened`);
  } else {
    if (status === 'PAGO') return applied([opened, confirmed]);
    if (status === scheme) return applied([confirmed]);
    if (status === 'ESTORNADO' && lastEvent === confirmed) return none;
  }
  return forOperator(`a ${name} ${step} for a ${status} sale${status === 'ESTORNADO' ? ': its money was already returned' : ''}`);
}

/** A confirmed Pix: it pays its PENDENTE sale of exactly that amount, or it is returned whole. */
function planPixReceived(amount: number, endToEndId: string, sale: SaleSnapshot): FactPlan {
  if (sale.status !== 'PENDENTE') return forOperator(`the sale is ${sale.status}`, { followup: 'RETURN' });
  if (sale.amount !== amount) return forOperator(`${amount} cents for a sale of ${sale.amount}`, { followup: 'RETURN' });
  return applied(['PAYMENT_CONFIRMED'], { naming: { paidBy: endToEndId } });
}

/**
 * The Pix of a boleto híbrido: the same money its issuer tells of as the boleto paid, so it pays a
 * PENDENTE sale of that amount and, on a sale that payment already paid, only names the Pix. Any
 * other is the issuer's payment the sale cannot take, returned by hand like the boleto's (11.4);
 * a second Pix on a paid boleto is returned whole.
 */
function planBoletoPix(amount: number, paid: { paidBy: string; paidAccount?: string }, sale: SaleSnapshot): FactPlan {
  const endToEndId = paid.paidBy;
  if (sale.status === 'PENDENTE') {
    if (sale.amount !== amount)
      return forOperator(`${amount} cents paid by the Pix of a boleto of ${sale.amount}: the money must be returned to the payer`);
    // Its money is where the Pix was received: the PSP's account, not the issuer's.
    return applied(['PAYMENT_CONFIRMED'], { naming: paid });
  }
  if (eventsToPaid(sale.status)?.length !== 0)
    return forOperator(`the Pix of a boleto whose sale is ${sale.status}: the money must be returned to the payer`);
  if (sale.paidBy === null) return applied([], { naming: { paidBy: endToEndId } });
  return forOperator(`a second Pix for a boleto already paid by ${sale.paidBy}`, { followup: 'RETURN' });
}

/**
 * A boleto's charge as its issuer tells it: paid on a PENDENTE sale of that amount → PAGO; cancelled
 * or expired unpaid → CANCELADO. A payment the sale cannot take (no longer PENDENTE, another value)
 * is money the platform must return by hand: the operator's.
 */
function planBoletoStatus(fact: Extract<Fact, { kind: 'BOLETO_STATUS' }>, sale: SaleSnapshot): FactPlan {
  if (fact.status === 'paid') {
    if (sale.status === 'PENDENTE') {
      if (fact.amount !== null && fact.amount !== sale.amount) return forOperator(`${fact.amount} cents paid for a boleto of ${sale.amount}`);
      return applied(['PAYMENT_CONFIRMED']);
    }
    // Paid, then settled: the same payment told twice (or confirmed by the operator first).
    if (sale.status !== 'CANCELADO') return none;
    return forOperator(`a payment of a boleto whose sale is ${sale.status}: the money must be returned to the payer`);
  }
  if (sale.status === 'PENDENTE') return applied([fact.status === 'canceled' ? 'CANCELLED' : 'EXPIRED']);
  if (sale.status === 'CANCELADO') return none;
  return forOperator(`the issuer says the boleto was ${fact.status === 'canceled' ? 'cancelled' : 'not paid'} while the sale is ${sale.status}`);
}

/**
 * A Pix that matches no sale of this installation (another installation's on a shared PSP account,
 * a Pix to the key without a txid): shown to the operator, never returned or credited on its own.
 */
export const unclaimedPix: FactPlan = forOperator("not this installation's");

/** A fact about a payment no sale of this gateway has: the operator must see it (money may be at the provider). */
export const unknownSale = (fact: Fact): FactPlan =>
  fact.kind === 'PIX_RECEIVED' || fact.kind === 'INFRACTION' ? unclaimedPix : forOperator('no sale of this gateway has this payment');

/** A refund's outcome, against the refund as read. */
export function planRefundFact(fact: Extract<Fact, { kind: 'REFUND' }>, refund: RefundSnapshot | null): FactPlan {
  if (!refund || (fact.paymentId !== null && !refund.paymentIds.includes(fact.paymentId)))
    return forOperator(`a refund of ${fact.amount} cents the gateway never asked for`);
  const outcome = fact.succeeded ? 'SUCCEEDED' : 'FAILED';
  if (refund.status === 'PENDING')
    return applied([], { settle: fact.succeeded ? { status: 'SUCCEEDED' } : { status: 'FAILED', reason: fact.reason ?? 'refused by the provider' } });
  if (refund.status === outcome) return none;
  return forOperator(
    fact.succeeded
      ? `refund ${refund.id} succeeded after it FAILED: the payer has cents the seller was given back`
      : `refund ${refund.id} failed after it SUCCEEDED: ${fact.reason ?? 'no reason given'}`,
  );
}
