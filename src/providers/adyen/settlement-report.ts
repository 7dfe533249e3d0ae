/**
 * Adyen's Settlement details report (CONTRACT §15), read as a stream: one CSV line at a time, its
 * movements handed out in pages, so a batch of a million lines never sits in memory. Columns are
 * found by their header name (Adyen lets an account add and reorder columns). Each line's time is its
 * `Creation Date` in the `TimeZone` column's zone: when Adyen received the capture, refund or
 * dispute step, the moment the gateway's journal booked the same movement (the `Booking Date`, days
 * later, is kept in the detail when the report has it).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { MovementKind, ProviderMovement } from '../record.ts';
import { centsOf, instantOf, SettlementReportError } from './report-values.ts';

export { SettlementReportError } from './report-values.ts';

export interface SettlementSummary {
  /** Lines read under the header. */
  rows: number;
  movements: number;
  /** Lines of each reconciled type (Settled, Refunded, Chargeback, SecondChargeback, ChargebackReversed, Fee). */
  taken: Record<string, number>;
  /** Lines of the types the gateway does not reconcile (MerchantPayout, DepositCorrection, MiscCosts…), by type. */
  ignored: Record<string, number>;
  /** Lines in a currency other than BRL: no movement, for the operator (at most the first 20 line numbers). */
  otherCurrency: { rows: number; currencies: string[]; lines: number[] };
  /** Lines of another merchant account (a report of several), left out. */
  otherMerchantAccount: number;
  /** The latest Creation Date of any line: how far Adyen's settlement has reached. */
  latestAt: Date | null;
  batches: string[];
}

export interface SettlementReportOptions {
  /** Movements per page, at most 1,000 (the default). */
  pageSize?: number;
  /** Only this merchant account's lines; any other's are counted and left out. */
  merchantAccount?: string;
}

export type ReportSource = Readable | AsyncIterable<Buffer | string> | string;

// How Adyen names the columns, compared without case or repeated spaces.
const col = {
  merchantAccount: 'merchant account',
  psp: 'psp reference',
  merchantReference: 'merchant reference',
  paymentMethod: 'payment method',
  created: 'creation date',
  zone: 'timezone',
  type: 'type',
  modification: 'modification reference',
  grossCurrency: 'gross currency',
  grossDebit: 'gross debit (gc)',
  grossCredit: 'gross credit (gc)',
  netCurrency: 'net currency',
  netDebit: 'net debit (nc)',
  netCredit: 'net credit (nc)',
  batch: 'batch number',
  booking: 'booking date',
  bookingZone: 'booking date timezone',
} as const;
const required = [col.psp, col.created, col.zone, col.type, col.modification, col.grossCurrency, col.grossDebit, col.grossCredit];
const required_net = [col.netCurrency, col.netDebit, col.netCredit];
const fee_columns = ['commission (nc)', 'markup (nc)', 'scheme fees (nc)', 'interchange (nc)'];

type Row = Record<string, string | undefined>;
const identity_columns = [
  col.merchantAccount,
  col.psp,
  col.created,
  col.zone,
  col.type,
  col.modification,
  ...required_net,
  col.grossDebit,
  col.grossCredit,
  ...fee_columns,
];

/** The money movement of each reconciled line type, and the reference the gateway's journal names for it. */
const gross_types: Record<string, { kind: MovementKind; reference: (r: Row) => string }> = {
  Settled: { kind: 'CARD_SETTLED', reference: (r) => v(r, col.psp) },
  Refunded: { kind: 'CARD_REFUNDED', reference: (r) => v(r, col.modification) },
  Chargeback: { kind: 'CHARGEBACK', reference: (r) => `${v(r, col.psp)}:chargeback` },
  SecondChargeback: { kind: 'CHARGEBACK', reference: (r) => `${v(r, col.psp)}:chargeback` },
  ChargebackReversed: { kind: 'CHARGEBACK_REVERSED', reference: (r) => `${v(r, col.psp)}:chargeback-reversed` },
};

const v = (r: Row, name: string): string => r[name] ?? '';
const normalise = (name: string) => name.trim().toLowerCase().replace(/\s+/g, ' ');

function headerOf(names: string[]): string[] {
  const header = names.map(normalise);
  const missing = [...required, ...required_net].filter((c) => !header.includes(c));
  if (missing.length > 0) throw new SettlementReportError(`not a Settlement details report: no column ${missing.map((m) => `"${m}"`).join(', ')}`);
  return header;
}

export function emptySummary(): SettlementSummary {
  return {
    rows: 0,
    movements: 0,
    taken: {},
    ignored: {},
    otherCurrency: { rows: 0, currencies: [], lines: [] },
    otherMerchantAccount: 0,
    latestAt: null,
    batches: [],
  };
}

/**
 * The report's movements, page by page, and a summary filled in as they are read (complete once the
 * pages are). Throws SettlementReportError on a line it cannot read: a report is taken whole or not at all.
 */
export function readSettlementReport(source: ReportSource, options: SettlementReportOptions = {}) {
  const pageSize = options.pageSize ?? 1000;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) throw new RangeError(`pageSize must be 1 to 1000, got ${pageSize}`);
  const summary = emptySummary();
  return { pages: pagesOf(source, pageSize, options.merchantAccount, summary), summary };
}

async function* pagesOf(source: ReportSource, pageSize: number, merchantAccount: string | undefined, summary: SettlementSummary) {
  const parser = parse({ bom: true, columns: headerOf, skip_empty_lines: true, relax_column_count: true, trim: true, info: true });
  const input = typeof source === 'string' ? Readable.from([source]) : source instanceof Readable ? source : Readable.from(source);
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  const seen = new Map<string, number>();
  let page: ProviderMovement[] = [];
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Row; info: { lines: number } }>) {
      let movements: ProviderMovement[];
      try {
        movements = lineMovements(record, info.lines, merchantAccount, summary, seen);
      } catch (error) {
        if (error instanceof SettlementReportError) throw new SettlementReportError(`line ${info.lines}: ${error.message}`);
        throw error;
      }
      for (const m of movements) {
        if (page.length === pageSize) {
          yield page;
          page = [];
        }
        page.push(m);
        summary.movements++;
      }
    }
    if (page.length > 0) yield page;
  } catch (error) {
    // csv-parse wraps an error thrown while reading the header; the report's own words are kept.
    const cause = (error as { cause?: unknown }).cause;
    throw cause instanceof SettlementReportError ? cause : error;
  } finally {
    input.unpipe(parser);
    input.destroy();
    parser.destroy();
  }
}

/** One line's movements (none for a type not reconciled, another currency, or another merchant account). */
function lineMovements(
  r: Row,
  line: number,
  merchantAccount: string | undefined,
  s: SettlementSummary,
  seen: Map<string, number>,
): ProviderMovement[] {
  s.rows++;
  const type = v(r, col.type);
  const at = instantOf(v(r, col.created), v(r, col.zone));
  if (s.latestAt === null || at > s.latestAt) s.latestAt = at;
  const batch = v(r, col.batch);
  if (batch && !s.batches.includes(batch) && s.batches.length < 100) s.batches.push(batch);
  if (merchantAccount !== undefined && r[col.merchantAccount] !== undefined && r[col.merchantAccount] !== merchantAccount) {
    s.otherMerchantAccount++;
    return [];
  }
  const gross = gross_types[type];
  if (!gross && type !== 'Fee') {
    s.ignored[type || '(none)'] = (s.ignored[type || '(none)'] ?? 0) + 1;
    return [];
  }
  const currencies = [...new Set([type === 'Fee' ? '' : v(r, col.grossCurrency), v(r, col.netCurrency)].filter((c) => c !== ''))];
  if (currencies.length === 0 || currencies.some((c) => c !== 'BRL')) {
    otherCurrency(s, currencies, line);
    return [];
  }
  s.taken[type] = (s.taken[type] ?? 0) + 1;
  const id = rowId(r, type, batch, seen);
  const detail = detailOf(r, type, batch, line);
  const out: ProviderMovement[] = [];
  if (gross) {
    const amount = centsOf(v(r, col.grossCredit), 'Gross Credit (GC)') - centsOf(v(r, col.grossDebit), 'Gross Debit (GC)');
    out.push({ id, kind: gross.kind, reference: gross.reference(r), amount, at, detail });
  }
  // A Fee line is Adyen's charge itself (Net Debit); any other line carries its own costs beside its gross amount.
  const fee = gross
    ? -fee_columns.reduce((sum, c) => sum + centsOf(v(r, c), c), 0)
    : centsOf(v(r, col.netCredit), 'Net Credit (NC)') - centsOf(v(r, col.netDebit), 'Net Debit (NC)');
  if (fee !== 0) out.push({ id: `${id}:fee`, kind: 'FEE', reference: `${v(r, col.psp) || v(r, col.modification)}:fee`, amount: fee, at, detail });
  return out;
}

function otherCurrency(s: SettlementSummary, currencies: string[], line: number): void {
  s.otherCurrency.rows++;
  for (const c of currencies.length > 0 ? currencies : ['(none)'])
    if (c !== 'BRL' && !s.otherCurrency.currencies.includes(c)) s.otherCurrency.currencies.push(c);
  if (s.otherCurrency.lines.length < 20) s.otherCurrency.lines.push(line);
}

/**
 * The line's own id, the same however often the report is read or regenerated with other columns:
 * a journal line is named by its type and Adyen's modification reference (unique per modification);
 * a line without one (a Fee line, whose Modification Reference is a description) by a digest of its
 * content, numbered when equal lines repeat.
 */
function rowId(r: Row, type: string, batch: string, seen: Map<string, number>): string {
  const modification = v(r, col.modification);
  if (type !== 'Fee' && /^[A-Za-z0-9_-]{1,80}$/.test(modification)) return `${type}:${modification}`;
  // Only the columns every settlement report has: a report regenerated with more columns names its lines the same.
  const content = identity_columns.map((k) => `${k}=${v(r, k)}`).join('\n');
  const digest = createHash('sha256').update(content).digest('hex').slice(0, 24);
  const n = (seen.get(digest) ?? 0) + 1;
  seen.set(digest, n);
  return `${type}:${batch || '-'}:${digest}${n > 1 ? `:${n}` : ''}`;
}

function detailOf(r: Row, type: string, batch: string, line: number): Record<string, unknown> {
  const detail: Record<string, unknown> = {
    type,
    pspReference: v(r, col.psp) || null,
    modificationReference: v(r, col.modification) || null,
    merchantReference: v(r, col.merchantReference) || null,
    paymentMethod: v(r, col.paymentMethod) || null,
    batch: batch || null,
    line,
    net: centsOf(v(r, col.netCredit), 'Net Credit (NC)') - centsOf(v(r, col.netDebit), 'Net Debit (NC)'),
  };
  const booking = v(r, col.booking);
  if (booking) detail.bookingDate = `${booking} ${v(r, col.bookingZone)}`.trim();
  return detail;
}
