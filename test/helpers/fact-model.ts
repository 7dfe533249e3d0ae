/**
 * An independent model of provider facts (CONTRACT §14, §11.2), over the money model: what a fact
 * about a sale does, written from the contract's words and NOT from src/. A fact is applied (moves
 * the sale, or changes nothing because it repeats what was applied), held (it cannot apply yet: a
 * dispute before the payment, a dispute while a refund is pending; tried again whenever the sale
 * moves, in order) or needs_operator (the state machine can never take it). The same fact sent again
 * changes nothing.
 *
 * MED 2.0 infractions (CONTRACT §11.5, §5a, §14): the model records each infraction's status, and
 * its sale. Ranks: ABERTA 0 < EM_DEFESA 1 < ACEITA, REJEITADA, CANCELADA 2 (the decisions). A fact's
 * effective status is the recorded one when that ranks higher or is a decision (the first decision
 * stands: a status told late never moves the sale back, nor does a later, different decision), else
 * its own, then recorded (whenever the sale is found, held or not). ABERTA, EM_DEFESA, ACEITA: the sale
 * is in MED (PAGO → MED_OPENED; MED, and ESTORNADO after MED_LOST: nothing; unpaid, or a refund
 * pending: held; anything else, or a MED_OPENED the machine refuses: the operator's). REJEITADA,
 * CANCELADA: MED → MED_WON unless another infraction of the sale is undecided or accepted; otherwise
 * nothing. An infraction of a Pix no sale has is the operator's, and nothing is recorded.
 */
import { EVENT_TABLE, type EventOutcome, type ModelSale, type MoneyModel, type Status, type TxEvent } from './money-model.ts';

export type InfractionStatus = 'ABERTA' | 'EM_DEFESA' | 'ACEITA' | 'REJEITADA' | 'CANCELADA';

export type ModelFact =
  | { kind: 'CHARGEBACK'; step: 'opened' | 'reversed' | 'lost' }
  | { kind: 'MED' }
  | { kind: 'AUTHORISATION'; amount: number }
  /** `known`: false when its endToEndId names no sale of this installation. */
  | { kind: 'INFRACTION'; infractionId: string; status: InfractionStatus; known: boolean };

export type FactState = 'applied' | 'held' | 'needs_operator';

interface Pending {
  saleId: number;
  fact: ModelFact;
}

const RANK: Readonly<Record<InfractionStatus, number>> = { ABERTA: 0, EM_DEFESA: 1, ACEITA: 2, REJEITADA: 2, CANCELADA: 2 };

const UNPAID: readonly Status[] = ['PENDENTE', 'EM_PROCESSAMENTO', 'FALHA'];

export class FactModel {
  private readonly seen = new Map<string, FactState>();
  private readonly held = new Map<string, Pending>();
  /** Each infraction's recorded status, and its sale. */
  readonly infractions = new Map<string, { status: InfractionStatus; saleId: number }>();
  /** Infraction facts whose own status gave way to the recorded one (counted for the report). */
  lateWords = 0;

  constructor(private readonly money: MoneyModel) {}

  /** A fact about `saleId`, as the provider sent it under `identity`: its state, or 'repeat'. */
  send(identity: string, saleId: number, fact: ModelFact, now: number): FactState | 'repeat' {
    if (this.seen.has(identity)) return 'repeat';
    // No sale has the Pix: the operator's, recorded nowhere, and no sale's held facts tried.
    if (fact.kind === 'INFRACTION' && !fact.known) {
      this.seen.set(identity, 'needs_operator');
      return 'needs_operator';
    }
    const state = this.apply(saleId, fact, now);
    this.seen.set(identity, state);
    if (state === 'held') this.held.set(identity, { saleId, fact });
    else this.retryHeld(saleId, now);
    return state;
  }

  /** The state of the fact sent under `identity` (undefined: never sent). */
  stateOf(identity: string): FactState | undefined {
    return this.seen.get(identity);
  }

  /** Held facts of `saleId` tried again in the order they came, until none moves. */
  retryHeld(saleId: number, now: number): void {
    for (let moved = true; moved; ) {
      moved = false;
      for (const [identity, pending] of this.held) {
        if (pending.saleId !== saleId) continue;
        const state = this.apply(saleId, pending.fact, now);
        if (state === 'held') continue;
        this.held.delete(identity);
        this.seen.set(identity, state);
        moved = true;
      }
    }
  }

  /** Every sale with held facts tried again (the job that runs every minute). */
  retryAll(now: number): void {
    for (const saleId of new Set([...this.held.values()].map((p) => p.saleId))) this.retryHeld(saleId, now);
  }

  heldCount(): number {
    return this.held.size;
  }

  private apply(saleId: number, fact: ModelFact, now: number): FactState {
    const sale = this.money.sale(saleId);
    const moves = fact.kind === 'INFRACTION' ? this.infractionMoves(sale, fact) : this.movesOf(sale, fact);
    if (moves === 'held' || moves === 'needs_operator') return moves;
    // A dispute waits for a refund still pending; anything else the machine refuses is for the operator.
    const outcomes = this.dryRun(sale, moves.events);
    if (outcomes === 'refund-pending') return 'held';
    if (outcomes === 'refused') return 'needs_operator';
    for (const event of moves.events) this.money.applyEvent(saleId, event, now);
    return moves.operator ? 'needs_operator' : 'applied';
  }

  /** What an infraction asks of the sale: what its effective status asks. */
  private infractionMoves(sale: ModelSale, fact: Extract<ModelFact, { kind: 'INFRACTION' }>) {
    const recorded = this.infractions.get(fact.infractionId)?.status;
    const effective = recorded !== undefined && (RANK[recorded] === 2 || RANK[recorded] > RANK[fact.status]) ? recorded : fact.status;
    if (effective !== fact.status) this.lateWords++;
    this.infractions.set(fact.infractionId, { status: effective, saleId: sale.id });
    const none = { events: [] as TxEvent[], operator: false };
    const { status, lastEvent } = sale;
    if (effective === 'REJEITADA' || effective === 'CANCELADA') {
      const othersBlock = [...this.infractions].some(
        ([id, r]) => id !== fact.infractionId && r.saleId === sale.id && r.status !== 'REJEITADA' && r.status !== 'CANCELADA',
      );
      return status === 'MED' && !othersBlock ? { events: ['MED_WON' as TxEvent], operator: false } : none;
    }
    if (status === 'MED') return none;
    if (UNPAID.includes(status)) return 'held' as const;
    if (status === 'PAGO') return { events: ['MED_OPENED' as TxEvent], operator: false };
    if (status === 'ESTORNADO' && lastEvent === 'MED_LOST') return none;
    return 'needs_operator' as const;
  }

  private dryRun(sale: ModelSale, events: TxEvent[]): 'ok' | 'refused' | 'refund-pending' {
    const copy = { ...sale };
    for (const event of events) {
      const outcome: EventOutcome = this.money.outcomeOf(copy, event);
      if (outcome === 'refused')
        return copy.pendingRefund > 0 && this.money.outcomeOf({ ...copy, pendingRefund: 0 }, event) !== 'refused' ? 'refund-pending' : 'refused';
      if (outcome === 'moved') {
        copy.status = toOf(event);
        copy.lastEvent = event;
      }
    }
    return 'ok';
  }

  private movesOf(
    sale: ModelSale,
    fact: Exclude<ModelFact, { kind: 'INFRACTION' }>,
  ): { events: TxEvent[]; operator: boolean } | 'held' | 'needs_operator' {
    const { status, lastEvent } = sale;
    if (fact.kind === 'AUTHORISATION') return authorisation(sale, fact.amount);
    if (UNPAID.includes(status)) return 'held';
    const [opened, reverted, confirmed, open] =
      fact.kind === 'MED'
        ? (['MED_OPENED', 'MED_WON', 'MED_LOST', 'MED'] as const)
        : (['CHARGEBACK_OPENED', 'CHARGEBACK_REVERTED', 'CHARGEBACK_CONFIRMED', 'CHARGEBACK'] as const);
    const step = fact.kind === 'MED' ? 'lost' : fact.step;
    const ok = (events: TxEvent[]) => ({ events, operator: false });
    if (step === 'opened') {
      if (status === 'PAGO') return ok([opened]);
      if (status === open) return ok([]);
    } else if (step === 'reversed') {
      if (status === open) return ok([reverted]);
      if (status === 'PAGO') return lastEvent === reverted ? ok([]) : 'held';
    } else {
      if (status === 'PAGO') return ok([opened, confirmed]);
      if (status === open) return ok([confirmed]);
      if (status === 'ESTORNADO' && lastEvent === confirmed) return ok([]);
    }
    return 'needs_operator';
  }
}

/** CONTRACT §11.2: an authorisation pays the sale where it can; another amount, or a sale that cannot take it, is returned. */
function authorisation(sale: ModelSale, amount: number): { events: TxEvent[]; operator: boolean } | 'needs_operator' {
  const { status } = sale;
  if (amount !== sale.amount) return { events: status === 'PENDENTE' || status === 'EM_PROCESSAMENTO' ? ['PROCESSING_ERROR'] : [], operator: true };
  if (status === 'PENDENTE') return { events: ['SENT_TO_PROCESSOR', 'APPROVED'], operator: false };
  if (status === 'EM_PROCESSAMENTO') return { events: ['APPROVED'], operator: false };
  if (status === 'FALHA') return { events: ['RETRY_PROCESSED'], operator: false };
  if (status === 'PAGO' || status === 'ESTORNADO' || status === 'CHARGEBACK') return { events: [], operator: false };
  return 'needs_operator';
}

const toOf = (event: TxEvent): Status => EVENT_TABLE[event].to;
