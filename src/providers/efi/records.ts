/**
 * Efí's own record of the platform's accounts (CONTRACT §15), as reconciliation reads it: the Pix
 * the paying account sent and what their receivers' banks sent back (GET /v2/gn/pix/enviados), the
 * boletos paid (GET /v1/charges by payment date), and the account's balance (GET /v2/gn/saldo).
 * Only what moved money is a movement: a send REALIZADO, a return DEVOLVIDO, a boleto paid or
 * settled. Each is kept only when its booking time falls in the window asked for.
 */
import { saoPauloDate, saoPauloMidnight } from '../../domain/calendar.ts';
import { centsFromValor } from '../api-pix/client/valor.ts';
import type { ProviderMovement, RecordReader, RecordWindow } from '../record.ts';
import type { ChargePaid, EfiChargeReads, EfiChargesClient } from './charges-client.ts';
import type { EfiAccountReads, SentPixListed } from './pix-send-client.ts';

const day_ms = 86_400_000;
const brt_offset = '-03:00';

export interface SentRecordOptions {
  /** Sent Pix a page (1 to 1,000; the client's default when absent). */
  pageSize?: number;
  /**
   * How far before the window sent Pix are read for their returns. Efí lists a return under the Pix
   * it returns, and lists sent Pix by the time they were requested: a return made today of a Pix
   * sent last week is found only by reading last week's sends. Default 7 days, the period the
   * gateway reads completed payouts back for returns (CONTRACT §11.3).
   */
  returnsLookbackDays?: number;
}

export interface BoletoRecordOptions {
  /** Boletos a page (the client's default, 100, when absent). */
  pageSize?: number;
}

function checkWindow(w: RecordWindow): void {
  if (!(w.from instanceof Date) || !(w.to instanceof Date) || Number.isNaN(w.from.getTime()) || Number.isNaN(w.to.getTime()) || w.to <= w.from) {
    throw new RangeError('Efí record: the window must be two valid times, from before to');
  }
}

const within = (at: Date, w: RecordWindow) => at >= w.from && at < w.to;

/**
 * A time as Efí writes it: RFC 3339 with its zone (the Pix API), or São Paulo local time
 * "YYYY-MM-DD HH:MM:SS" or a bare date (the Cobranças API), which keeps UTC−3 all year.
 */
export function efiTime(text: string, what: string): Date {
  const local = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?))?$/.exec(text);
  const at = local ? (local[2] ? new Date(`${local[1]}T${local[2]}${brt_offset}`) : saoPauloMidnight(local[1]!)) : new Date(text);
  const zoned = local !== null || /(Z|[+-]\d{2}:\d{2})$/i.test(text);
  if (!at || !zoned || Number.isNaN(at.getTime())) throw new Error(`Efí record: ${what} is not a time: ${JSON.stringify(text)}`);
  return at;
}

/** A sent Pix's movements in the window: the send when it was made (REALIZADO), and each return. */
function sentMovements(sent: SentPixListed, w: RecordWindow): ProviderMovement[] {
  const out: ProviderMovement[] = [];
  // Booked when requested: Efí takes the money from the balance then (and gives it back if not made).
  const requested = efiTime(sent.requestedAt, `the sent Pix ${sent.idEnvio}'s horario.solicitacao`);
  if (sent.status === 'REALIZADO' && within(requested, w)) {
    out.push({
      id: `sent:${sent.endToEndId ?? sent.idEnvio}`,
      kind: 'PAYOUT',
      reference: sent.idEnvio,
      amount: -centsFromValor(sent.valor),
      at: requested,
      detail: { idEnvio: sent.idEnvio, endToEndId: sent.endToEndId, valor: sent.valor, status: sent.status, settledAt: sent.settledAt },
    });
  }
  for (const r of sent.returns) {
    if (!r.at) throw new Error(`Efí record: the return ${r.id} of the sent Pix ${sent.idEnvio} has no horario`);
    const at = efiTime(r.at, `the return ${r.id}'s horario`);
    if (!within(at, w)) continue;
    out.push({
      id: `sent-return:${r.id}`,
      kind: 'PAYOUT_RETURNED',
      reference: r.id,
      amount: centsFromValor(r.valor),
      at,
      detail: { rtrId: r.id, idEnvio: sent.idEnvio, endToEndId: sent.endToEndId, valor: r.valor },
    });
  }
  return out;
}

/** The paying account's sent Pix and their returns, page by page (a page with nothing in the window is skipped). */
export function sentPixRecord(client: Pick<EfiAccountReads, 'sentPages'>, options: SentRecordOptions = {}): RecordReader {
  const lookbackDays = options.returnsLookbackDays ?? 7;
  if (!Number.isSafeInteger(lookbackDays) || lookbackDays < 0) throw new RangeError('Efí record: returnsLookbackDays is a whole number of days ≥ 0');
  return async function* sentRecord(window) {
    checkWindow(window);
    const inicio = new Date(window.from.getTime() - lookbackDays * day_ms);
    // Efí's `fim` is inclusive: a send requested at `to` itself is read, and left to the next window.
    for await (const page of client.sentPages({ inicio, fim: window.to, itensPorPagina: options.pageSize })) {
      const movements = page.flatMap((sent) => sentMovements(sent, window));
      if (movements.length > 0) yield movements;
    }
  };
}

const paid_statuses = new Set(['paid', 'settled']);

async function boletoMovement(c: ChargePaid, client: Pick<EfiChargesClient, 'detail'>): Promise<ProviderMovement> {
  if (!c.paidAt) throw new Error(`Efí record: charge ${c.chargeId} is ${c.status} but its payment.paid_at is missing`);
  const at = efiTime(c.paidAt, `charge ${c.chargeId}'s payment.paid_at`);
  // The list's paid_value is optional in the SDK's schema: the charge's own detail tells it then.
  const paid = c.paidValue ?? (await client.detail(c.chargeId)).paidValue;
  if (paid === null) throw new Error(`Efí record: charge ${c.chargeId} is ${c.status} but Efí tells no paid value`);
  return {
    id: `charge:${c.chargeId}:paid`,
    kind: 'BOLETO_PAID',
    reference: String(c.chargeId),
    amount: paid,
    at,
    detail: { chargeId: c.chargeId, customId: c.customId, status: c.status, total: c.total, paidValue: paid, paidAt: c.paidAt },
  };
}

/**
 * The charges account's boletos paid or settled in the window. Efí selects them by São Paulo
 * payment date: the days covering the window are read, and only payments inside it kept.
 */
export function boletoRecord(
  client: Pick<EfiChargeReads, 'paidBoletoPages'> & Pick<EfiChargesClient, 'detail'>,
  options: BoletoRecordOptions = {},
): RecordReader {
  return async function* boletosRecord(window) {
    checkWindow(window);
    const days = { from: saoPauloDate(window.from), to: saoPauloDate(new Date(window.to.getTime() - 1)) };
    for await (const page of client.paidBoletoPages(days, options.pageSize)) {
      const movements: ProviderMovement[] = [];
      for (const charge of page) {
        if (!paid_statuses.has(charge.status)) continue;
        const movement = await boletoMovement(charge, client);
        if (within(movement.at, window)) movements.push(movement);
      }
      if (movements.length > 0) yield movements;
    }
  };
}

/** The paying account's balance at Efí, in cents (GET /v2/gn/saldo), shown beside the ledger's. */
export const efiBalance = (client: Pick<EfiAccountReads, 'getBalance'>): Promise<number> => client.getBalance();
