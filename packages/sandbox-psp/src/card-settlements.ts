/**
 * The sandbox card processor's settlement record (CONTRACT §15): the card movements it booked, and a
 * day's of them written as Adyen writes its Settlement details report (the same columns, decimal
 * amounts, São Paulo wall time with its zone), streamed a page at a time.
 */
import { type Db, run, type Statement, sql } from './sql.ts';

export type CardSettlementType = 'Settled' | 'Refunded' | 'Chargeback' | 'SecondChargeback' | 'ChargebackReversed';
const types: readonly string[] = ['Settled', 'Refunded', 'Chargeback', 'SecondChargeback', 'ChargebackReversed'];

/** A card movement to book, in Adyen's journal types. */
export interface CardSettlementInput {
  pspReference: string;
  merchantReference: string;
  type: CardSettlementType;
  amountCents: number;
  /** The modification's own reference (a refund's); the payment's pspReference when absent. */
  modificationReference?: string;
  /** Its processing fee, written as the line's Commission (default none). */
  feeCents?: number;
  /** When it was booked (default: now, by the PSP's clock). */
  at?: Date;
}

const reference = /^[A-Za-z0-9_-]{1,80}$/;

/** Books one movement; the same type and modification again changes nothing. */
export async function settleCard(db: Db, clock: { now(): Date }, input: CardSettlementInput): Promise<void> {
  if (!types.includes(input.type)) throw new RangeError(`settleCard: type ${input.type}`);
  if (!Number.isSafeInteger(input.amountCents) || input.amountCents <= 0) throw new RangeError('settleCard: amountCents must be a positive integer');
  const fee = input.feeCents ?? 0;
  if (!Number.isSafeInteger(fee) || fee < 0) throw new RangeError('settleCard: feeCents must be a non-negative integer');
  const modification = input.modificationReference ?? input.pspReference;
  for (const r of [input.pspReference, modification, input.merchantReference])
    if (!reference.test(r)) throw new RangeError(`settleCard: reference "${r}" is not 1–80 of [A-Za-z0-9_-]`);
  await run(
    db,
    sql`INSERT INTO sandbox_psp.card_settlements (type, psp_reference, merchant_reference, modification_reference, amount_cents, fee_cents, booked_at)
        VALUES (${input.type}, ${input.pspReference}, ${input.merchantReference}, ${modification}, ${input.amountCents}, ${fee}, ${input.at ?? clock.now()})
        ON CONFLICT (type, modification_reference) DO NOTHING`,
  );
}

// biome-ignore format: Adyen's column order
const header = [
  'Company Account', 'Merchant Account', 'Psp Reference', 'Merchant Reference', 'Payment Method', 'Creation Date', 'TimeZone', 'Type',
  'Modification Reference', 'Gross Currency', 'Gross Debit (GC)', 'Gross Credit (GC)', 'Exchange Rate', 'Net Currency', 'Net Debit (NC)',
  'Net Credit (NC)', 'Commission (NC)', 'Markup (NC)', 'Scheme Fees (NC)', 'Interchange (NC)', 'Payment Method Variant',
  'Modification Merchant Reference', 'Batch Number',
];

interface Booked {
  seq: string;
  type: CardSettlementType;
  psp_reference: string;
  merchant_reference: string;
  modification_reference: string;
  amount_cents: string | number;
  fee_cents: string | number;
  booked_at: Date;
}

// Brazil has kept UTC−3 all year since 2019: a São Paulo day is a fixed span of UTC.
const sao_paulo_offset_ms = -3 * 3600_000;

/** [start, end) of a São Paulo day given as YYYY-MM-DD; null when it is not a date. */
export function saoPauloDay(day: string): { start: Date; end: Date } | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const midnight = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(midnight) || new Date(midnight).toISOString().slice(0, 10) !== day) return null;
  return { start: new Date(midnight - sao_paulo_offset_ms), end: new Date(midnight - sao_paulo_offset_ms + 86_400_000) };
}

const decimal = (cents: number) => (cents === 0 ? '' : `${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`);
const cell = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/** One booked movement as a report line: credits for Settled and ChargebackReversed, debits otherwise; the fee between gross and net. */
function line(b: Booked, batch: string): string {
  const amount = Number(b.amount_cents);
  const fee = Number(b.fee_cents);
  const credit = b.type === 'Settled' || b.type === 'ChargebackReversed';
  const local = new Date(b.booked_at.getTime() + sao_paulo_offset_ms).toISOString().slice(0, 19).replace('T', ' ');
  // biome-ignore format: one value per column of the header
  return [
    'SandboxCompany', 'SandboxMerchant', b.psp_reference, b.merchant_reference, 'card', local, 'BRT', b.type, b.modification_reference,
    'BRL', credit ? '' : decimal(amount), credit ? decimal(amount) : '', '1', 'BRL', credit ? '' : decimal(amount + fee),
    credit ? decimal(amount - fee) : '', decimal(fee), '', '', '', 'card', '', batch,
  ].map(cell).join(',');
}

/** The day's report, a page of lines at a time (the header first). */
export async function* dayReport(db: Db, span: { start: Date; end: Date }, batch: string, pageSize = 1000): AsyncGenerator<string> {
  yield `${header.join(',')}\n`;
  let after: { at: Date; seq: string } | null = null;
  for (;;) {
    const from: Statement =
      after === null ? sql`booked_at >= ${span.start}` : sql`(booked_at, seq) > (${after.at}::timestamptz, ${after.seq}::bigint)`;
    const r = await run<Booked>(
      db,
      sql`SELECT seq, type, psp_reference, merchant_reference, modification_reference, amount_cents, fee_cents, booked_at
          FROM sandbox_psp.card_settlements
          WHERE booked_at < ${span.end} AND ${from}
          ORDER BY booked_at, seq LIMIT ${pageSize}`,
    );
    if (r.rows.length === 0) return;
    yield r.rows.map((b) => `${line({ ...b, booked_at: new Date(b.booked_at) }, batch)}\n`).join('');
    if (r.rows.length < pageSize) return;
    const last = r.rows[r.rows.length - 1]!;
    after = { at: new Date(last.booked_at), seq: String(last.seq) };
  }
}
