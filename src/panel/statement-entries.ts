/**
 * The extrato in a seller's words: each posting of the journal as the lines of a statement, with the
 * available balance after each. A paid sale reads as the sale, its fee and any reserve held, each on
 * its own line; a movement inside the blocked balance (a cashout paid out, a refund made) reads as
 * what happened, moving nothing the seller can still spend.
 */
import { reais } from './format.ts';
import { labelOf } from './labels.ts';
import type { PostingSums } from './statement-read.ts';

export interface Entry {
  posting: number;
  at: Date;
  text: string;
  /** What the line means for the money, when the text alone does not say. */
  detail: string | null;
  /** Signed cents on the available balance (0: the line moves only blocked money). */
  amount: number;
  sale: number | null;
  cashout: number | null;
  /** The available balance after this line. */
  balance: number;
}

type Line = Pick<Entry, 'text' | 'detail' | 'amount'>;

const back_to_balance = 'O valor separado volta ao saldo disponível.';
const set_aside = (until: string) => `Sai do disponível e fica bloqueado até ${until}.`;
const to_payer = (p: PostingSums) => `${reais(p.customer_funds)} devolvidos ao comprador.`;

/** A MED lost: the payer's money goes back from what the dispute blocked; anything the block held beyond it returns to available. */
const medReturned = (p: PostingSums) =>
  `${reais(p.customer_funds)} devolvidos ao pagador, do valor bloqueado na contestação.${p.available > 0 ? ' O que sobrou do bloqueio volta ao saldo disponível.' : ''}`;

// One line per kind: its text and, from what the posting moved, its detail.
const one_line: Record<string, (p: PostingSums) => [string, string | null]> = {
  CASHOUT_CREATED: () => ['Saque pedido', set_aside('o PIX ser feito')],
  CASHOUT_COMPLETED: (p) => [
    'Saque concluído',
    `${reais(p.payouts)} enviados por PIX${p.fee_revenue ? ` e ${reais(p.fee_revenue)} de tarifa` : ''}, do valor separado no pedido.`,
  ],
  CASHOUT_REJECTED: () => ['Saque recusado', back_to_balance],
  CASHOUT_CANCELLED: () => ['Saque cancelado', back_to_balance],
  CASHOUT_RETURNED: () => ['Saque devolvido pelo banco do recebedor', null],
  REFUND_REQUESTED: () => ['Estorno pedido', set_aside('o estorno ser feito')],
  REFUND_SUCCEEDED: (p) => ['Estorno concluído', `${to_payer(p)} O valor foi separado no pedido.`],
  REFUND_FAILED: () => ['Estorno não realizado', back_to_balance],
  RESERVE_RELEASE: () => ['Reserva liberada', 'A reserva retida na venda volta ao saldo disponível.'],
  // A PIX dispute (MED): the money blocked while it lasts, then released, or returned to the payer from the block.
  MED_OPENED: () => ['Contestação (MED) aberta: valor bloqueado', `O banco do pagador contestou o PIX. ${set_aside('a decisão')}`],
  MED_WON: () => ['Contestação (MED) ganha: valor liberado', 'O valor bloqueado na contestação volta ao saldo disponível.'],
  MED_LOST: (p) => ['Contestação (MED) perdida: valor devolvido', medReturned(p)],
  CHARGEBACK_OPENED: () => ['Multa de chargeback', null],
  CHARGEBACK_CONFIRMED: (p) => ['Chargeback confirmado', to_payer(p)],
};

/**
 * A paid sale: what the payer paid, less the fee, less the reserve held. The three are the posting's
 * own lines (the payer's money, the platform's fee, the seller's blocked); their sum is what reached
 * available, else the posting is not of that shape and reads as one line.
 */
function salePaid(p: PostingSums): Line[] | null {
  const lines: Line[] = [{ text: 'Venda paga', detail: null, amount: -p.customer_funds }];
  if (p.fee_revenue) lines.push({ text: 'Tarifa da venda', detail: null, amount: -p.fee_revenue });
  if (p.blocked) lines.push({ text: 'Reserva retida', detail: set_aside('a liberação da reserva'), amount: -p.blocked });
  return lines.reduce((sum, l) => sum + l.amount, 0) === p.available ? lines : null;
}

/** A posting's lines, oldest first. */
export function linesOf(p: PostingSums): Line[] {
  const paid = p.kind === 'FIRST_PAYMENT' ? salePaid(p) : null;
  if (paid) return paid;
  const [text, detail] = one_line[p.kind]?.(p) ?? [labelOf({}, p.kind), null];
  return [{ text, detail, amount: p.available }];
}

/** Postings newest first → statement lines newest first, each with the available balance after it. */
export function entriesOf(postings: PostingSums[], availableAfter: number): Entry[] {
  const entries: Entry[] = [];
  let balance = availableAfter;
  for (const p of postings) {
    const origin = { posting: p.id, at: p.created_at, sale: p.transaction_id, cashout: p.cashout_id };
    for (const line of linesOf(p).reverse()) {
      entries.push({ ...origin, ...line, balance });
      balance -= line.amount;
    }
  }
  return entries;
}
