import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { reportVerdict } from '../../src/providers/adyen/report-queue.ts';
import { centsOf, instantOf } from '../../src/providers/adyen/report-values.ts';
import { readSettlementReport, SettlementReportError, type SettlementReportOptions } from '../../src/providers/adyen/settlement-report.ts';
import type { ProviderMovement } from '../../src/providers/record.ts';

// Adyen's standard columns, in its documented order (Settlement details report, "Standard columns").
// biome-ignore format: one header
const columns = [
  'Company Account', 'Merchant Account', 'Psp Reference', 'Merchant Reference', 'Payment Method', 'Creation Date', 'TimeZone', 'Type',
  'Modification Reference', 'Gross Currency', 'Gross Debit (GC)', 'Gross Credit (GC)', 'Exchange Rate', 'Net Currency', 'Net Debit (NC)',
  'Net Credit (NC)', 'Commission (NC)', 'Markup (NC)', 'Scheme Fees (NC)', 'Interchange (NC)', 'Payment Method Variant',
  'Modification Merchant Reference', 'Batch Number',
] as const;
type Line = Partial<Record<(typeof columns)[number], string>>;

const base: Line = {
  'Company Account': 'PagarCo',
  'Merchant Account': 'PagarGatewayECOM',
  TimeZone: 'BRT',
  'Batch Number': '42',
  'Exchange Rate': '1',
};
const csv = (lines: Line[], order: readonly string[] = columns) => {
  const row = (l: Line) => {
    const all: Record<string, string | undefined> = { ...base, ...l };
    return order.map((c) => all[c] ?? '').join(',');
  };
  return `${order.join(',')}\n${lines.map(row).join('\n')}\n`;
};

async function readAll(text: string | AsyncIterable<string>, options: SettlementReportOptions = {}) {
  const report = readSettlementReport(text, options);
  const pages: ProviderMovement[][] = [];
  for await (const page of report.pages) pages.push(page);
  return { pages, movements: pages.flat(), summary: report.summary };
}

const settled: Line = {
  'Psp Reference': '8815000000000001',
  'Merchant Reference': '17',
  'Payment Method': 'visa',
  'Creation Date': '2026-03-02 10:15:00',
  Type: 'Settled',
  'Modification Reference': '8815000000000011',
  'Gross Currency': 'BRL',
  'Gross Credit (GC)': '150.00',
  'Net Currency': 'BRL',
  'Net Credit (NC)': '146.53',
  'Markup (NC)': '1.15',
  'Scheme Fees (NC)': '0.29',
  'Interchange (NC)': '2.03',
};

test('each reconciled type: its kind, signed cents, reference, time, and its costs as a FEE', async () => {
  const refund: Line = {
    ...settled,
    Type: 'Refunded',
    'Modification Reference': '8815000000000022',
    'Gross Credit (GC)': '',
    'Gross Debit (GC)': '40.10',
    'Net Credit (NC)': '',
    'Net Debit (NC)': '40.10',
    'Markup (NC)': '',
    'Scheme Fees (NC)': '',
    'Interchange (NC)': '',
  };
  const dispute = (type: string, ref: string, debit: boolean): Line => ({
    ...settled,
    Type: type,
    'Modification Reference': ref,
    'Gross Credit (GC)': debit ? '' : '150.00',
    'Gross Debit (GC)': debit ? '150.00' : '',
    'Net Credit (NC)': debit ? '' : '150.00',
    'Net Debit (NC)': debit ? '157.50' : '',
    'Commission (NC)': debit ? '7.5' : '',
    'Markup (NC)': '',
    'Scheme Fees (NC)': '',
    'Interchange (NC)': '',
  });
  const fee: Line = {
    'Creation Date': '2026-03-02 23:59:59',
    Type: 'Fee',
    'Modification Reference': 'Transaction Fees',
    'Net Currency': 'BRL',
    'Net Debit (NC)': '12.34',
  };
  const { movements, summary } = await readAll(
    csv([
      settled,
      refund,
      dispute('Chargeback', '8815000000000033', true),
      dispute('SecondChargeback', '8815000000000044', true),
      dispute('ChargebackReversed', '8815000000000055', false),
      fee,
    ]),
  );
  const brief = movements.map(({ id, kind, reference, amount }) => ({ id, kind, reference, amount }));
  assert.deepEqual(brief, [
    { id: 'Settled:8815000000000011', kind: 'CARD_SETTLED', reference: '8815000000000001', amount: 15000 },
    { id: 'Settled:8815000000000011:fee', kind: 'FEE', reference: '8815000000000001:fee', amount: -347 },
    { id: 'Refunded:8815000000000022', kind: 'CARD_REFUNDED', reference: '8815000000000022', amount: -4010 },
    { id: 'Chargeback:8815000000000033', kind: 'CHARGEBACK', reference: '8815000000000001:chargeback', amount: -15000 },
    { id: 'Chargeback:8815000000000033:fee', kind: 'FEE', reference: '8815000000000001:fee', amount: -750 },
    { id: 'SecondChargeback:8815000000000044', kind: 'CHARGEBACK', reference: '8815000000000001:chargeback', amount: -15000 },
    { id: 'SecondChargeback:8815000000000044:fee', kind: 'FEE', reference: '8815000000000001:fee', amount: -750 },
    { id: 'ChargebackReversed:8815000000000055', kind: 'CHARGEBACK_REVERSED', reference: '8815000000000001:chargeback-reversed', amount: 15000 },
    { id: movements[8]!.id, kind: 'FEE', reference: 'Transaction Fees:fee', amount: -1234 },
  ]);
  assert.match(movements[8]!.id, /^Fee:42:[0-9a-f]{24}:fee$/);
  // 10:15 in São Paulo (BRT, UTC−3) is 13:15 UTC; the costs are booked with the line.
  assert.equal(movements[0]!.at.toISOString(), '2026-03-02T13:15:00.000Z');
  assert.equal(movements[1]!.at.toISOString(), '2026-03-02T13:15:00.000Z');
  assert.deepEqual(movements[0]!.detail, {
    type: 'Settled',
    pspReference: '8815000000000001',
    modificationReference: '8815000000000011',
    merchantReference: '17',
    paymentMethod: 'visa',
    batch: '42',
    line: 2,
    net: 14653,
  });
  assert.equal(summary.rows, 6);
  assert.equal(summary.movements, 9);
  assert.deepEqual(summary.taken, { Settled: 1, Refunded: 1, Chargeback: 1, SecondChargeback: 1, ChargebackReversed: 1, Fee: 1 });
  assert.equal(summary.latestAt?.toISOString(), '2026-03-03T02:59:59.000Z');
  assert.deepEqual(summary.batches, ['42']);
});

test('amounts: decimal text to integer cents exactly, never through a float', () => {
  // Each of these is off by one cent as Math.round(parseFloat(x) * 100) would not be, or as x * 100 is not whole.
  for (const [text, cents] of [
    ['1.15', 115],
    ['4.35', 435],
    ['0.29', 29],
    ['1.005', null],
    ['7.5', 750],
    ['5.000', 500],
    ['', 0],
    ['-2.5', -250],
    ['1234567890.12', 123456789012],
    ['0', 0],
    ['-0.00', 0],
  ] as const) {
    if (cents === null) assert.throws(() => centsOf(text, 'X'), SettlementReportError, text);
    else assert.equal(centsOf(text, 'X'), cents, text);
  }
  for (const bad of ['1,234.00', '1.2.3', 'abc', '1e3', ' . ', '.5', '1.'])
    assert.throws(() => centsOf(bad, 'Gross Credit (GC)'), /Gross Credit \(GC\)/);
  fc.assert(
    fc.property(fc.integer({ min: -1e12, max: 1e12 }), fc.integer({ min: 0, max: 3 }), (cents, zeros) => {
      const abs = Math.abs(cents);
      const text = `${cents < 0 ? '-' : ''}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}${'0'.repeat(zeros)}`;
      return centsOf(text, 'X') === cents;
    }),
  );
});

test('times: the TimeZone column read as Adyen writes it; an ambiguous or unknown zone refused', () => {
  assert.equal(instantOf('2026-03-02 10:15:00', 'BRT').toISOString(), '2026-03-02T13:15:00.000Z');
  assert.equal(instantOf('2026-03-02 10:15:00', 'America/Sao_Paulo').toISOString(), '2026-03-02T13:15:00.000Z');
  assert.equal(instantOf('2013-06-03 11:26:49', 'CET').toISOString(), '2013-06-03T10:26:49.000Z');
  assert.equal(instantOf('2013-06-03 11:26:49', 'CEST').toISOString(), '2013-06-03T09:26:49.000Z');
  // An IANA name follows the zone's summer time; an offset is taken as written.
  assert.equal(instantOf('2013-06-03 11:26:49', 'Europe/Amsterdam').toISOString(), '2013-06-03T09:26:49.000Z');
  assert.equal(instantOf('2013-01-03 11:26:49', 'Europe/Amsterdam').toISOString(), '2013-01-03T10:26:49.000Z');
  assert.equal(instantOf('2026-03-02 10:15:00', 'GMT-03:00').toISOString(), '2026-03-02T13:15:00.000Z');
  assert.equal(instantOf('2026-03-02 10:15:00', '+0530').toISOString(), '2026-03-02T04:45:00.000Z');
  for (const zone of ['CST', 'IST', 'Mars/Olympus', '']) assert.throws(() => instantOf('2026-03-02 10:15:00', zone), SettlementReportError, zone);
  for (const when of ['2026-02-30 10:00:00', '02/03/2026 10:00', '2026-03-02 24:00:00'])
    assert.throws(() => instantOf(when, 'BRT'), SettlementReportError, when);
});

test('types not reconciled, other currencies and other merchant accounts: no movement, counted in the summary', async () => {
  const lines: Line[] = [
    settled,
    { ...settled, Type: 'MerchantPayout', 'Modification Reference': 'Payout', 'Net Debit (NC)': '146.53', 'Net Credit (NC)': '' },
    { ...settled, Type: 'DepositCorrection', 'Modification Reference': 'x' },
    { ...settled, Type: 'RefundedReversed', 'Modification Reference': 'y' },
    { ...settled, Type: 'MerchantPayout', 'Modification Reference': 'Payout 2' },
    { ...settled, 'Gross Currency': 'USD', 'Net Currency': 'USD', 'Modification Reference': 'z' },
    { ...settled, 'Net Currency': 'EUR', 'Modification Reference': 'w' },
    { ...settled, 'Merchant Account': 'SomeoneElseECOM', 'Modification Reference': 'v' },
  ];
  const { movements, summary } = await readAll(csv(lines), { merchantAccount: 'PagarGatewayECOM' });
  assert.deepEqual(
    movements.map((m) => m.kind),
    ['CARD_SETTLED', 'FEE'],
  );
  assert.deepEqual(summary.ignored, { MerchantPayout: 2, DepositCorrection: 1, RefundedReversed: 1 });
  assert.deepEqual(summary.otherCurrency, { rows: 2, currencies: ['USD', 'EUR'], lines: [7, 8] });
  assert.equal(summary.otherMerchantAccount, 1);
  assert.equal(summary.rows, 8);
});

test('columns are found by name: any order, case and spacing, extra columns; a missing one names itself', async () => {
  const lines = [
    settled,
    { ...settled, Type: 'Refunded', 'Modification Reference': '8815000000000022', 'Gross Debit (GC)': '10.00', 'Gross Credit (GC)': '' },
  ];
  const plain = (await readAll(csv(lines))).movements;
  const shuffled = [...columns].reverse();
  const renamed = shuffled.map((c) => (c === 'TimeZone' ? 'Timezone' : c === 'Gross Credit (GC)' ? 'GROSS  CREDIT (GC)' : c));
  const text = csv(lines, shuffled).replace(shuffled.join(','), [...renamed, 'Booking Date'].join(','));
  const reordered = (await readAll(`\uFEFF${text}`)).movements;
  assert.deepEqual(
    reordered.map(({ detail: _d, ...m }) => m),
    plain.map(({ detail: _d, ...m }) => m),
  );
  await assert.rejects(
    readAll(
      csv(
        [settled],
        columns.filter((c) => c !== 'Modification Reference'),
      ),
    ),
    (e: Error) => {
      assert.ok(e instanceof SettlementReportError);
      assert.match(e.message, /no column "modification reference"/);
      return true;
    },
  );
  await assert.rejects(
    readAll(csv([{ ...settled, 'Gross Credit (GC)': '1.234' }])),
    /line 2: Gross Credit \(GC\) "1.234" is not a whole number of cents/,
  );
});

test('ids are the same at every read; equal Fee lines stay apart', async () => {
  const fee: Line = {
    'Creation Date': '2026-03-31 23:00:00',
    Type: 'Fee',
    'Modification Reference': 'Transaction Fees',
    'Net Currency': 'BRL',
    'Net Debit (NC)': '3.00',
  };
  const text = csv([settled, fee, fee]);
  const first = (await readAll(text)).movements.map((m) => m.id);
  const second = (await readAll(text)).movements.map((m) => m.id);
  assert.deepEqual(first, second);
  assert.equal(new Set(first).size, first.length);
  assert.equal(first.filter((id) => id.startsWith('Fee:')).length, 2);
  // A report regenerated with a column more names its lines the same: a fee read twice is posted once.
  const wider = [...columns, 'Acquirer'];
  const regenerated = (await readAll(csv([settled, fee, fee], wider))).movements.map((m) => m.id);
  assert.deepEqual(regenerated, first);
});

test('a 10,000-line report is streamed: pages of at most 1,000, read while the source is still being produced', async () => {
  const total = 10_000;
  let produced = 0;
  let producedAtFirstPage: number | null = null;
  async function* source() {
    yield `${columns.join(',')}\n`;
    for (let i = 0; i < total; i += 100) {
      const lines: Line[] = [];
      for (let j = i; j < i + 100; j++)
        lines.push({
          ...settled,
          'Psp Reference': `P${j}`,
          'Modification Reference': `M${j}`,
          'Gross Credit (GC)': `${j}.${String(j % 100).padStart(2, '0')}`,
          'Net Credit (NC)': '',
        });
      produced += lines.length;
      yield csv(lines).slice(columns.join(',').length + 1);
    }
  }
  const report = readSettlementReport(source());
  let pages = 0;
  let count = 0;
  let sum = 0;
  for await (const page of report.pages) {
    producedAtFirstPage ??= produced;
    pages++;
    assert.ok(page.length <= 1000, `page of ${page.length}`);
    for (const m of page) if (m.kind === 'CARD_SETTLED') sum += m.amount;
    count += page.length;
  }
  // Each line: its settlement and its fee (markup, scheme fees, interchange).
  assert.equal(count, 2 * total);
  assert.equal(pages, (2 * total) / 1000);
  assert.equal(
    sum,
    Array.from({ length: total }, (_, j) => j * 100 + (j % 100)).reduce((a, b) => a + b, 0),
  );
  assert.equal(report.summary.rows, total);
  assert.ok(producedAtFirstPage !== null && producedAtFirstPage < total / 2, `the first page came after ${producedAtFirstPage} lines were produced`);
  const small = await readAll(csv([settled, settled, settled].map((l, i) => ({ ...l, 'Modification Reference': `M${i}` }))), { pageSize: 4 });
  assert.deepEqual(
    small.pages.map((p) => p.length),
    [4, 2],
  );
  assert.throws(() => readSettlementReport('', { pageSize: 1001 }), RangeError);
});

test('which REPORT_AVAILABLE reports are downloaded: Settlement details reports on Adyen hosts only', () => {
  const live = 'https://checkout-live.adyenpayments.com/checkout/v71';
  const file = 'settlement_detail_report_batch_12.csv';
  const at = (url: string, checkout = live, name = file) => reportVerdict(name, url, checkout);
  const adyen = `https://ca-live.adyen.com/reports/download/MerchantAccount/PagarGatewayECOM/${file}`;
  assert.deepEqual(at(adyen), { fetch: true, file, url: adyen });
  assert.equal(at(adyen.replace('ca-live', 'ca-test')).fetch, true);
  for (const [url, why] of [
    [adyen.replace('https:', 'http:'), 'http://ca-live.adyen.com is not an Adyen host'],
    [adyen.replace('ca-live.adyen.com', 'ca-live.adyen.com.evil.example'), 'https://ca-live.adyen.com.evil.example is not an Adyen host'],
    [adyen.replace('ca-live.adyen.com', 'notadyen.com'), 'https://notadyen.com is not an Adyen host'],
    [adyen.replace('https://', 'https://user:pw@'), 'the URL carries credentials'],
    [adyen.replace(file, 'settlement_detail_report_batch_13.csv'), 'the URL does not name the report'],
    ['http://127.0.0.1:8080/reports/download/x/settlement_detail_report_batch_12.csv', 'http://127.0.0.1:8080 is not an Adyen host'],
    ['not a url', 'no download URL'],
  ] as const)
    assert.deepEqual(at(url), { fetch: false, why }, url);
  assert.deepEqual(at(adyen, live, 'payments_accounting_report_2026_03_02.csv'), { fetch: false, why: 'not a Settlement details report' });
  // A test double on this machine, named by a loopback checkout URL, serves its reports on that host.
  const double = 'http://127.0.0.1:8080/reports/download/MerchantAccount/M/settlement_detail_report_batch_12.csv';
  assert.equal(at(double, 'http://127.0.0.1:9090/v71').fetch, true);
  assert.equal(at(double.replace('127.0.0.1', 'localhost'), 'http://127.0.0.1:9090/v71').fetch, false);
});
